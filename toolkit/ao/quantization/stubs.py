"""Where eager-mode quantization enters and leaves the int8 domain: ``QuantStub`` (an identity that ``prepare``
observes and ``convert`` turns into ``Quantize``), ``DeQuantStub`` (turned into ``DeQuantize``) and
``QuantWrapper``, which surrounds a module with the two, as ``torch.ao.quantization.stubs`` defines them::

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.fc, self.dequant = QuantStub(), nn.Linear(4, 2), DeQuantStub()

        def forward(self, x):
            return self.dequant(self.fc(self.quant(x)))
"""

from __future__ import annotations

from ...nn import Module


class _Stub(Module):
    """An identity marking where ``convert`` puts a (de)quantization; ``qconfig``, if given, overrides the
    parent's."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Identity before conversion (its observer records the input range); ``Quantize`` after."""


class DeQuantStub(_Stub):
    """Identity before conversion; ``DeQuantize`` after (it gets no observer)."""


class QuantWrapper(Module):
    """``dequant(module(quant(x)))``: ``module`` with a quant stub before it and a dequant stub after, both
    taking ``module``'s qconfig."""

    def __init__(self, module: Module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))


__all__ = ["DeQuantStub", "QuantStub", "QuantWrapper"]
