"""Fake quantization: round a float tensor onto an affine integer grid and back, staying in float.

``fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)`` is
``(clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``, the numbers a
quantized model will see, while training keeps float tensors. Each public op is a composition of a
``*_cachemask`` op that also returns the mask of the elements whose rounded value fell inside
``[quant_min, quant_max]``: the straight-through gradient is ``grad * mask`` (PyTorch's layout, so autograd
records ``FakeQuantizePerTensorAffineCachemaskBackward0`` as it does).

The kernels reproduce ATen's CPU arithmetic bit for bit, types included:
- per tensor: ``inv_scale = 1.0f / float(scale)``; ``x * inv_scale`` in the input's precision (float for
  half, bfloat16 and float32, double for double), ``nearbyint`` (half to even), ``+ zero_point`` in that
  precision; the output ``(q - zero_point) * float(scale)`` is a float32 product even for double inputs.
- per channel: ``round(x * inv_scale + zero_point)`` in the input's precision (ATen's source says
  ``std::round``, but its CPU build rounds halves to even, as measured) and the output
  ``(q - zero_point) * scale`` in double, stored back in the input dtype.

Example::

    >>> toolkit.fake_quantize_per_tensor_affine(toolkit.tensor([0.26, 3.0]), 0.1, 0, 0, 20)
    tensor([0.3000, 2.0000])
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, op

_RANGE_ORDER = "`quant_min` should be less than or         equal to `quant_max`."
_ZERO_POINT_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."


def _compute_dtype(x: np.ndarray) -> np.dtype:
    """The precision ATen's loop computes in: double for double inputs, float for every narrower float."""
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)


def _check_float(x_dtype, kernel: str) -> None:
    dt = x_dtype if isinstance(x_dtype, _dt.dtype) else _dt.from_numpy_dtype(np.dtype(x_dtype))
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dt.title(dt)}\'')


def _check_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError(_RANGE_ORDER)


