"""``F.unfold`` and ``F.fold``: sliding-window extraction and its adjoint, over the registry's im2col / col2im."""

from __future__ import annotations

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["fold", "unfold"]


def _pair(v) -> list:
    return [v, v] if isinstance(v, int) else list(v)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C, H, W) to (N, C*kh*kw, L): each sliding block of the input as one column."""
    return _api.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C*kh*kw, L) to (N, C, *output_size): sliding blocks summed back into an image (``unfold``'s adjoint)."""
    return _api.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                       _pair(stride))
