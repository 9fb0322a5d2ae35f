"""``toolkit.backends.opt_einsum``: whether ``einsum`` may use the ``opt_einsum`` package to order its
contractions, and with which strategy (``"auto"``, ``"greedy"`` or ``"optimal"``), as in PyTorch.

``is_available()`` says whether the package is installed; ``enabled`` and
``strategy`` start from it and are set and read like PyTorch's.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from . import flags_set

_STRATEGIES = ("auto", "greedy", "optimal")


def is_available() -> bool:
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum():
    """The ``opt_einsum`` package, or None where it is not installed."""
    if not is_available():
        return None
    import opt_einsum  # optional: a package toolkit does not require

    return opt_einsum


def flags(enabled: bool | None = None, strategy: str | None = None):
    """Set ``enabled`` and ``strategy`` for a ``with`` block."""
    return flags_set(sys.modules[__name__], enabled=enabled, strategy=strategy)


class _OptEinsumModule(ModuleType):
    """Checks what is assigned to ``strategy``, as PyTorch does."""

    def __setattr__(self, name: str, value) -> None:
        if name == "strategy" and is_available():
            if not isinstance(value, str) or value not in _STRATEGIES:
                raise ValueError(f"opt_einsum.strategy must be one of the following: {', '.join(_STRATEGIES)}")
        super().__setattr__(name, value)


enabled = is_available()
strategy = "auto" if enabled else None
sys.modules[__name__].__class__ = _OptEinsumModule
