"""The fused QAT modules; see :mod:`.conv_fused` and :mod:`.linear_fused`."""

from .conv_fused import (
    ConvBn1d,
    ConvBn2d,
    ConvBn3d,
    ConvBnReLU1d,
    ConvBnReLU2d,
    ConvBnReLU3d,
    ConvReLU1d,
    ConvReLU2d,
    ConvReLU3d,
    freeze_bn_stats,
    update_bn_stats,
)
from .linear_fused import LinearBn1d, LinearReLU

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "ConvReLU1d",
           "ConvReLU2d", "ConvReLU3d", "LinearBn1d", "LinearReLU", "freeze_bn_stats", "update_bn_stats"]