def _per_tensor(x: np.ndarray, scale: float, zero_point: int, quant_min: int, quant_max: int,
                enabled: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """ATen's ``_fake_quantize_tensor_helper``: ``(output, mask)``."""
    _check_float(x.dtype, "fake_quantize_tensor_cachemask_kernel_type_handling")
    if not enabled:
        return x.copy(), np.ones(x.shape, dtype=bool)
    ct = _compute_dtype(x)
    sc = np.float32(scale)
    with np.errstate(all="ignore"):
        inv_scale = np.float32(1.0) / sc
        qval_f = ct.type(zero_point) + np.rint(x.astype(ct) * ct.type(inv_scale))
        clamped = np.fmin(np.fmax(qval_f.astype(np.float64), float(quant_min)), float(quant_max))
        q = clamped.astype(np.int64)
        out = (q - np.int64(zero_point)).astype(np.float32) * sc
    mask = (ct.type(quant_min) <= qval_f) & (qval_f <= ct.type(quant_max))
    return out.astype(x.dtype), mask


def _per_channel(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int, quant_min: int,
                 quant_max: int) -> tuple[np.ndarray, np.ndarray]:
    """ATen's ``_fake_quant_per_channel_cachemask_cpu_helper``: ``(output, mask)``."""
    ct = _compute_dtype(x)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    sc = scale.astype(np.float32).reshape(shape)
    zp = zero_point.reshape(shape)
    with np.errstate(all="ignore"):
        inv_scale = (np.float32(1.0) / sc).astype(ct)
        qval = np.rint(x.astype(ct) * inv_scale + zp.astype(ct))
        bounded = np.fmin(float(quant_max), np.fmax(float(quant_min), qval.astype(np.float64)))
        # ``+ 0.0``: a zero comes out as +0.0 (ATen's build never yields -0.0 here)
        out = (bounded - zp.astype(np.float64)) * sc.astype(np.float64) + 0.0
    mask = (ct.type(quant_min) <= qval) & (qval <= ct.type(quant_max))
    return out.astype(x.dtype), mask


def _outputs(self) -> tuple[TensorMeta, TensorMeta]:
    return TensorMeta(tuple(self.shape), self.dtype, self.device), TensorMeta(tuple(self.shape), _dt.bool,
                                                                                self.device)


def _straight_through(grad, result):
    """PyTorch's ``fake_quantize_*_cachemask_backward``: the gradient passes where the mask is set."""
    return grad[0] * result[1]


# ----------------------------------------------------------------------------- per tensor
@op("fake_quantize_per_tensor_affine_cachemask(Tensor self, float scale, int zero_point, int quant_min, "
    "int quant_max) -> (Tensor output, Tensor mask)", kind=NN, method=False, function=False, out=False)
def fake_quantize_per_tensor_affine_cachemask(self, scale, zero_point, quant_min, quant_max):
    """Fake-quantized ``self`` and the mask of elements whose rounded value lies in ``[quant_min, quant_max]``."""
    _check_range(quant_min, quant_max)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError(_ZERO_POINT_RANGE)
    return _per_tensor(self, scale, zero_point, quant_min, quant_max)


@fake_quantize_per_tensor_affine_cachemask.meta_rule
def _(self, scale, zero_point, quant_min, quant_max):
    return _outputs(self)


fake_quantize_per_tensor_affine_cachemask.grad(_straight_through)


def _item(a: np.ndarray, cast):
    if a.size != 1:
        raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
    return cast(a.reshape(-1)[0])


@op("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, "
    "Tensor fake_quant_enabled, int quant_min, int quant_max) -> (Tensor output, Tensor mask)", kind=NN,
    method=False, out=False, nondiff_args=("scale", "zero_point", "fake_quant_enabled"),
    refuse_grad_args=("scale", "zero_point", "fake_quant_enabled"))
def _fake_quantize_per_tensor_affine_cachemask_tensor_qparams(self, scale, zero_point, fake_quant_enabled,
                                                              quant_min, quant_max):
    """The per-tensor fake quantization with its parameters in tensors (no zero-point range check, as ATen);
    ``fake_quant_enabled == 0`` passes ``self`` through with a full mask."""
    _check_range(quant_min, quant_max)
    enabled = _item(fake_quant_enabled, int)
    return _per_tensor(self, _item(scale, float), _item(zero_point, lambda v: int(np.trunc(v))), quant_min,
                       quant_max, bool(enabled))


@_fake_quantize_per_tensor_affine_cachemask_tensor_qparams.meta_rule
def _(self, scale, zero_point, fake_quant_enabled, quant_min, quant_max):
    return _outputs(self)


_fake_quantize_per_tensor_affine_cachemask_tensor_qparams.grad(_straight_through)


@op("fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, int quant_max) "
    "-> Tensor", kind=NN, method=False, composite=True)
def fake_quantize_per_tensor_affine(self, scale, zero_point, quant_min, quant_max):
    """``(clamp(round(self / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``, with the
    straight-through gradient (zero where the rounded value falls outside the range)."""
    return api.fake_quantize_per_tensor_affine_cachemask(self, scale, zero_point, quant_min, quant_max)[0]


@op("fake_quantize_per_tensor_affine.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, int quant_min, "
    "int quant_max) -> Tensor", kind=NN, method=False, composite=True, nondiff_args=("scale", "zero_point"))
def fake_quantize_per_tensor_affine_tensor_qparams(self, scale, zero_point, quant_min, quant_max):
    """:func:`fake_quantize_per_tensor_affine` with one-element ``scale`` and ``zero_point`` tensors."""
    enabled = api.ones(1, dtype=_dt.int64, device=self.device)
    return api._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(self, scale, zero_point, enabled,
                                                                         quant_min, quant_max)[0]


def _same(self, *args):
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


fake_quantize_per_tensor_affine.meta_rule(_same)
fake_quantize_per_tensor_affine_tensor_qparams.meta_rule(_same)


# Eager autograd records the cachemask op inside each composition; these rules give the composition as one node
# (the JIT's symbolic autodiff) the same straight-through gradient.
@fake_quantize_per_tensor_affine.grad
def _(grad, self, scale, zero_point, quant_min, quant_max):
    return grad * api.fake_quantize_per_tensor_affine_cachemask(self.detach(), scale, zero_point, quant_min,
                                                                quant_max)[1]


@fake_quantize_per_tensor_affine_tensor_qparams.grad
def _(grad, self, scale, zero_point, quant_min, quant_max):
    enabled = api.ones(1, dtype=_dt.int64, device=self.device)
    return grad * api._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
        self.detach(), scale, zero_point, enabled, quant_min, quant_max)[1]


# ----------------------------------------------------------------------------- per channel
def _check_per_channel(self, scale, zero_point, axis: int, quant_min: int, quant_max: int) -> None:
    """ATen's checks, in its order; ``self``, ``scale`` and ``zero_point`` carry ``dtype`` and ``shape``."""
    if scale.dtype is not _dt.float32:  # (toolkit has no bfloat16)
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_dt.title(scale.dtype)}")
    if zero_point.dtype not in (_dt.int32, _dt.float32, _dt.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {_dt.title(zero_point.dtype)}")
    if len(scale.shape) != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if len(zero_point.shape) != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.shape[0] != zero_point.shape[0]:
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    ndim = len(self.shape)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
    if not -ndim <= axis < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {axis})")
    if scale.shape[0] != self.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    _check_range(quant_min, quant_max)


def _dtype_of(a: np.ndarray):
    return _dt.from_numpy_dtype(a.dtype)


@op("fake_quantize_per_channel_affine_cachemask(Tensor self, Tensor scale, Tensor zero_point, int axis, "
    "int quant_min, int quant_max) -> (Tensor output, Tensor mask)", kind=NN, method=False, function=False,
    out=False,
    nondiff_args=("scale", "zero_point"), refuse_grad_args=("scale", "zero_point"))
