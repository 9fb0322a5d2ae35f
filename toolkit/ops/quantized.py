"""Quantized tensors' ops: quantize (per tensor, per channel), dequantize, ``int_repr`` and the quantization
parameters, defined once here as every op is.

A quantized tensor stores integers ``q`` standing for ``(q - zero_point) * scale``. Its kind (``QuantizedTensor``,
in ``toolkit/_quantized.py``) is a dispatch key beside the device, as in PyTorch: the dispatcher runs an op's
``"quantized_cpu"`` kernel for it and refuses every op without one with PyTorch's words (``Could not run
'aten::add.Tensor' with arguments from the 'QuantizedCPU' backend``). The ops that make a quantized tensor from
a strided one are compositions here; they compute the integers with the numpy arithmetic below (PyTorch's
rounding, bit for bit) and build the tensor with the kind's constructor (``QUANTIZED_KIND["make"]``, filled in by
``toolkit._quantized`` when it is imported). The ops that read a quantized tensor refuse a strided one as
PyTorch's ``CPU`` backend does, and ``toolkit._quantized`` registers their ``"quantized_cpu"`` kernels::

    q = toolkit.quantize_per_tensor(x, 0.1, 10, toolkit.quint8)
    q.int_repr()      # the stored integers, a uint8 tensor
    q.dequantize()    # (q - 10) * 0.1 as float32
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .registry import CONVERSION, FACTORY, op, refuses_names
from .sparse_coo import strided_refusal

# The quantized tensor kind's constructor, ``make(ints, qdtype, scheme, scale, zero_point, axis, device)``, filled
# in by ``toolkit._quantized`` (the kind lives above the Tensor).
QUANTIZED_KIND: dict = {}

# The integer range each quantized dtype stores (sub-byte dtypes pack several values into a byte: not supported).
RANGES = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-2 ** 31, 2 ** 31 - 1)}

# The prepacked-weight classes the quantized ops take (``LinearPackedParamsBase``...): class name -> (class, the
# prepack op that makes one), filled in where each class is defined. The JIT reads this one table to keep them as
# graph constants, type them and save them in archives (packed again by that op on load).
PACKED_PARAMS: dict[str, tuple[type, str]] = {}


_TESTED_ELSEWHERE = ("The generated comparisons feed strided tensors, which these ops refuse or quantize into a tensor "
                     "kind they do not compare; tests/quantization checks them against PyTorch.")


def check_qdtype(dtype) -> tuple[int, int]:
    """The integer range of quantized ``dtype``; PyTorch's error for any other dtype."""
    if not isinstance(dtype, _dt.qdtype):
        raise RuntimeError(f"ScalarType {_dt.as_dtype(dtype).title} is not supported in new_qtensor.")
    rng = RANGES.get(dtype.name)
    if rng is None:
        raise NotImplementedError(f"quantize: toolkit does not store sub-byte quantized tensors ({dtype!r})")
    return rng


def check_zero_point(zero_point: int, rng: tuple[int, int], fn: str) -> None:
    if zero_point > rng[1]:
        raise RuntimeError(f"{fn} zero_point {zero_point} is above upper bound.")
    if zero_point < rng[0]:
        raise RuntimeError(f"{fn} zero_point {zero_point} is below lower bound.")


def quantize_array(x: np.ndarray, scale, zero_point, rng: tuple[int, int], np_dtype, nan_value: int | None = None,
                   *, fused: bool = True) -> np.ndarray:
    """PyTorch's CPU quantization of floats, clamped to the dtype's range ``rng``; NaN becomes ``nan_value`` (what
    PyTorch's kernels give; None: the top of the range, the bottom for int32).

    ``fused`` (an 8-bit per-tensor quantization: fbgemm's vectorized ``Quantize``) rounds
    ``fma(x, 1 / scale, zero_point)`` once to float32 (emulated in float64, where the product is exact), then to
    the nearest even integer; otherwise (the per-channel kernel, ``scale``/``zero_point`` arrays broadcasting
    against ``x``, and qint32) ``zero_point + x * (1 / scale)`` is computed in float32, rounding twice. The two differ for
    about 1 value in 25 near a half, so each path follows its own kernel."""
    if nan_value is None:
        nan_value = rng[0] if np.dtype(np_dtype) == np.int32 else rng[1]
    with np.errstate(all="ignore"):
        inv = np.float32(1.0) / np.asarray(scale, dtype=np.float32)
        if fused:
            v = (np.asarray(x, np.float64) * inv.astype(np.float64) + np.asarray(zero_point, np.float64))
            v = np.rint(v.astype(np.float32)).astype(np.float64)
        else:
            v = np.rint(np.asarray(zero_point).astype(np.float32) + x * inv).astype(np.float64)
    nan = np.isnan(v)
    v = np.clip(v, rng[0], rng[1])
    if nan.any():
        v[nan] = nan_value
    return v.astype(np_dtype)


