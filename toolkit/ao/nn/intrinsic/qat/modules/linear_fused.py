"""Quantization-aware-training versions of the fused linear sequences: ``LinearReLU`` (fake-quantized weight,
then ReLU) and ``LinearBn1d`` (BatchNorm1d folded into the fake-quantized weight), as
``torch.ao.nn.intrinsic.qat`` defines them."""

from __future__ import annotations

from toolkit import nn
from toolkit.ao.nn import intrinsic as nni
from toolkit.ao.nn import qat as nnqat
from toolkit.ao.nn.intrinsic.modules.fused import _FusedModule
from toolkit.ao.nn.qat.modules.linear import check_float_module
from toolkit.nn import functional as F
from toolkit.nn.utils.fusion import fuse_linear_bn_weights

from .bn_folding import BnFoldingMixin, copy_bn_state


class LinearReLU(nnqat.Linear, _FusedModule):
    """``relu(linear(input, weight_fake_quant(weight), bias))``, built from an ``nni.LinearReLU``."""

    _FLOAT_MODULE = nni.LinearReLU

    def __init__(self, in_features: int, out_features: int, bias: bool = True, qconfig=None) -> None:
        super().__init__(in_features, out_features, bias, qconfig)

    def forward(self, input):
        return F.relu(F.linear(input, self.weight_fake_quant(self.weight), self.bias))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        check_float_module(cls, mod, cls._FLOAT_MODULE)
        linear = mod[0]
        qat = cls(linear.in_features, linear.out_features, linear.bias is not None, qconfig=mod.qconfig)
        qat.weight = linear.weight
        qat.bias = linear.bias
        return qat

    def to_float(self):
        linear = nnqat.Linear.to_float(self)
        return nni.LinearReLU(linear, nn.ReLU())


class LinearBn1d(BnFoldingMixin, nn.Linear, _FusedModule):
    """A Linear with its BatchNorm1d folded into the fake-quantized weight."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, eps: float = 1e-05,
                 momentum: float = 0.1, freeze_bn: bool = False, qconfig=None):
        nn.Linear.__init__(self, in_features, out_features, bias)
        self._setup_bn(nn.BatchNorm1d, out_features, eps, momentum, freeze_bn, qconfig, bias)

    def forward(self, input):
        return self._folded_forward(input, F.linear)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        check_float_module(cls, mod, nni.LinearBn1d)
        linear, bn = mod[0], mod[1]
        qat = cls(linear.in_features, linear.out_features, linear.bias is not None, bn.eps, bn.momentum, False,
                  mod.qconfig)
        qat.weight = linear.weight
        qat.bias = linear.bias
        copy_bn_state(qat.bn, bn)
        return qat

    def to_float(self):
        linear = nn.Linear(self.in_features, self.out_features)
        linear.weight, linear.bias = fuse_linear_bn_weights(self.weight, self.bias, self.bn.running_mean,
                                                            self.bn.running_var, self.bn.eps, self.bn.weight,
                                                            self.bn.bias)
        return linear
