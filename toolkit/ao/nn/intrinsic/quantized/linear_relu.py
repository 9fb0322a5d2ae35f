"""``LinearReLU``: the int8 linear layer with ReLU fused into its requantization (``quantized::linear_relu``), which
``convert`` swaps in for ``nni.LinearReLU`` and the QAT ``LinearReLU``, as
``torch.ao.nn.intrinsic.quantized.LinearReLU``."""

from __future__ import annotations

from toolkit.ao.nn import intrinsic as nni
from toolkit.ao.nn.quantized import Linear
from toolkit.ops import quantized_linear as _ql


class LinearReLU(Linear):
    """``relu(linear(x))`` on quint8 tensors, in one requantization."""

    _FLOAT_MODULE = nni.LinearReLU

    def forward(self, x):
        return _ql.linear_relu(x, self._packed_params._packed_params, self.scale, self.zero_point)

    def _get_name(self) -> str:
        return "QuantizedLinearReLU"