def fake_quantize_per_channel_affine_cachemask(self, scale, zero_point, axis, quant_min, quant_max):
    """Per-channel fake quantization along ``axis`` (one scale and zero point per slice) and its mask."""
    _check_per_channel(_Arr(self), _Arr(scale), _Arr(zero_point), axis, quant_min, quant_max)
    if zero_point.dtype.kind != "f" and zero_point.size and (
            zero_point.min() < quant_min or zero_point.max() > quant_max):
        raise RuntimeError(_ZERO_POINT_RANGE)
    if axis < 0:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    _check_float(self.dtype, "fake_quantize_channel_cachemask_cpu_type_handling")
    return _per_channel(self, scale, zero_point, axis, quant_min, quant_max)


class _Arr:
    """An array's dtype (as toolkit's) and shape, the view of it the checks read."""

    __slots__ = ("dtype", "shape")

    def __init__(self, a: np.ndarray):
        self.dtype, self.shape = _dtype_of(a), a.shape


@fake_quantize_per_channel_affine_cachemask.meta_rule
def _(self, scale, zero_point, axis, quant_min, quant_max):
    _check_per_channel(self, scale, zero_point, axis, quant_min, quant_max)
    return _outputs(self)


fake_quantize_per_channel_affine_cachemask.grad(_straight_through)


@op("fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, int quant_min, "
    "int quant_max) -> Tensor", kind=NN, method=False, composite=True, nondiff_args=("scale", "zero_point"))
def fake_quantize_per_channel_affine(self, scale, zero_point, axis, quant_min, quant_max):
    """Fake quantization with one ``scale`` and ``zero_point`` per slice of ``self`` along ``axis``."""
    return api.fake_quantize_per_channel_affine_cachemask(self, scale, zero_point, axis, quant_min,
                                                          quant_max)[0]


fake_quantize_per_channel_affine.meta_rule(_same)


@fake_quantize_per_channel_affine.grad
def _(grad, self, scale, zero_point, axis, quant_min, quant_max):
    return grad * api.fake_quantize_per_channel_affine_cachemask(self.detach(), scale, zero_point, axis, quant_min,
                                                                 quant_max)[1]


# ----------------------------------------------------------------------------- samples
# The generated tests gradcheck every sample, and finite differences see the step function, not the
# straight-through gradient: per tensor (a float32 output) the samples lie where both are 0, outside the range;
# per channel (a double output) a grid of 2**-30 is fine enough for differences to see the identity inside.
# tests/ao/quantization/test_fake_quantize.py compares values, ties and gradients with PyTorch's.
def _outside(rng, shape, dtype=np.float32):
    """Values at least 5 steps of 0.1 beyond ``[-12.8, 12.7]`` (``scale=0.1``, 8-bit signed range)."""
    return (rng.uniform(13.3, 20, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)


@fake_quantize_per_tensor_affine_cachemask.sample_inputs
def _(rng):
    yield (_outside(rng, (4, 5)), 0.1, 0, -128, 127), {}
    yield (_outside(rng, (3, 4), np.float64), 0.1, 0, -128, 127), {}


@fake_quantize_per_tensor_affine.sample_inputs
def _(rng):
    yield (_outside(rng, (4, 5)), 0.1, 0, -128, 127), {}
    yield (_outside(rng, (2, 3, 4), np.float64), 0.1, 0, -128, 127), {}


@fake_quantize_per_tensor_affine_tensor_qparams.sample_inputs
def _(rng):
    yield (_outside(rng, (4, 5)), np.array([0.1], np.float32), np.array([0], np.int32), -128, 127), {}


@_fake_quantize_per_tensor_affine_cachemask_tensor_qparams.sample_inputs
def _(rng):
    qparams = (np.array([0.1], np.float32), np.array([0], np.int32))
    yield (_outside(rng, (4, 5)), *qparams, np.array([1]), -128, 127), {}
    yield (_outside(rng, (3,)), *qparams, np.array([0]), -128, 127), {}


_FINE = np.float32(2.0 ** -30)
_INT32 = (-(2 ** 31), 2 ** 31 - 1)


def _channel_samples(rng):
    yield (rng.uniform(-1.5, 1.5, (3, 4)), np.full(3, _FINE), np.zeros(3, np.int32), 0, *_INT32), {}
    scale = np.array([_FINE, _FINE, _FINE / 4, _FINE], np.float32)  # the third channel lies outside the range
    yield (rng.uniform(-1.5, 1.5, (2, 4, 3)), scale, np.zeros(4, np.int32), 1, *_INT32), {}


fake_quantize_per_channel_affine_cachemask.sample_inputs(_channel_samples)
fake_quantize_per_channel_affine.sample_inputs(_channel_samples)
