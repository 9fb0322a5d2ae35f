"""Lazy conjugation: what a kernel sees of a tensor whose conjugation bit is set.

``z.conj()`` is a view of ``z``'s memory with a bit set (``is_conj()``), as in PyTorch: writing through it
reaches ``z`` conjugated, and no values are computed until an op reads them. Kernels know nothing of the
bit, so the dispatcher resolves it at their boundary: an op gets the conjugated values, except a view op,
which gets the memory itself so that its result stays a view; the bit then carries over to the view. An op
may set ``conj_rule`` (an ``OpDef`` field) to refuse conjugated input with PyTorch's message (``view_as_real``)
or to take the conjugated values even though it is a view (``imag``: ``"resolve"``).

The check costs one slot read per tensor argument (``_extra`` is ``None`` for almost every tensor), so calls
on real tensors pay nothing measurable for it::

    z = toolkit.tensor([1 + 2j])
    y = z.conj()        # shares z's memory
    y[0] = 3j           # z is now tensor([0.-3.j])
"""

from __future__ import annotations

import numpy as np

from ..ops import registry as R
from ..ops.registry import OpDef


def is_conj(v) -> bool:
    """Whether tensor ``v`` has its conjugation bit set."""
    extra = v._extra
    return extra is not None and extra.get("conj", False)


def conj_input(op: OpDef, v) -> np.ndarray:
    """The array ``op``'s kernel gets for a conjugated tensor ``v``."""
    rule = op.conj_rule
    if rule is None and op.kind is R.VIEW:
        return v._data  # the view keeps the bit (``keep_conj``)
    if rule is not None and rule != "resolve":
        raise RuntimeError(rule)
    return np.conjugate(v._data)


def keeps_conj(op: OpDef, src, a: np.ndarray) -> bool:
    """Whether the view ``a`` that ``op`` made of ``src`` carries ``src``'s conjugation bit."""
    return a.dtype.kind == "c" and is_conj(src) and op.conj_rule is None


def write_conj(dst: np.ndarray, out: np.ndarray) -> None:
    """Write values into the memory of a conjugated tensor: the memory holds their conjugates."""
    np.copyto(dst, np.conjugate(out), casting="unsafe")
