"""Mask and position ops: masked_fill/masked_select/masked_scatter, take, nonzero, argwhere.

Masks are bool tensors (PyTorch refuses other dtypes here); results whose size
depends on how many elements are True get it from the data in eager mode and
as unknown (``None``) from JIT types.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes, broadcast_shapes_or_none
from . import api
from .indexing import _count_true, _mask, _np_dtype, _samples_float, dtype_title
from .registry import INDEXING, op


# ---------------------------------------------------------------------------------------------
def _check_mask(mask_dtype, op: str, what: str = "boolean masks"):
    if _np_dtype(mask_dtype) != np.bool_:
        raise RuntimeError(f"{op} only supports {what}, but got mask with dtype {_dt.cpp_name(_np_dtype(mask_dtype))}")


def _mask_meta(self, mask, op):
    shape = broadcast_shapes_or_none(tuple(self.shape), tuple(mask.shape))
    if shape is None:
        raise RuntimeError(
            f"{op}: The size of tensor a ({list(self.shape)}) must match the size of tensor b ({list(mask.shape)}) "
            "at a non-singleton dimension"
        )
    return shape


def _fill_value_check(value):
    if value.ndim != 0:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
        )


@op("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", kind=INDEXING,
    name_rule=_names.UNIFY, out=False, inplace=True,
    nondiff_args=("mask",), overlap_ok=("self", "value"), grad_fn="MaskedFillBackward1")
def masked_fill(self, mask, value):
    """``value`` where ``mask`` is True, ``self`` elsewhere (broadcasting ``self`` and ``mask``)."""
    _check_mask(mask.dtype, "masked_fill_")
    _fill_value_check(value)
    _mask_meta(self, mask, "masked_fill")
    return np.where(mask, value.astype(self.dtype), self)


@masked_fill.meta_rule
def _(self, mask, value):
    _check_mask(mask.dtype, "masked_fill_")
    _fill_value_check(value)
    return TensorMeta(_mask_meta(self, mask, "masked_fill"), self.dtype, self.device)


@masked_fill.grad
def _(grad, mask, needs_input_grad):
    g_self = grad.masked_fill(mask, 0) if needs_input_grad[0] else None
    g_value = grad.masked_select(mask).sum() if needs_input_grad[1] else None
    return g_self, g_value


@masked_fill.symbolic
def _(g, self, mask, value):
    if g.dtype(value) != g.dtype(self):
        value = g.op("Cast", value, to=g.dtype(self))
    return g.op("Where", mask, value, self)


@masked_fill.sample_inputs
def _(rng):
    yield (_samples_float(rng, 3, 4), _mask(rng, 3, 4), _samples_float(rng)), {}
    yield (_samples_float(rng, 3, 4), _mask(rng, 4), _samples_float(rng)), {}
    yield (_samples_float(rng, 3, 1), _mask(rng, 2, 3, 4), _samples_float(rng)), {}


@op("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", kind=INDEXING,
    name_rule=_names.UNIFY, out=False, inplace=True,
    nondiff_args=("mask",), overlap_ok=("self",))
def masked_fill_scalar(self, mask, value):
    """``value`` where ``mask`` is True, ``self`` elsewhere (broadcasting ``self`` and ``mask``)."""
    _check_mask(mask.dtype, "masked_fill_")
    _mask_meta(self, mask, "masked_fill")
    return np.where(mask, np.array(_dt.real_scalar(value, self.dtype)).astype(self.dtype), self)


@masked_fill_scalar.meta_rule
def _(self, mask, value):
    _check_mask(mask.dtype, "masked_fill_")
    return TensorMeta(_mask_meta(self, mask, "masked_fill"), self.dtype, self.device)


@masked_fill_scalar.grad
def _(grad, mask):
    return grad.masked_fill(mask, 0)


@masked_fill_scalar.symbolic
def _(g, self, mask, value):
    return g.op("Where", mask, g.constant(value, g.dtype(self)), self)


@masked_fill_scalar.sample_inputs
def _(rng):
    yield (_samples_float(rng, 3, 4), _mask(rng, 3, 4), 2.5), {}
    yield (_samples_float(rng, 3, 4).T, _mask(rng, 4, 3), -1), {}
    yield (rng.integers(0, 9, (2, 3)), _mask(rng, 3), 1.5), {}
    yield (_samples_float(rng), np.array(True), 0.0), {}
    yield (_samples_float(rng, 0, 3), _mask(rng, 0, 3), 1.0), {}


@op("masked_select(Tensor self, Tensor mask) -> Tensor", kind=INDEXING, name_rule=_names.check_unify,
    nondiff_args=("mask",))
def masked_select(self, mask):
    """The elements of ``self`` where ``mask`` is True, as a 1-D tensor (both broadcast first)."""
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _mask_meta(self, mask, "masked_select")
    return np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)]


@masked_select.meta_rule
def _(self, mask):
    if _np_dtype(mask.dtype) != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _mask_meta(self, mask, "masked_select")
    n = _count_true(mask)
    if n is not None and shape != tuple(mask.shape):
        n = int(np.count_nonzero(np.broadcast_to(mask._data, shape)))
    return TensorMeta((n,), self.dtype, self.device)


@masked_select.grad
def _(grad, self_shape, mask):
    shape = broadcast_shapes(self_shape, tuple(mask.shape))
    return grad.new_zeros(shape).masked_scatter(mask, grad)


@masked_select.sample_inputs
def _(rng):
    yield (_samples_float(rng, 3, 4), _mask(rng, 3, 4)), {}
    yield (_samples_float(rng, 3, 1), _mask(rng, 3, 4)), {}
    yield (_samples_float(rng, 4).T, _mask(rng, 2, 4)), {}
    yield (_samples_float(rng), np.array(True)), {}


@op("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", kind=INDEXING, out=False, inplace=True,
    nondiff_args=("mask",))
def masked_scatter(self, mask, source):
    """``self`` with the positions where ``mask`` is True filled, in order, from ``source``'s elements."""
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {_dt.cpp_name(_np_dtype(mask.dtype))}")
    if source.dtype != self.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got {dtype_title(self.dtype)} and "
            f"{dtype_title(source.dtype)}"
        )
    shape = _mask_meta(self, mask, "masked_scatter")
    out = np.array(np.broadcast_to(self, shape))
    m = np.broadcast_to(mask, shape)
    n = int(np.count_nonzero(m))
    if source.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = source.reshape(-1)[:n]
    return out


