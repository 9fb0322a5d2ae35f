"""Quantized 2-d convolution, PyTorch's ``quantized::conv2d_prepack``/``conv2d``/``conv2d_relu``/``conv2d_unpack``:
the quint8 input unfolded into patches (im2col, padding with its zero point, which stands for 0.0) and multiplied
with each group's packed qint8 weight by the int8 product of the linear layers (``_qgemm_numba``), then requantized
to quint8 as ``quantized::linear`` does::

    from toolkit.ops import registry as R
    packed = R.get("quantized::conv2d_prepack")(qweight, bias, [1, 1], [1, 1], [1, 1], 1)  # stride, padding, ...
    qy = R.get("quantized::conv2d")(qx, packed, 0.3, 50)     # qx quint8 (N, C, H, W) -> quint8 (N, O, Ho, Wo)
"""

from __future__ import annotations

import numpy as np

from .._core import qscheme as _qs
from .quantized import PACKED_PARAMS, QUANTIZED_KIND
from .quantized_linear import channel_params, requantization
from .registry import NN, op
from .sparse_coo import backend_refusal

PACKED = "__torch__.torch.classes.quantized.Conv2dPackedParamsBase"
_OPTIONS = {"kind": NN, "composite": True, "differentiable": False, "method": False, "function": False}


