"""The rest of ``torch.jit``'s public names: ``script_if_tracing``, ``interface``, ``Error``, ``export_opnames``,
the fusion switches (``set_fusion_strategy``, ``strict_fusion``, ``enable_onednn_fusion``).

Code written for TorchScript calls these; each does what toolkit's JIT can::

    @toolkit.jit.script_if_tracing
    def pad_to(x, n: int): ...              # compiled when first called under toolkit.jit.trace
    toolkit.jit.export_opnames(toolkit.jit.script(model))     # ['aten::linear', 'aten::relu', ...]
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from ..nn.modules.module import Module
from .frontend.modes import is_scripting, is_tracing
from .frontend.script import ScriptModule, script
from .passes.dce import eliminate_dead_code

__all__ = ["Error", "enable_onednn_fusion", "export_opnames", "interface", "onednn_fusion_enabled",
           "script_if_tracing", "set_fusion_strategy", "strict_fusion"]

_T = TypeVar("_T")


class Error(Exception):
    """``torch.jit.Error``: the exception PyTorch's interpreter raises for a failed ``raise``/``assert`` in scripted
    code. toolkit's interpreter raises the scripted exception itself (``ValueError``, ``AssertionError``...) with
    the node and source line appended, so nothing in toolkit raises this; it exists for ``except`` clauses."""


def script_if_tracing(fn: Callable) -> Callable:
    """``fn`` unchanged when called eagerly; compiled with ``toolkit.jit.script`` when first called while tracing,
    so its control flow is kept instead of being traced through one path."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not is_tracing():
            return fn(*args, **kwargs)
        return script(wrapper.__original_fn)(*args, **kwargs)

    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


def interface(obj: _T) -> _T:
    """Mark a class as a TorchScript interface (the methods a module attribute must have); returns the class.

    toolkit's script compiler types module attributes by their Python class, so the mark is recorded
    (``__torch_script_interface__``) with PyTorch's checks and nothing more is needed.
    """
    warnings.warn("`toolkit.jit.interface` is deprecated. Please use `toolkit.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    is_module_interface = issubclass(obj, Module) and len(obj.__mro__) == 3
    if not is_module_interface and len(obj.__mro__) > 2:
        raise RuntimeError("TorchScript interface does not support inheritance yet. Please directly inherit from "
                           "'object' or 'nn.Module'.")
    obj.__torch_script_interface__ = f"__torch__.{obj.__module__}.{obj.__qualname__}"
    return obj


def export_opnames(m) -> list[str]:
    """The sorted names of the registry ops a script module's methods call, as ``aten::name[.overload]``.

    Read from the methods' graphs after dead code elimination, so ops whose results nobody uses are not listed.
    Overload names are the registry's (``aten::view.dtype``); ops toolkit defines once print without one where
    PyTorch splits them (``aten::add`` where PyTorch says ``aten::add.Tensor``).
    """
    if not isinstance(m, ScriptModule):
        raise AttributeError(f"'{type(m).__name__}' object has no attribute '_c'")
    graphs = [m.graph, *(method.graph for name, method in m.__dict__.get("_methods", {}).items() if name != "forward")]
    names: set[str] = set()
    for graph in graphs:
        pending = list(eliminate_dead_code(graph.copy()).nodes())
        while pending:
            node = pending.pop()
            pending.extend(n for b in node.blocks for n in b.nodes)
            if node.op is not None and node.kind.startswith("aten::"):
                names.add(node.kind + (f".{node.op.overload}" if node.op.overload else ""))
    return sorted(names)


# (kind, depth) pairs: how many times the fuser specializes to static shapes, then to dynamic ones.
_fusion_strategy: list[tuple[str, int]] = [("STATIC", 2), ("DYNAMIC", 10)]


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Record how many static-shape, then dynamic-shape, specializations the fuser may make; returns the previous.

    toolkit's executor specializes on the shapes it profiles and its fuser reads nothing of this setting yet: it is
    kept (and validated) so code tuning PyTorch's fuser runs and can read it back.
    """
    global _fusion_strategy
    warnings.warn("`toolkit.jit.set_fusion_strategy` is deprecated. Please use `toolkit.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    if isinstance(strategy, (str, bytes)) or not all(
            isinstance(s, (tuple, list)) and len(s) == 2 and isinstance(s[0], str) and isinstance(s[1], int)
            for s in strategy):
        raise TypeError("_jit_set_fusion_strategy(): incompatible function arguments. The following argument types "
                        "are supported:\n    1. (arg0: collections.abc.Sequence[tuple[str, typing.SupportsInt | "
                        f"typing.SupportsIndex]]) -> list[tuple[str, int]]\n\nInvoked with: {strategy!r}")
    for kind, _ in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
    previous, _fusion_strategy = _fusion_strategy, [(kind, int(depth)) for kind, depth in strategy]
    return previous


class strict_fusion:  # noqa: N801  (torch.jit's name)
    """In scripted code, a block whose nodes must all fuse; eagerly a no-op that warns, as PyTorch's does."""

    def __init__(self) -> None:
        if not is_scripting():
            warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_onednn_fusion = False


def enable_onednn_fusion(enabled: bool) -> None:
    """Record whether oneDNN graph fusion is wanted; toolkit fuses with numba, so nothing reads it but the getter."""
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _onednn_fusion
