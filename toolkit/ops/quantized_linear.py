"""Quantized linear layers' ops, PyTorch's ``quantized::`` library as its x86/fbgemm engine computes them:
``linear_prepack``/``linear_unpack``, the static ``linear``/``linear_relu`` (quint8 in, quint8 out) and the dynamic
``linear_dynamic``/``linear_relu_dynamic`` (float32 in and out, the activation quantized per call).

A module packs its qint8 weight (per tensor or per output channel) and float bias once, and calls the ops with the
packed object, as ``torch.ao.nn.quantized`` modules do. The names below are the registered ops themselves
(``R.get("quantized::linear_dynamic")`` is ``linear_dynamic``), so every call takes the one dispatch path::

    from toolkit.ops import quantized_linear as _ql
    w = toolkit.quantize_per_channel(weight, scales, zero_points, 0, toolkit.qint8)  # or quantize_per_tensor
    packed = _ql.linear_prepack(w, bias)          # bias: float tensor (N,) or None; a LinearPackedParamsBase
    y = _ql.linear_dynamic(x, packed, True)       # x float32 (..., K) -> float32 (..., N); reduce_range=True
    q = _ql.linear(qx, packed, 0.05, 64)          # qx quint8 (..., K) -> quint8 (..., N), scale 0.05, zp 64
    w, b = _ql.linear_unpack(packed)

The product runs on ``_qgemm_numba`` (uint8 x int8 -> int32, zero points corrected exactly). Static outputs are
requantized as fbgemm does, in float32: ``round_half_even((acc + bias / (x_scale * w_scale)) * (x_scale * w_scale /
y_scale)) + y_zero_point``, clamped to 0..255 (``linear_relu``: to y_zero_point..255). Dynamic ones are
``acc * (x_scale * w_scale) + bias``, with the activation's scale and zero point chosen from its min and max (both
widened to include 0) over 0..255, or 0..127 with ``reduce_range``, by fbgemm's ``ChooseQuantizationParams``.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import qscheme as _qs
from . import runtime as _runtime
from .quantized import PACKED_PARAMS, QUANTIZED_KIND, quantize_array
from .registry import NN, op
from .sparse_coo import backend_refusal

PACKED = "__torch__.torch.classes.quantized.LinearPackedParamsBase"
_OPTIONS = {"kind": NN, "composite": True, "differentiable": False, "method": False, "function": False}
SMALL_SCALE_THRESHOLD = 6.1e-5  # fbgemm's smallest activation scale
INT32_MIN = -(2**31)


class LinearPackedParamsBase:
    """A qint8 weight (N, K) and float bias (read as float32) packed for the int8 product
    (``quantized::linear_prepack``): the weight packed once with its rows' sums, and its scales/zero points per
    output channel. Keeps the weight and bias as given, for ``linear_unpack`` and pickling (a copy packs again)."""

    __slots__ = ("weight", "bias", "packed", "w_scale", "w_zp", "bias_np")

    def __init__(self, weight, bias) -> None:
        from . import _qgemm_numba as G  # optional: numba, never loaded by import toolkit

        self.weight, self.bias = weight, bias
        self.packed = G.pack_weight(weight._data)
        self.w_scale, self.w_zp, self.bias_np = channel_params(weight, bias)

    def unpack(self) -> tuple:
        return self.weight, self.bias

    def __getstate__(self):
        return self.weight, self.bias

    def __setstate__(self, state) -> None:
        self.__init__(*state)

    def __repr__(self) -> str:
        return f"ScriptObject <{PACKED}>"


def channel_params(weight, bias) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A packed weight's scale (float32) and zero point (int32) per output channel (axis 0), and its bias as
    float32 (or None): what the product's corrections and requantization read."""
    n = weight.shape[0]
    if weight._qscheme is _qs.per_tensor_affine:
        w_scale, w_zp = np.full(n, weight._scale, np.float32), np.full(n, weight._zero_point, np.int32)
    else:
        w_scale, w_zp = np.asarray(weight._scale, np.float32), np.asarray(weight._zero_point, np.int32)
    return w_scale, w_zp, None if bias is None else np.ascontiguousarray(bias._data, dtype=np.float32)


