"""Copies and conversions: ``clone``, ``contiguous``, dtype/device changes (``_to_copy``), ``copy_``."""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import api
from .factory import empty_in_format
from .registry import CONVERSION, INPLACE, op


@op("_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False, "
    "bool copy=False) -> Tensor", kind=CONVERSION, method=False, function=False)
def _to_copy(self, dtype=None, device=None, non_blocking=False, copy=False):
    """A copy with another dtype and/or device; ``Tensor.to`` calls it only when something changes."""
    if dtype is None:
        return self.copy()
    if self.dtype.kind == "c" and dtype.np.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        return self.real.astype(dtype.np)
    if self.dtype.kind == "f" and dtype.np.kind in "iu":
        with np.errstate(invalid="ignore"):
            return self.astype(dtype.np)
    return self.astype(dtype.np)


@_to_copy.grad
def _(grad, self_dtype):
    if grad.is_complex() and not self_dtype.is_complex:
        grad = api.real(grad)  # a real input's gradient is the real part, taken without the cast's warning
    return grad.to(self_dtype)


@op("clone(Tensor self, *, str? memory_format=None) -> Tensor", kind=CONVERSION, out=False)
def clone(self, memory_format=None):
    """A copy with its own storage (contiguous), recorded by autograd; ``memory_format=channels_last`` (or
    ``channels_last_3d``) lays it out NHWC (NDHWC) as PyTorch does."""
    if memory_format in (None, "contiguous_format", "preserve_format"):
        return np.array(self, copy=True, order="K" if memory_format == "preserve_format" else "C")
    out = empty_in_format(self, self.dtype, memory_format)
    out[...] = self
    return out


@clone.grad
def _(grad):
    return grad


@clone.symbolic
def _(g, self, memory_format=None):
    return g.op("Identity", self)  # ONNX values have no layout to copy into


@op("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", kind=INPLACE,
    name_rule=_names.UNIFY, function=False)
def copy_(self, src, non_blocking=False):
    """Copy ``src`` into ``self`` (broadcasting ``src``, casting its dtype)."""
    return np.broadcast_to(src, self.shape) if src.shape != self.shape else src


@copy_.grad
def _(grad):
    return api.zeros_like(grad), grad


@_to_copy.sample_inputs
def _(rng):
    yield (rng.uniform(-3, 3, (3, 4)),), {"dtype": _dt.float64}
    yield (rng.uniform(-3, 3, (4, 3)).T,), {"dtype": _dt.float64}
    yield (rng.uniform(-3, 3, (2, 3)),), {"dtype": _dt.int32}
    yield (np.array(rng.uniform(-1, 1)),), {}


@clone.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (3, 4)),), {}
    yield (rng.uniform(-1, 1, (4, 3)).T,), {}
    yield (np.array(1.5),), {}
    yield (rng.uniform(-1, 1, (0, 2)),), {}


@_to_copy.meta_rule
def _(self, dtype=None, device=None, non_blocking=False, copy=False):
    return TensorMeta(self.shape, dtype or self.dtype, device or self.device)


@clone.meta_rule
def _(self, memory_format=None):
    return TensorMeta(self.shape, self.dtype, self.device)


@copy_.meta_rule
def _(self, src, non_blocking=False):
    broadcast_shapes(src.shape, self.shape, op="copy_")
    if broadcast_shapes(src.shape, self.shape) != tuple(self.shape):
        raise RuntimeError(f"copy_: the size of src {tuple(src.shape)} cannot be broadcast to self {tuple(self.shape)}")
    return TensorMeta(self.shape, self.dtype, self.device)


@op("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", kind=INPLACE, name_rule=_names.KEEP,
    function=False, overlap_ok=("self",))
def fill_(self, value, out=None):
    """Fill ``self`` with ``value`` (cast to ``self``'s dtype; written straight into ``out``, self's own array,
    where dispatch passes it)."""
    v = _dt.checked_scalar(value, self.dtype)
    if out is None:
        out = np.empty_like(self)
    _fill(out, v)
    return out


# From here (in elements) zeros are written as bytes: numpy's byte fill runs at memset's speed, its fill of a
# float32 zero at half of it (6.2 us against 2.9 us for 100k elements; the same at 8k).
ZERO_BYTES_MIN = 1 << 13


def _fill(out: np.ndarray, v) -> None:
    """``out.fill(v)``; a zero whose bits are all zero (no -0.0 in it) into a large contiguous ``out`` as bytes."""
    if (out.size >= ZERO_BYTES_MIN and out.flags.c_contiguous and v == 0 and not np.signbit(np.real(v))
            and not np.signbit(np.imag(v))):
        out.reshape(-1).view(np.uint8).fill(0)
    else:
        out.fill(v)


@fill_.grad
def _(grad):
    return api.zeros_like(grad)


@op("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", kind=INPLACE, name_rule=_names.KEEP,
    function=False,
    overlap_ok=("self", "value"))
def fill_tensor_(self, value):
    """Fill ``self`` with the value of a 0-d tensor."""
    if value.ndim != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
        )
    out = np.empty_like(self)
    out.fill(value[()])
    return out


@fill_tensor_.grad
def _(grad):
    return api.zeros_like(grad), grad.sum()


@op("zero_(Tensor(a!) self) -> Tensor(a!)", kind=INPLACE, name_rule=_names.KEEP, function=False,
    overlap_ok=("self",))
def zero_(self, out=None):
    """Fill ``self`` with zeros (written straight into ``out``, self's own array, where dispatch passes it)."""
    if out is None:
        return np.zeros_like(self)
    _fill(out, 0)
    return out


@zero_.grad
def _(grad):
    return api.zeros_like(grad)


@_to_copy.symbolic
def _(g, self, dtype=None, device=None, non_blocking=False, copy=False):
    return self if dtype is None or dtype is g.dtype(self) else g.op("Cast", self, to=dtype)
