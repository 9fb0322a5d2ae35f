"""``ConvReLU2d``: the int8 convolution with ReLU fused into its requantization (``quantized::conv2d_relu``: the
output clamped at its zero point), which ``convert`` swaps in for ``nni.ConvReLU2d`` and the QAT
``ConvReLU2d``/``ConvBnReLU2d``, as ``torch.ao.nn.intrinsic.quantized.ConvReLU2d``."""

from __future__ import annotations

from toolkit import nn
from toolkit.ao.nn import intrinsic as nni
from toolkit.ao.nn.intrinsic import qat as nniqat
from toolkit.ao.nn.quantized import Conv2d
from toolkit.nn.utils.fusion import fuse_conv_bn_weights
from toolkit.ops import quantized_conv as _qc


class ConvReLU2d(Conv2d):
    """``relu(conv2d(x))`` on quint8 tensors, in one requantization."""

    _FLOAT_MODULE = nni.ConvReLU2d

    def forward(self, input):
        if len(input.shape) != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        if self.padding_mode != "zeros":
            pad = [p for p in reversed(self.padding) for _ in range(2)]
            input = nn.functional.pad(input, pad, mode=self.padding_mode)
        return _qc.conv2d_relu(input, self._packed_params, self.scale, self.zero_point)

    def _get_name(self) -> str:
        return "QuantizedConvReLU2d"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        """From an observed ``nni.ConvReLU2d`` or a QAT ``ConvReLU2d``/``ConvBnReLU2d`` (its BatchNorm folded in
        first, with the running statistics)."""
        if type(mod) is nniqat.ConvBnReLU2d:
            mod.weight, mod.bias = fuse_conv_bn_weights(mod.weight, mod.bias, mod.bn.running_mean,
                                                        mod.bn.running_var, mod.bn.eps, mod.bn.weight, mod.bn.bias)
        return super().from_float(mod, use_precomputed_fake_quant=use_precomputed_fake_quant)