def choose_qparams(x_min: float, x_max: float, qmin: int, qmax: int) -> tuple[float, int]:
    """fbgemm's ``ChooseQuantizationParams`` (no sparsity, no power-of-two scale): the range widened to hold 0,
    a scale of at least ``SMALL_SCALE_THRESHOLD``, the zero point from whichever end loses less, rounded."""
    lo, hi = min(float(np.float32(x_min)), 0.0), max(float(np.float32(x_max)), 0.0)
    if not lo <= hi:  # a NaN in the input
        raise RuntimeError("In ChooseQuantizationParams, min should be less than or equal to max")
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0 or math.isinf(1.0 / np.float32(scale)):
        scale = 0.1
    if scale < SMALL_SCALE_THRESHOLD:
        org = scale
        scale = SMALL_SCALE_THRESHOLD
        if lo == 0:
            hi = SMALL_SCALE_THRESHOLD * (qmax - qmin)
        elif hi == 0:
            lo = -SMALL_SCALE_THRESHOLD * (qmax - qmin)
        else:
            amp = float(np.float32(SMALL_SCALE_THRESHOLD / org))
            lo, hi = lo * amp, hi * amp
    from_min, from_max = qmin - lo / scale, qmax - hi / scale
    initial = from_min if abs(qmin) - abs(lo / scale) < abs(qmax) - abs(hi / scale) else from_max
    if math.isnan(initial):  # an infinite input (inf / inf): C++'s int cast of NaN on x86 gives INT32_MIN
        return float(np.float32(scale)), INT32_MIN
    zp = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return float(np.float32(scale)), zp


