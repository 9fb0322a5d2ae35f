"""Converting the weights of 2-D / 3-D convolutions to a memory format (``channels_last``...)."""

from __future__ import annotations

from typing import TypeVar

from ..modules.conv import _ConvNd
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: _M, spatial_dims: int, memory_format) -> _M:
    """Convert the weight of every convolution (plain or transposed) with ``spatial_dims`` kernel dimensions."""
    if isinstance(module, _ConvNd) and len(module.kernel_size) == spatial_dims:
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight_data.resize_(weight_data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, spatial_dims, memory_format)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format) -> _M:
    """Give every ``Conv2d`` / ``ConvTranspose2d`` weight in ``module`` the layout ``memory_format``."""
    return _convert(module, 2, memory_format)


def convert_conv3d_weight_memory_format(module: _M, memory_format) -> _M:
    """Give every ``Conv3d`` / ``ConvTranspose3d`` weight in ``module`` the layout ``memory_format``."""
    return _convert(module, 3, memory_format)
