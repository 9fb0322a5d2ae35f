"""Autograd functions behind modules whose PyTorch gradient is hand-written rather than derived.

``CrossMapLRN2d`` keeps PyTorch's own forward and backward (Lua Torch's cross-map LRN): its backward sums
the ratio over a channel window that is not the forward's, so the numbers match PyTorch only when both
are reproduced as written there.
"""

from __future__ import annotations

from ...autograd import Function
from ...ops import api as _api
from ...tensor import Tensor
from .. import functional as F


def _channel_window_sum(x: Tensor, before: int, after: int) -> Tensor:
    """For each channel c of (N, C, H, W) ``x``, the sum of channels ``c - before .. c + after`` (zeros outside)."""
    padded = F.pad(x.unsqueeze(1), (0, 0, 0, 0, before, after))
    width = before + after + 1
    return F.avg_pool3d(padded, (width, 1, 1), stride=1).squeeze(1) * width


class CrossMapLRN2d(Function):
    """``x * (k + alpha / size * window sum of x**2) ** -beta`` over channels, with PyTorch's backward."""

    @staticmethod
    def forward(ctx, input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        pre_pad = (size - 1) // 2 + 1
        squares = input * input
        sums = _channel_window_sum(squares, pre_pad - 1, pre_pad - 1)
        # PyTorch's running-window update never subtracts channel 0: every channel from pre_pad on counts it.
        sums = _api.cat([sums[:, :pre_pad], sums[:, pre_pad:] + squares[:, :1]], 1)
        scale = sums * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        inverse_pre_pad = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        accum = _channel_window_sum(ratio, inverse_pre_pad, size - 1 - inverse_pre_pad)
        grad_input = scale.pow(-ctx.beta) * grad_output - input * accum * (2 * ctx.alpha * ctx.beta / size)
        return grad_input, None, None, None, None