def dequantize_per_tensor(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """``(q - zero_point) * scale`` as PyTorch's vectorized kernel computes it: in float32 throughout, the
    difference of qint32 integers in int32 (wrapping as PyTorch's does)."""
    if q.dtype == np.int32:
        return (q.astype(np.int64) - zero_point).astype(np.int32).astype(np.float32) * np.float32(scale)
    return (q.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)


def dequantize_per_channel(q: np.ndarray, scales: np.ndarray, zero_points: np.ndarray, axis: int) -> np.ndarray:
    """``(q - zero_point[c]) * scale[c]`` in float64, rounded once to float32 (PyTorch's per-channel kernel)."""
    shape = [1] * q.ndim
    if q.ndim:
        shape[axis] = -1
    return ((q.astype(np.float64) - zero_points.reshape(shape)) * scales.reshape(shape)).astype(np.float32)


def _float_input(x, fn: str) -> np.ndarray:
    if x.dtype is not _dt.float32:
        raise RuntimeError(f"{fn} {x.dtype.title}")
    return x._data if x.device.type == "cpu" else x.cpu()._data


def _per_tensor(x, scale: float, zero_point: int, dtype):
    rng = check_qdtype(dtype)
    a = _float_input(x, "Quantize only works on Float Tensor, got")
    zero_point = int(zero_point)
    check_zero_point(zero_point, rng, "quantize_tensor_per_tensor_affine")
    # fbgemm's fused Quantize serves the 8-bit dtypes; qint32 takes the float32 kernel the per-channel path uses
    ints = quantize_array(a, scale, zero_point, rng, dtype.np, fused=dtype.name != "qint32")
    return QUANTIZED_KIND["make"](ints, dtype, "per_tensor_affine", float(scale), zero_point, None, x.device)


def _scalar_param(t):
    if t.numel() != 1:
        raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")
    return t._data.reshape(()).item()


@op("quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor", kind=CONVERSION,
    composite=True, differentiable=False)
def quantize_per_tensor(self, scale, zero_point, dtype):
    """Quantize a float32 tensor with one scale and zero point: integers ``round(x / scale) + zero_point``
    clamped to ``dtype``'s range, rounding half to even as PyTorch does."""
    return _per_tensor(self, float(scale), zero_point, dtype)


@op("quantize_per_tensor.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, ScalarType dtype) -> Tensor",
    kind=CONVERSION, composite=True, differentiable=False)
def quantize_per_tensor_tensor_qparams(self, scale, zero_point, dtype):
    """``quantize_per_tensor`` with the scale and zero point given as one-element tensors."""
    return _per_tensor(self, float(_scalar_param(scale)), int(_scalar_param(zero_point)),
                       dtype)


@op("quantize_per_tensor.tensors(Tensor[] tensors, Tensor scales, Tensor zero_points, ScalarType dtype) -> Tensor[]",
    kind=CONVERSION, composite=True, differentiable=False)
def quantize_per_tensor_tensors(tensors, scales, zero_points, dtype):
    """Quantize each tensor of a list with its own scale and zero point (``scales[i]``, ``zero_points[i]``)."""
    s = scales._data.reshape(-1)
    z = zero_points._data.reshape(-1)
    return [_per_tensor(t, float(s[i]), int(z[i]), dtype) for i, t in enumerate(tensors)]


def _check_axis(axis: int, ndim: int) -> None:
    if not 0 <= axis < ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. Got: {axis}Expected: "
                           f"[0, {ndim})")


def _channel_params(scales, zero_points, n: int):
    if scales.numel() != zero_points.numel():
        raise RuntimeError("number of elements in scales and zero_points must match")
    if scales.numel() != n:
        raise RuntimeError(f"length of scales must equal to channel, expected {n} got, {scales.numel()}")
    return scales._data.reshape(-1).astype(np.float64), zero_points._data.reshape(-1)


@op("quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) -> Tensor",
    kind=CONVERSION, composite=True, differentiable=False)
