"""The compiled 2x2, stride-2 max pool of quantized activations (the pooling after most quantized convolutions),
on the stored integers themselves: no float32 copy of the input, no argmax indices (the float kernel's backward
needs them, a quantized tensor has none). The input may have any strides (a quantized convolution's output is
channels last, read as (N, C, H, W)); the output (N, C, H / 2, W / 2) is laid out as the input is, channels last
or planar, as PyTorch's is (a channels-last output feeds the next convolution's im2col with channel runs)::

    out = max_pool2d_2x2(x)    # x (N, C, H, W) integers, H and W even

The maximum of the integers is the integer of the maximum, so it equals the float kernel on them exactly.
Imported only when such a pooling first runs (numba), compiled once and cached on disk.
"""

from __future__ import annotations

import numba
import numpy as np


def max_pool2d_2x2(x: np.ndarray) -> np.ndarray:
    """The maximum over each 2x2 window, stride 2, of ``x`` (N, C, H, W) with H and W even."""
    n, c, h, w = x.shape
    if x.strides[1] == x.itemsize and c > 1:  # channels last: the channels innermost, as they lie
        out = np.empty((n, h // 2, w // 2, c), x.dtype).transpose(0, 3, 1, 2)
        _pool_channels_last(x, out)
        return out
    out = np.empty((n, c, h // 2, w // 2), x.dtype)
    _pool_planes(x, out)
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _window(x, b, ch, i, j):  # pragma: no cover - compiled
    """The maximum of window (i, j) of plane (b, ch)."""
    return max(max(x[b, ch, 2 * i, 2 * j], x[b, ch, 2 * i, 2 * j + 1]),
               max(x[b, ch, 2 * i + 1, 2 * j], x[b, ch, 2 * i + 1, 2 * j + 1]))


@numba.njit(cache=True, nogil=True)
def _pool_planes(x, out):  # pragma: no cover - compiled
    n, c, ho, wo = out.shape
    for b in range(n):
        for ch in range(c):
            for i in range(ho):
                for j in range(wo):
                    out[b, ch, i, j] = _window(x, b, ch, i, j)


@numba.njit(cache=True, nogil=True)
def _pool_channels_last(x, out):  # pragma: no cover - compiled
    n, c, ho, wo = out.shape
    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                for ch in range(c):  # the input's innermost axis
                    out[b, ch, i, j] = _window(x, b, ch, i, j)