def requantization(x_scale: float, w_scale: np.ndarray, bias, y_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """fbgemm's ``ReQuantizeOutput`` with a float bias, as the ``(offset, multiplier)`` per output channel that
    ``gemm_u8s8_requantize`` applies: ``round((acc + bias / (x_scale * w_scale)) * (x_scale * w_scale / y_scale))``,
    in float32."""
    act_w = np.float32(x_scale) * w_scale
    offset = np.zeros_like(act_w) if bias is None else bias / act_w
    return offset, act_w / np.float32(y_scale)


def _input_rows(x, fn: str, k: int) -> np.ndarray:
    if x.dim() < 2:
        raise RuntimeError("The dimension of input tensor should be larger than or equal to 2")
    if x.shape[-1] != k:
        raise RuntimeError(f"The number of rows in the packB should be equal to K: {x.shape[-1]}")
    return x._data.reshape(math.prod(x.shape[:-1]), k)  # not -1: K may be 0


def _check_packed(p, fn: str) -> None:
    if not isinstance(p, LinearPackedParamsBase):
        raise TypeError(f"{fn}(): argument 'W_prepack' must be {PACKED}, not {type(p).__name__}")


def _check_product(p, fn: str) -> None:
    _check_packed(p, fn)
    if p.bias is not None and p.bias.dtype.name != "float32":  # prepack keeps it; fbgemm's linear refuses it
        raise RuntimeError(f"expected scalar type Float but found {p.bias.dtype.title}")


def _static(x, p, y_scale: float, y_zp: int, relu: bool, fn: str):
    _check_product(p, fn)
    if x.dtype.name != "quint8":
        raise RuntimeError(f"Expected input data type QUInt8 but got {x.dtype.title}")
    if x._qscheme is not _qs.per_tensor_affine:
        raise RuntimeError(f"{fn}: expected a per-tensor quantized input, got {x._qscheme!r}")
    from . import _qgemm_numba as G  # optional: numba, never loaded by import toolkit

    k = p.packed.k
    rows = _input_rows(x, fn, k)
    offset, mult = requantization(x._scale, p.w_scale, p.bias_np, y_scale)
    y_zp = int(y_zp)
    q = G.gemm_u8s8_requantize(rows, x._zero_point, p.packed, p.w_zp, offset, mult, y_zp, y_zp if relu else 0, 255)
    shape = (*x.shape[:-1], q.shape[1])
    return QUANTIZED_KIND["make"](q.reshape(shape), x.dtype, "per_tensor_affine", float(y_scale), int(y_zp), None)


def _dynamic(x, p, reduce_range: bool, relu: bool, fn: str):
    _check_product(p, fn)
    if x.dtype.name != "float32":
        raise RuntimeError(f"expected scalar type Float but found {x.dtype.title}")
    from . import _qgemm_numba as G  # optional: numba, never loaded by import toolkit

    k = p.packed.k
    a = _input_rows(x, fn, k)
    if a.size:
        x_scale, x_zp = choose_qparams(a.min(), a.max(), 0, 127 if reduce_range else 255)
    else:
        x_scale, x_zp = choose_qparams(0.0, 0.0, 0, 127 if reduce_range else 255)
    xq = quantize_array(a, x_scale, x_zp, (0, 127 if reduce_range else 255), np.uint8)
    bias = np.zeros(p.w_scale.shape, np.float32) if p.bias_np is None else p.bias_np
    out = G.gemm_u8s8_dequantize(xq, x_zp, p.packed, p.w_zp, np.float32(x_scale) * p.w_scale, bias)
    if relu:
        np.maximum(out, 0, out=out)
    return _runtime.DISPATCHER.wrap(out.reshape(*x.shape[:-1], out.shape[1]))


def _refuse_quantized(name: str):
    def quantized(*args):
        raise backend_refusal(f"quantized::{name}", "QuantizedCPU")

    return quantized


_TESTED_ELSEWHERE = ("Its arguments are quantized tensors and packed weights, which the generated comparisons do not "
                     "build; tests/quantization/test_quantized_linear.py checks it against PyTorch.")


@op(f"quantized::linear_prepack(Tensor W, Tensor? B=None) -> {PACKED} W_prepack", **_OPTIONS)
def linear_prepack(W, B=None):
    """Pack a qint8 weight (N, K), per tensor or per output channel, and an optional float bias (N,) for the int8
    product of ``quantized::linear`` and ``quantized::linear_dynamic``."""
    raise backend_refusal("quantized::linear_prepack", "CPU")


def _prepack(W, B=None):
    if W.dtype.name != "qint8":
        raise RuntimeError(f"expected scalar type QInt8 but found {W.dtype.title}")
    if W.dim() != 2:
        raise RuntimeError("The weight tensor for quantized::linear_prepack (fbgemm) should be 2-dimensional.")
    if W._qscheme not in (_qs.per_tensor_affine, _qs.per_channel_affine) or (W._axis not in (None, 0)):
        raise RuntimeError("quantized::linear_prepack: the weight must be quantized per tensor or per output "
                           "channel (axis 0)")
    if B is not None:
        if B.dim() != 1:
            raise RuntimeError("bias should be a vector (1D Tensor)")
        if B.shape[0] != W.shape[0]:
            raise RuntimeError(f"bias should have N elements: {W.shape[0]}")
        if B.is_quantized:
            raise RuntimeError("quantized::linear_prepack: the bias must be a float tensor")
        B = B.detach()  # unpacked as given (float64 stays float64); the product reads it as float32
    return LinearPackedParamsBase(W, B)


linear_prepack.kernels["quantized_cpu"] = _prepack


@op(f"quantized::linear_unpack({PACKED} W_prepack) -> (Tensor W_origin, Tensor? B_origin)", **_OPTIONS)
def linear_unpack(W_prepack):
    """The qint8 weight and float bias (or None) a packed object was made from."""
    _check_packed(W_prepack, "quantized::linear_unpack")
    return W_prepack.unpack()


@op(f"quantized::linear(Tensor X, {PACKED} W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y", **_OPTIONS)
def linear(X, W_prepack, Y_scale_i, Y_zero_point_i):
    """``X @ W.T + B`` of a quint8 ``X`` (..., K), requantized to quint8 with ``Y_scale_i``/``Y_zero_point_i``."""
    raise backend_refusal("quantized::linear", "CPU")


linear.kernels["quantized_cpu"] = lambda X, p, s, z: _static(X, p, s, z, False, "quantized::linear")


@op(f"quantized::linear_relu(Tensor X, {PACKED} W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y",
    **_OPTIONS)
def linear_relu(X, W_prepack, Y_scale_i, Y_zero_point_i):
    """``quantized::linear`` followed by ReLU (the output clamped below at its zero point)."""
    raise backend_refusal("quantized::linear_relu", "CPU")


linear_relu.kernels["quantized_cpu"] = lambda X, p, s, z: _static(X, p, s, z, True, "quantized::linear_relu")


@op(f"quantized::linear_dynamic(Tensor X, {PACKED} W_prepack, bool reduce_range=False) -> Tensor Y", **_OPTIONS)
def linear_dynamic(X, W_prepack, reduce_range=False):
    """``X @ W.T + B`` of a float32 ``X`` (..., K): ``X`` quantized to quint8 per call from its own min and max
    (0..127 with ``reduce_range``), the product in int8, the result float32."""
    return _dynamic(X, W_prepack, reduce_range, False, "quantized::linear_dynamic")


linear_dynamic.kernels["quantized_cpu"] = _refuse_quantized("linear_dynamic")


@op(f"quantized::linear_relu_dynamic(Tensor X, {PACKED} W_prepack, bool reduce_range=False) -> Tensor Y",
    **_OPTIONS)
def linear_relu_dynamic(X, W_prepack, reduce_range=False):
    """``quantized::linear_dynamic`` followed by ReLU."""
    return _dynamic(X, W_prepack, reduce_range, True, "quantized::linear_relu_dynamic")


linear_relu_dynamic.kernels["quantized_cpu"] = _refuse_quantized("linear_relu_dynamic")

for _d in (linear_prepack, linear_unpack, linear, linear_relu, linear_dynamic, linear_relu_dynamic):
    _d.tested_elsewhere(_TESTED_ELSEWHERE)


PACKED_PARAMS["LinearPackedParamsBase"] = (LinearPackedParamsBase, "quantized::linear_prepack")
