"""``toolkit.ao.nn.intrinsic.quantized``: int8 modules with ReLU fused into the requantization (``ConvReLU2d``,
``LinearReLU``), the targets ``convert`` gives the fused float and QAT modules, as
``torch.ao.nn.intrinsic.quantized`` defines them; ``dynamic`` holds the dynamically quantized ``LinearReLU``."""

import importlib

from .conv_relu import ConvReLU2d
from .linear_relu import LinearReLU

__all__ = ["ConvReLU2d", "LinearReLU"]


def __getattr__(name: str):
    if name == "dynamic":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
