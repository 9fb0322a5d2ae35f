"""Quantized activations, as ``torch.ao.nn.quantized``'s: ``ReLU6`` clamps the integers between the zero point and
6.0 quantized with the input's own parameters (``quantized::relu6``), so the output keeps them::

    ReLU6()(qx)     # same scale and zero point as qx
"""

from __future__ import annotations

from ..... import nn
from .....ops import quantized_elementwise as _qe
from .....tensor import Tensor

__all__ = ["ReLU6"]


class ReLU6(nn.ReLU):
    """``min(max(x, 0), 6)`` of a quantized tensor, on its integers."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _qe.relu6(input, self.inplace)

    def _get_name(self) -> str:
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False) -> ReLU6:
        return ReLU6(mod.inplace)