class Conv2dPackedParamsBase:
    """A qint8 weight (O, C / groups, kh, kw) and float bias (read as float32) packed per group for the int8
    product, with the convolution's stride, padding, dilation and groups (``quantized::conv2d_prepack``)."""

    __slots__ = ("weight", "bias", "_stride", "_padding", "_dilation", "_groups", "packs", "w_scale", "w_zp",
                 "bias_np", "_pack_hwc")

    def __init__(self, weight, bias, stride, padding, dilation, groups) -> None:
        from . import _qgemm_numba as G  # optional: numba, never loaded by import toolkit

        self.weight, self.bias = weight, bias
        self._stride, self._padding, self._dilation, self._groups = list(stride), list(padding), list(dilation), groups
        o = weight.shape[0]
        per_group = weight._data.reshape(groups, o // groups, -1)
        self.packs = [G.pack_weight(per_group[g]) for g in range(groups)]
        self.w_scale, self.w_zp, self.bias_np = channel_params(weight, bias)
        self._pack_hwc = None

    def pack_channels_last(self):
        """The weight (one group) packed with its taps in (kernel row, kernel column, channel) order, the order
        of ``_qconv_im2col.im2col_channels_last``'s rows; made when first asked for."""
        if self._pack_hwc is None:
            from . import _qgemm_numba as G  # optional: numba, never loaded by import toolkit

            w = self.weight._data
            self._pack_hwc = G.pack_weight(w.transpose(0, 2, 3, 1).reshape(w.shape[0], -1))
        return self._pack_hwc

    def stride(self) -> list:
        return list(self._stride)

    def padding(self) -> list:
        return list(self._padding)

    def dilation(self) -> list:
        return list(self._dilation)

    def groups(self) -> int:
        return self._groups

    def transpose(self) -> bool:
        return False

    def unpack(self) -> tuple:
        return self.weight, self.bias

    def __getstate__(self):
        return self.weight, self.bias, self._stride, self._padding, self._dilation, self._groups

    def __setstate__(self, state) -> None:
        self.__init__(*state)

    def __repr__(self) -> str:
        return f"ScriptObject <{PACKED}>"


def _pair(v, name: str) -> list:
    v = list(v)
    if len(v) != 2:
        raise RuntimeError(f"{name} should contain 2 elements for 2D convolution.")
    return v


def _prepack(weight, bias, stride, padding, dilation, groups):
    if weight.dtype.name != "qint8":
        raise RuntimeError(f"quantized::conv2d_prepack: expected a qint8 weight, got {weight.dtype.title}")
    if weight.dim() != 4:
        raise RuntimeError("Weights are expected to have 4 dimensions")
    stride, padding, dilation = _pair(stride, "stride"), _pair(padding, "padding"), _pair(dilation, "dilation")
    for name, values, least in (("stride", stride, 1), ("padding", padding, 0), ("dilation", dilation, 1)):
        if min(values) < least:
            raise RuntimeError(f"quantized::conv_prepack: {name} should be {'positive' if least else 'non-negative'}.")
    if groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(f"quantized::conv2d_prepack: {weight.shape[0]} output channels do not divide into "
                           f"{groups} groups")
    if weight._qscheme not in (_qs.per_tensor_affine, _qs.per_channel_affine) or weight._axis not in (None, 0):
        raise RuntimeError("quantized::conv2d_prepack: the weight must be quantized per tensor or per output "
                           "channel (axis 0)")
    if bias is not None:
        if bias.dim() != 1:
            raise RuntimeError("bias should be a vector (1D Tensor)")
        if bias.shape[0] != weight.shape[0]:
            raise RuntimeError(f"bias should have K elements: {weight.shape[0]}")
        bias = bias.detach()  # unpacked as given (float64 stays float64); the product reads it as float32
    return Conv2dPackedParamsBase(weight, bias, stride, padding, dilation, groups)


def _patches(x: np.ndarray, zp: int, p: Conv2dPackedParamsBase, kh: int, kw: int, channels_last: bool) -> tuple:
    """im2col of uint8 ``x`` (N, C, H, W): (groups, N * Ho * Wo, kp), its first ``k = C / groups * kh * kw``
    columns the patches and the rest zeros up to whole int32 words where the dot-product instructions read the
    rows in place (``_qconv_im2col``), with ``k`` and (Ho, Wo); ``channels_last`` is ``_channels_last(x, p)``."""
    from . import _qconv_im2col, _qgemm_vnni  # optional: numba, never loaded by import toolkit

    (sh, sw), (ph, pw), (dh, dw) = p._stride, p._padding, p._dilation
    n, c, h, w = x.shape
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if ho <= 0 or wo <= 0:
        raise RuntimeError(f"quantized::conv2d: the input ({h}x{w}, padding {ph}x{pw}) is smaller than the "
                           f"kernel ({dh * (kh - 1) + 1}x{dw * (kw - 1) + 1})")
    k = c // p._groups * kh * kw
    kp = -(-k // 4) * 4 if p.packs[0].wv is not None and _qgemm_vnni.STEP == 4 else k
    if channels_last:
        return _qconv_im2col.im2col_channels_last(x, kh, kw, kp), k, ho, wo
    return _qconv_im2col.im2col(x, zp, p._stride, p._padding, p._dilation, p._groups, kh, kw, kp), k, ho, wo


def _channels_last(x: np.ndarray, p: Conv2dPackedParamsBase) -> bool:
    """Whether ``x`` is read by ``im2col_channels_last``: channels last (several), one group, unit geometry."""
    return (x.shape[1] > 1 and x.strides[1] == 1 and x.strides[3] == x.shape[1] and p._groups == 1
            and p._stride == [1, 1] and p._padding == [0, 0] and p._dilation == [1, 1])


def _conv(qx, p, scale, zero_point, relu: bool, fn: str):
    if not isinstance(p, Conv2dPackedParamsBase):
        raise TypeError(f"{fn}(): argument 'packed_weight' must be {PACKED}, not {type(p).__name__}")
    if qx.dtype.name != "quint8":
        raise RuntimeError(f"{fn}: data type of input should be QUint8, got {qx.dtype.title}.")
    if qx.dim() != 4:
        raise RuntimeError(f"{fn}(): Expected activation tensor to have 4 dimensions, got {qx.dim()}")
    if qx._qscheme is not _qs.per_tensor_affine:
        raise RuntimeError(f"{fn}: expected a per-tensor quantized input, got {qx._qscheme!r}")
    o, cg, kh, kw = p.weight.shape
    if qx.shape[1] != cg * p._groups:
        raise RuntimeError(f"{fn}: the input has {qx.shape[1]} channels, the weight expects {cg * p._groups} "
                           f"({cg} per group, {p._groups} groups)")
    from . import _qgemm_numba as G  # optional: numba, never loaded by import toolkit

    hwc = _channels_last(qx._data, p)
    cols, k, ho, wo = _patches(qx._data, qx._zero_point, p, kh, kw, hwc)
    og, zp = o // p._groups, int(zero_point)
    offset, mult = requantization(qx._scale, p.w_scale, p.bias_np, scale)
    packs = [p.pack_channels_last()] if hwc else p.packs
    parts = [G.gemm_u8s8_requantize(cols[g], qx._zero_point, packs[g], p.w_zp[g * og:(g + 1) * og],
                                    offset[g * og:(g + 1) * og], mult[g * og:(g + 1) * og], zp, zp if relu else 0,
                                    255, k) for g in range(p._groups)]
    q = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)  # (N * Ho * Wo, O)
    out = q.reshape(qx.shape[0], ho, wo, o).transpose(0, 3, 1, 2)  # channels last, as PyTorch returns it
    return QUANTIZED_KIND["make"](out, qx.dtype, "per_tensor_affine", float(scale), int(zero_point), None)


_TESTED_ELSEWHERE = ("Its arguments are quantized tensors and packed weights, which the generated comparisons do not "
                     "build; tests/quantization/test_quantized_conv.py checks it against PyTorch.")


@op(f"quantized::conv2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
    f"int groups) -> {PACKED}", **_OPTIONS)
def conv2d_prepack(weight, bias, stride, padding, dilation, groups):
    """Pack a qint8 convolution weight (O, C / groups, kh, kw) with its float bias and geometry."""
    raise backend_refusal("quantized::conv2d_prepack", "CPU")


conv2d_prepack.kernels["quantized_cpu"] = _prepack


@op(f"quantized::conv2d_unpack({PACKED} packed_weights) -> (Tensor unpacked_weights, Tensor? B_origin)",
    **_OPTIONS)
def conv2d_unpack(packed_weights):
    """The qint8 weight and float bias (or None) a packed convolution was made from."""
    if not isinstance(packed_weights, Conv2dPackedParamsBase):
        raise TypeError(f"quantized::conv2d_unpack(): argument 'packed_weights' must be {PACKED}")
    return packed_weights.unpack()


@op(f"quantized::conv2d.new(Tensor qx, {PACKED} packed_weight, float output_scale, int output_zero_point) "
    "-> Tensor", **_OPTIONS)
def conv2d(qx, packed_weight, output_scale, output_zero_point):
    """2-d convolution of a quint8 ``qx`` (N, C, H, W), requantized to quint8 (``output_scale``/``zero_point``)."""
    raise backend_refusal("quantized::conv2d.new", "CPU")


conv2d.kernels["quantized_cpu"] = lambda qx, p, s, z: _conv(qx, p, s, z, False, "quantized::conv2d")


@op(f"quantized::conv2d_relu.new(Tensor qx, {PACKED} packed_weight, float output_scale, int output_zero_point) "
    "-> Tensor", **_OPTIONS)
def conv2d_relu(qx, packed_weight, output_scale, output_zero_point):
    """``quantized::conv2d`` followed by ReLU (the output clamped below at its zero point)."""
    raise backend_refusal("quantized::conv2d_relu.new", "CPU")


conv2d_relu.kernels["quantized_cpu"] = lambda qx, p, s, z: _conv(qx, p, s, z, True, "quantized::conv2d_relu")

for _d in (conv2d_prepack, conv2d_unpack, conv2d, conv2d_relu):
    _d.tested_elsewhere(_TESTED_ELSEWHERE)


PACKED_PARAMS["Conv2dPackedParamsBase"] = (Conv2dPackedParamsBase, "quantized::conv2d_prepack")
