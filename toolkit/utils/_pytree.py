"""The tensors inside nested Python containers, in order: what autograd plumbing needs from outputs.

Traced graphs, differentiable plans and DistributedDataParallel all return
whatever structure the user's ``forward`` did (a tensor, tuples, lists,
dicts, NamedTuples) and need the tensors in it, and sometimes the same
structure rebuilt around new tensors.
"""

from __future__ import annotations

from ..tensor import Tensor


def tree_tensors(obj, out: list | None = None) -> list:
    """Every Tensor in ``obj`` (tensors, tuples, lists, dict values), depth first, in order."""
    if out is None:
        out = []
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            tree_tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            tree_tensors(o, out)
    return out


def tree_rebuild(obj, tensors):
    """``obj`` with its tensors replaced, in ``tree_tensors`` order, by those of the iterator ``tensors``."""
    if isinstance(obj, Tensor):
        return next(tensors)
    if isinstance(obj, tuple):
        items = [tree_rebuild(e, tensors) for e in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, list):
        return [tree_rebuild(e, tensors) for e in obj]
    if isinstance(obj, dict):
        return {k: tree_rebuild(e, tensors) for k, e in obj.items()}
    return obj
