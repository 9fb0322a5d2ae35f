"""Functional pooling with PyTorch's Python signatures (``stride=None``, ``return_indices=``, ``None`` sizes).

The registry ops take ``stride=[]`` for "same as kernel_size" and always one
return; these wrappers accept PyTorch's spellings and pick the op.
"""

from __future__ import annotations

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool2d",
           "adaptive_avg_pool2d"]


def _stride(stride):
    return () if stride is None else stride


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """2-d max pooling; ``return_indices=True`` also returns PyTorch's flat per-plane indices."""
    if return_indices:
        return _api.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)
    return _api.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """2-d max pooling returning (values, indices)."""
    return _api.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """1-d max pooling returning (values, indices)."""
    return _api.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-d max pooling; ``return_indices=True`` also returns the indices."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _api.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """2-d average pooling; ``stride=None`` means ``kernel_size``."""
    return _api.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad,
                           divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling to ``output_size``; a ``None`` entry keeps that input dimension."""
    if isinstance(output_size, int):
        return _api.adaptive_avg_pool2d(input, [output_size, output_size])
    size: list[int] = []
    for i, s in enumerate(output_size):
        size.append(input.size(i - len(output_size)) if s is None else s)
    return _api.adaptive_avg_pool2d(input, size)
