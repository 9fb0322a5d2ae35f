"""Copies and conversions: ``clone``, ``contiguous``, dtype/device changes (``_to_copy``), ``copy_``."""

from __future__ import annotations

import numpy as np

from .registry import CONVERSION, INPLACE, op


@op("_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False, "
    "bool copy=False) -> Tensor", kind=CONVERSION, method=False, function=False)
def _to_copy(self, dtype=None, device=None, non_blocking=False, copy=False):
    """A copy with another dtype and/or device; ``Tensor.to`` calls it only when something changes."""
    if dtype is None:
        return self.copy()
    if self.dtype.kind == "f" and dtype.np.kind in "iu":
        with np.errstate(invalid="ignore"):
            return self.astype(dtype.np)
    return self.astype(dtype.np)


@_to_copy.grad
def _(grad, self_dtype):
    return grad.to(self_dtype)


@op("clone(Tensor self, *, str? memory_format=None) -> Tensor", kind=CONVERSION)
def clone(self, memory_format=None):
    """A copy with its own storage (contiguous), recorded by autograd."""
    return np.array(self, copy=True, order="K" if memory_format == "preserve_format" else "C")


@clone.grad
def _(grad):
    return grad


@op("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", kind=INPLACE, function=False)
def copy_(self, src, non_blocking=False):
    """Copy ``src`` into ``self`` (broadcasting ``src``, casting its dtype)."""
    return np.broadcast_to(src, self.shape) if src.shape != self.shape else src


@copy_.grad
def _(grad):
    from . import api

    return api.zeros_like(grad), grad
