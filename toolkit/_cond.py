"""``toolkit.cond``: PyTorch's structured if, run eagerly.

``cond(pred, true_fn, false_fn, operands)`` calls ``true_fn(*operands)`` when ``pred`` holds, else
``false_fn(*operands)``. PyTorch keeps both branches only when it compiles or exports; toolkit's compilers
(``toolkit.jit.script``) take a plain ``if`` instead, so eagerly this is the whole story, with PyTorch's checks::

    toolkit.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .tensor import Tensor

__all__ = ["cond"]


def cond(pred: bool | int | float | Tensor, true_fn: Callable, false_fn: Callable, operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; ``pred`` a Python bool or a one-element tensor."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not _tensor_leaves_only(operands):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


def _tensor_leaves_only(obj) -> bool:
    """Whether every leaf of nested tuples, lists and dict values is a tensor."""
    if isinstance(obj, (tuple, list)):
        return all(_tensor_leaves_only(o) for o in obj)
    if isinstance(obj, dict):
        return all(_tensor_leaves_only(o) for o in obj.values())
    return isinstance(obj, Tensor)
