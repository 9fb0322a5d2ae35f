"""The static quantized modules, as ``torch.ao.nn.quantized.modules``: each ``from_float`` of an observed float
module (what ``convert`` calls) gives its int8 twin."""

from .activation import ReLU6
from .conv import Conv2d
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional
from .linear import Linear, LinearPackedParams
from .quantize import DeQuantize, Quantize

__all__ = ["Conv2d", "DeQuantize", "FloatFunctional", "FXFloatFunctional", "Linear", "LinearPackedParams",
           "QFunctional", "Quantize", "ReLU6"]