@masked_scatter.meta_rule
def _(self, mask, source):
    _check_mask(mask.dtype, "masked_scatter_")
    return TensorMeta(_mask_meta(self, mask, "masked_scatter"), self.dtype, self.device)


@masked_scatter.grad
def _(grad, mask, source_shape, needs_input_grad):
    g_self = grad.masked_fill(mask, 0) if needs_input_grad[0] else None
    g_source = None
    if needs_input_grad[1]:
        picked = grad.masked_select(mask)
        numel = int(np.prod(source_shape, dtype=np.int64))
        g_source = api.slice_scatter(grad.new_zeros((numel,)), picked, 0, 0, picked.shape[0]).reshape(source_shape)
    return g_self, g_source


@masked_scatter.sample_inputs
def _(rng):
    yield (_samples_float(rng, 3, 4), _mask(rng, 3, 4), _samples_float(rng, 3, 5)), {}
    yield (_samples_float(rng, 3, 1), _mask(rng, 4), _samples_float(rng, 12)), {}
    yield (_samples_float(rng, 2, 3).T, np.zeros((3, 2), bool), _samples_float(rng, 2)), {}


@op("take(Tensor self, Tensor index) -> Tensor", kind=INDEXING, nondiff_args=("index",))
def take(self, index):
    """Elements of ``self`` viewed as 1-D at ``index`` (negative indices count from the end)."""
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {dtype_title(index.dtype)}")
    n = self.size
    if index.size and (index.max() >= n or index.min() < -n):
        bad = index[(index >= n) | (index < -n)].flat[0]
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} elements.")
    return self.reshape(-1)[index]


@take.meta_rule
def _(self, index):
    if _np_dtype(index.dtype) != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {dtype_title(index.dtype)}")
    return TensorMeta(index.shape, self.dtype, self.device)


@take.grad
def _(grad, self_shape, index):
    numel = int(np.prod(self_shape, dtype=np.int64))
    flat = api.index_put(grad.new_zeros((numel,)), [index.reshape(-1)], grad.reshape(-1), True)
    return flat.reshape(self_shape)


@take.sample_inputs
def _(rng):
    yield (_samples_float(rng, 3, 4), np.array([[0, 11], [5, 5]])), {}
    yield (_samples_float(rng, 3, 4).T, np.array([-1, 2, -12])), {}
    yield (_samples_float(rng), np.array(0)), {}
    yield (_samples_float(rng, 3), np.zeros((0,), np.int64)), {}


# ---------------------------------------------------------------------------------------------
# Positions of nonzero elements
# ---------------------------------------------------------------------------------------------
def _nonzero(self):
    if self.ndim == 0:
        return np.zeros((1 if self.item() else 0, 0), np.int64)
    return np.stack(np.nonzero(self), axis=1).astype(np.int64, copy=False)


@op("nonzero(Tensor self) -> Tensor", kind=INDEXING, method=False, function=False, differentiable=False)
def nonzero(self):
    """Coordinates of the nonzero elements, one row each (``Tensor.nonzero`` adds ``as_tuple``)."""
    return _nonzero(self)


@nonzero.meta_rule
def _(self):
    n = _count_true(self)
    return TensorMeta((n, len(self.shape)), _dt.int64, self.device)


@nonzero.sample_inputs
def _(rng):
    yield (rng.integers(0, 2, (3, 4)).astype(np.float64),), {}
    yield (_mask(rng, 2, 3, 2),), {}
    yield (np.array(2.0),), {}
    yield (np.zeros((0, 3)),), {}


@op("nonzero_numpy(Tensor self) -> Tensor[]", kind=INDEXING, method=False, function=False, composite=True,
    differentiable=False)
def nonzero_numpy(self):
    """The coordinates of the nonzero elements, one 1-D tensor per dim (a 0-dim tensor counts as 1-D):
    ``nonzero(as_tuple=True)`` and one-argument ``where``, as in NumPy."""
    x = self if self.ndim else self.reshape(1)
    coords = api.nonzero(x)
    return tuple(api.select(coords, 1, d) for d in range(x.ndim))


@nonzero_numpy.meta_rule
def _(self):
    n = _count_true(self)
    return [TensorMeta((n,), _dt.int64, self.device) for _ in range(max(len(self.shape), 1))]


@nonzero_numpy.sample_inputs
def _(rng):
    yield from nonzero.samples(rng)


@op("argwhere(Tensor self) -> Tensor", kind=INDEXING, out=False, differentiable=False)
def argwhere(self):
    """Coordinates of the nonzero elements, one row each (``nonzero`` under NumPy's name)."""
    return _nonzero(self)


argwhere.meta_rule(nonzero.meta)
argwhere.sample_inputs(nonzero.samples)
