"""``qat.Conv1d/2d/3d``: convolutions whose weight passes through the qconfig's fake quantization on every
forward (``torch.ao.nn.qat.Conv2d`` and its siblings)."""

from __future__ import annotations

from toolkit import nn

from .linear import attach_weight_fake_quant, check_float_module


class _ConvNd:
    """The QAT behaviour shared by the three convolutions (mixed in before the float class)."""

    _FLOAT_MODULE: type
    _FLOAT_CONV_MODULE: type

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", qconfig=None, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        self._FLOAT_CONV_MODULE.__init__(self, in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, dilation=dilation, groups=groups, bias=bias,
                                         padding_mode=padding_mode, **factory_kwargs)
        attach_weight_fake_quant(self, qconfig, factory_kwargs)

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        """The QAT module over ``mod``'s own parameters (``mod`` a conv, or a fused conv-relu), with
        ``mod.qconfig``."""
        check_float_module(cls, mod, cls._FLOAT_MODULE)
        qconfig = mod.qconfig
        if isinstance(mod, nn.Sequential):
            mod = mod[0]
        qat = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                  dilation=mod.dilation, groups=mod.groups, bias=mod.bias is not None, padding_mode=mod.padding_mode,
                  qconfig=qconfig)
        qat.weight = mod.weight
        qat.bias = mod.bias
        return qat

    def to_float(self):
        """The float convolution (wrapped with its ReLU for a fused class) over copies of the parameters."""
        cls = type(self)
        conv = cls._FLOAT_CONV_MODULE(self.in_channels, self.out_channels, self.kernel_size, self.stride,
                                      self.padding, self.dilation, self.groups, self.bias is not None,
                                      self.padding_mode)
        conv.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            conv.bias = nn.Parameter(self.bias.detach())
        relu_cls = getattr(cls, "_FLOAT_RELU_MODULE", None)
        if relu_cls is None:
            return conv
        fused = cls._FLOAT_MODULE(conv, relu_cls())
        fused.train(self.training)
        return fused


class Conv1d(_ConvNd, nn.Conv1d):
    """``nn.Conv1d`` with a fake-quantized weight."""

    _FLOAT_MODULE = nn.Conv1d
    _FLOAT_CONV_MODULE = nn.Conv1d


class Conv2d(_ConvNd, nn.Conv2d):
    """``nn.Conv2d`` with a fake-quantized weight."""

    _FLOAT_MODULE = nn.Conv2d
    _FLOAT_CONV_MODULE = nn.Conv2d


class Conv3d(_ConvNd, nn.Conv3d):
    """``nn.Conv3d`` with a fake-quantized weight."""

    _FLOAT_MODULE = nn.Conv3d
    _FLOAT_CONV_MODULE = nn.Conv3d
