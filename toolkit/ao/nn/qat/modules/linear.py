"""``qat.Linear``: a Linear whose weight passes through the qconfig's fake quantization on every forward, so
training sees the rounding the int8 model will have (``torch.ao.nn.qat.Linear``)."""

from __future__ import annotations

from toolkit import nn
from toolkit.nn import functional as F
from toolkit.nn.utils.parametrize import type_before_parametrizations


def check_float_module(cls, mod, float_type) -> None:
    """PyTorch's checks of ``from_float``'s argument: the expected float type and a usable qconfig."""
    if type_before_parametrizations(mod) is not float_type:
        raise AssertionError(f"qat.{cls.__name__}.from_float only works for {float_type.__name__}, got "
                             f"{type_before_parametrizations(mod).__name__}")
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    if not mod.qconfig:
        raise AssertionError("Input float module must have a valid qconfig")


def attach_weight_fake_quant(mod: nn.Module, qconfig, factory_kwargs=None) -> None:
    """Give ``mod`` its ``qconfig`` and the ``weight_fake_quant`` that qconfig builds."""
    if not qconfig:
        raise AssertionError("qconfig must be provided for QAT module")
    mod.qconfig = qconfig
    mod.weight_fake_quant = qconfig.weight(factory_kwargs=factory_kwargs)


class Linear(nn.Linear):
    """``F.linear(input, weight_fake_quant(weight), bias)``; ``from_float`` shares the float module's
    parameters."""

    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features: int, out_features: int, bias: bool = True, qconfig=None, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(in_features, out_features, bias, **factory_kwargs)
        attach_weight_fake_quant(self, qconfig, factory_kwargs)

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        """The QAT module over ``mod``'s own parameters (``mod`` a Linear, or the Linear of a fused
        LinearReLU), with ``mod.qconfig``."""
        check_float_module(cls, mod, cls._FLOAT_MODULE)
        qat = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        qat.weight = mod.weight
        qat.bias = mod.bias
        return qat

    def to_float(self) -> nn.Linear:
        linear = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = nn.Parameter(self.bias.detach())
        linear.train(self.training)
        return linear
