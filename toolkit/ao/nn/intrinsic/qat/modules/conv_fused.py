"""Quantization-aware-training versions of the fused convolutions (``torch.ao.nn.intrinsic.qat``): ConvBn and
ConvBnReLU fold their BatchNorm into the fake-quantized weight (see :mod:`.bn_folding`), ConvReLU fake-quantizes
the weight and applies ReLU. All are fused modules, so ``prepare`` observes only their output."""

from __future__ import annotations

from toolkit import nn
from toolkit.ao.nn import intrinsic as nni
from toolkit.ao.nn import qat as nnqat
from toolkit.ao.nn.intrinsic.modules.fused import _FusedModule
from toolkit.ao.nn.qat.modules.linear import check_float_module
from toolkit.nn import functional as F
from toolkit.nn.modules.conv import _ConvNd, _ntuple
from toolkit.nn.utils.fusion import fuse_conv_bn_weights

from .bn_folding import BnFoldingMixin, copy_bn_state

_BN = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}


class _ConvBnNd(BnFoldingMixin, _ConvNd, _FusedModule):
    """A convolution with its BatchNorm folded into the fake-quantized weight."""

    _version = 2
    _FLOAT_MODULE: type
    _FLOAT_CONV_MODULE: type
    _FLOAT_RELU_MODULE = None
    _FUSED_FLOAT_MODULE = None
    _DIM = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
        n = self._DIM
        _ConvNd.__init__(self, in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
                         padding if isinstance(padding, str) else _ntuple(padding, n), _ntuple(dilation, n), False,
                         _ntuple(0, n), groups, False, padding_mode)
        self._setup_bn(_BN[n], out_channels, eps, momentum, freeze_bn, qconfig, bool(bias))
        self._enable_slow_path_for_better_numerical_stability = False

    def _forward(self, input):
        return self._folded_forward(input, self._conv_forward)

    def forward(self, input):
        out = self._forward(input)
        return out if self._FLOAT_RELU_MODULE is None else F.relu(out)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        """The QAT module sharing the fused float module's conv and BatchNorm parameters and statistics."""
        check_float_module(cls, mod, cls._FLOAT_MODULE)
        conv, bn = mod[0], mod[1]
        qat = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                  conv.groups, conv.bias is not None, conv.padding_mode, bn.eps, bn.momentum, False, mod.qconfig)
        qat.weight = conv.weight
        qat.bias = conv.bias
        copy_bn_state(qat.bn, bn)
        return qat

    def to_float(self):
        """The float conv with the BatchNorm folded in (its running statistics), wrapped with ReLU if fused."""
        conv = self._FLOAT_CONV_MODULE(self.in_channels, self.out_channels, self.kernel_size, self.stride,
                                       self.padding, self.dilation, self.groups, self.bias is not None,
                                       self.padding_mode)
        conv.weight, conv.bias = fuse_conv_bn_weights(self.weight.detach(), None if self.bias is None else
                                                      self.bias.detach(), self.bn.running_mean, self.bn.running_var,
                                                      self.bn.eps, self.bn.weight, self.bn.bias)
        if self._FLOAT_RELU_MODULE is None:
            conv.train(self.training)
            return conv
        fused = self._FUSED_FLOAT_MODULE(conv, self._FLOAT_RELU_MODULE())
        fused.train(self.training)
        return fused


def _conv_bn(name: str, dim: int, conv_cls, relu: bool):
    attrs = {"_DIM": dim, "_FLOAT_CONV_MODULE": conv_cls, "__module__": __name__,
             "_FLOAT_MODULE": getattr(nni, f"ConvBn{'ReLU' if relu else ''}{dim}d"),
             "__doc__": f"Conv{dim}d and BatchNorm{dim}d{' and ReLU' if relu else ''} fused for quantization-aware "
                        "training: the BatchNorm folded into the fake-quantized weight."}
    if relu:
        attrs.update(_FLOAT_RELU_MODULE=nn.ReLU, _FUSED_FLOAT_MODULE=getattr(nni, f"ConvReLU{dim}d"))
    return type(name, (_ConvBnNd, conv_cls), attrs)


ConvBn1d = _conv_bn("ConvBn1d", 1, nn.Conv1d, False)
ConvBn2d = _conv_bn("ConvBn2d", 2, nn.Conv2d, False)
ConvBn3d = _conv_bn("ConvBn3d", 3, nn.Conv3d, False)
ConvBnReLU1d = _conv_bn("ConvBnReLU1d", 1, nn.Conv1d, True)
ConvBnReLU2d = _conv_bn("ConvBnReLU2d", 2, nn.Conv2d, True)
ConvBnReLU3d = _conv_bn("ConvBnReLU3d", 3, nn.Conv3d, True)


class _ConvReLUMixin:
    """A QAT conv followed by ReLU, fused (built from an ``nni.ConvReLU{n}d``)."""

    _FLOAT_RELU_MODULE = nn.ReLU

    def forward(self, input):
        return F.relu(self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias))


def _conv_relu(name: str, dim: int, qat_conv, conv_cls):
    return type(name, (_ConvReLUMixin, qat_conv, _FusedModule), {
        "_FLOAT_MODULE": getattr(nni, f"ConvReLU{dim}d"), "_FLOAT_CONV_MODULE": conv_cls, "__module__": __name__,
        "__doc__": f"Conv{dim}d and ReLU fused for quantization-aware training (fake-quantized weight)."})


ConvReLU1d = _conv_relu("ConvReLU1d", 1, nnqat.Conv1d, nn.Conv1d)
ConvReLU2d = _conv_relu("ConvReLU2d", 2, nnqat.Conv2d, nn.Conv2d)
ConvReLU3d = _conv_relu("ConvReLU3d", 3, nnqat.Conv3d, nn.Conv3d)

_CONV_BN = (ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d)


def update_bn_stats(mod) -> None:
    """Let a fused conv-bn module's BatchNorm update its running statistics again (for ``model.apply``)."""
    if type(mod) in _CONV_BN:
        mod.update_bn_stats()


def freeze_bn_stats(mod) -> None:
    """Freeze a fused conv-bn module's BatchNorm statistics (for ``model.apply``)."""
    if type(mod) in _CONV_BN:
        mod.freeze_bn_stats()
