"""Reductions over dims with ``dim``/``keepdim``/``dtype`` as in PyTorch."""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dims
from ._meta_rules import reduced_shape
from .registry import REDUCTION, op


def _axes(dim, ndim: int, name: str):
    if dim is None or dim == ():
        return None
    return wrap_dims(dim, max(ndim, 1), name) if ndim else None


def _sum_dtype(a: np.ndarray, dtype):
    if dtype is not None:
        return dtype.np
    if a.dtype.kind in "biu":
        return np.int64
    return a.dtype


@op("sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION)
def sum(self, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` (all dims by default); integers accumulate in int64 as in PyTorch."""
    return np.sum(self, axis=_axes(dim, self.ndim, "sum"), keepdims=keepdim, dtype=_sum_dtype(self, dtype))


@sum.meta_rule
def _(self, dim=None, keepdim=False, dtype=None):
    d = dtype or (_dt.int64 if not self.dtype.is_floating_point else self.dtype)
    return TensorMeta(reduced_shape(tuple(self.shape), dim, keepdim, "sum"), d, self.device)


@sum.grad
def _(grad, self_shape, dim, keepdim):
    return _expand_back(grad, self_shape, dim, keepdim)


def _expand_back(grad, shape, dim, keepdim):
    """Broadcast a reduced gradient back to the input's shape."""
    if not keepdim and dim not in (None, ()) and len(shape):
        for d in sorted(wrap_dims(dim, len(shape))):
            grad = grad.unsqueeze(d)
    return grad.expand(shape)


@op("sum_to_size(Tensor self, int[] size) -> Tensor", kind=REDUCTION, function=False)
def sum_to_size(self, size):
    """Sum broadcast dims away so the result has ``size`` (the adjoint of ``expand``)."""
    size = tuple(size)
    lead = self.ndim - len(size)
    if lead < 0:
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(self.shape)}")
    axes = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and self.shape[lead + i] != 1:
            axes.append(lead + i)
        elif s != self.shape[lead + i]:
            raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(self.shape)}")
    r = np.sum(self, axis=tuple(axes), keepdims=True) if axes else self
    return r.reshape(size)


@sum_to_size.grad
def _(grad, self_shape):
    return grad.expand(self_shape)


@op("mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION)
def mean(self, dim=None, keepdim=False, dtype=None):
    """Arithmetic mean; like PyTorch it refuses integer inputs unless a float ``dtype`` is given."""
    if dtype is None and self.dtype.kind not in "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {_dt.from_numpy_dtype(self.dtype).name.capitalize()}"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        out_dtype = dtype.np if dtype is not None else self.dtype
        acc = np.float32 if out_dtype == np.float16 else out_dtype
        return np.mean(self, axis=_axes(dim, self.ndim, "mean"), keepdims=keepdim, dtype=acc).astype(out_dtype)


@mean.grad
def _(grad, self_shape, dim, keepdim):
    shape = self_shape
    n = 1
    for d in (range(len(shape)) if dim in (None, ()) else wrap_dims(dim, max(len(shape), 1))):
        n *= shape[d] if shape else 1
    return _expand_back(grad, shape, dim, keepdim) / n