def quantize_per_channel(self, scales, zero_points, axis, dtype):
    """Quantize a float32 tensor with one scale and zero point per index along ``axis``."""
    rng = check_qdtype(dtype)
    a = _float_input(self, "quantize_tensor_per_channel_affine expects a Float Tensor, got")
    _check_axis(axis, a.ndim)
    s, z = _channel_params(scales, zero_points, a.shape[axis])
    if z.dtype.kind == "f":
        raise NotImplementedError("quantize_per_channel: float zero points (per_channel_affine_float_qparams) "
                                  "are not supported by toolkit")
    z = z.astype(np.int64)
    for zp in z.tolist():
        check_zero_point(zp, rng, "quantize_tensor_per_channel_affine")
    shape = [1] * a.ndim
    shape[axis] = -1
    ints = quantize_array(a, s.reshape(shape), z.reshape(shape), rng, dtype.np,
                          rng[0] if dtype.name == "qint32" else 0, fused=False)
    return QUANTIZED_KIND["make"](ints, dtype, "per_channel_affine", s, z, axis, self.device)


_INT_TO_QDTYPE = {"uint8": _dt.quint8, "int8": _dt.qint8, "int32": _dt.qint32}


def _int_input(t):
    qd = _INT_TO_QDTYPE.get(t.dtype.name)
    if qd is None:
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like toolkit.quint8")
    return qd, np.array(t._data if t.device.type == "cpu" else t.cpu()._data)


@op("_make_per_tensor_quantized_tensor(Tensor self, float scale, int zero_point) -> Tensor", kind=FACTORY,
    composite=True, differentiable=False)
def _make_per_tensor_quantized_tensor(self, scale, zero_point):
    """A quantized tensor whose integers are a copy of ``self`` (uint8, int8 or int32: quint8, qint8, qint32)."""
    qd, ints = _int_input(self)
    return QUANTIZED_KIND["make"](ints, qd, "per_tensor_affine", float(scale), int(zero_point), None, self.device)


@op("_make_per_channel_quantized_tensor(Tensor self, Tensor scale, Tensor zero_point, int axis) -> Tensor",
    kind=FACTORY, composite=True, differentiable=False)
def _make_per_channel_quantized_tensor(self, scale, zero_point, axis):
    """A per-channel quantized tensor whose integers are a copy of ``self``."""
    qd, ints = _int_input(self)
    _check_axis(axis, ints.ndim)
    s, z = _channel_params(scale, zero_point, ints.shape[axis])
    return QUANTIZED_KIND["make"](ints, qd, "per_channel_affine", s, z.astype(np.int64), axis, self.device)


# Ops that read a quantized tensor: a strided one gets PyTorch's CPU refusal, and ``toolkit._quantized``
# registers each one's "quantized_cpu" kernel.
_OPTIONS = {"kind": CONVERSION, "differentiable": False}
for _schema, _doc in (
    ("int_repr(Tensor self) -> Tensor", "The stored integers as a uint8, int8 or int32 tensor (a copy)."),
    ("q_scale(Tensor self) -> float", "The scale of a per-tensor quantized tensor."),
    ("q_zero_point(Tensor self) -> int", "The zero point of a per-tensor quantized tensor."),
    ("q_per_channel_scales(Tensor self) -> Tensor", "The scales (float64) of a per-channel quantized tensor."),
    ("q_per_channel_zero_points(Tensor self) -> Tensor", "The zero points (int64) of a per-channel quantized tensor."),
    ("q_per_channel_axis(Tensor self) -> int", "The axis a per-channel quantized tensor's channels run along."),
    ("qscheme(Tensor self) -> QScheme", "The quantization scheme (``toolkit.per_tensor_affine``...)."),
):
    op(_schema, doc=_doc, **_OPTIONS)(strided_refusal(_schema.split("(")[0])).tested_elsewhere(_TESTED_ELSEWHERE)


@op("dequantize.self(Tensor self) -> Tensor", kind=CONVERSION, differentiable=False)
def dequantize(self):
    """The real numbers a quantized tensor stands for, as float32; a float tensor is returned as it is."""
    return self


dequantize.tested_elsewhere(_TESTED_ELSEWHERE)


@op("dequantize.tensors(Tensor[] tensors) -> Tensor[]", kind=CONVERSION, composite=True, differentiable=False)
def dequantize_tensors(tensors):
    """``dequantize`` of each tensor of a list."""
    return [t.dequantize() for t in tensors]


for _composite in (quantize_per_tensor, quantize_per_tensor_tensor_qparams, quantize_per_tensor_tensors,
                   quantize_per_channel, _make_per_tensor_quantized_tensor, _make_per_channel_quantized_tensor,
                   dequantize_tensors):
    _composite.tested_elsewhere(_TESTED_ELSEWHERE)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("quantize_per_tensor", "quantize_per_channel", "dequantize", "int_repr", "q_scale", "q_zero_point",
               "q_per_channel_scales", "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"))
