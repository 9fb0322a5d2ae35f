"""The ``"quantized_cpu"`` kernels of 2-d pooling (``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d``), as
PyTorch's quantized CPU kernels compute them: on the integers, the output keeping the input's scale and zero point::

    qy = toolkit.nn.functional.max_pool2d(qx, 2)              # max of the integers in each window
    qy = toolkit.nn.functional.adaptive_avg_pool2d(qx, 1)     # round(sum(q) * float32(1 / count))

Averages sum the stored integers in int64, each padded place a divisor counts adding the zero point (which stands
for 0.0), and round the sum times the float32 multiplier ``1 / divisor`` half to even. The zero point is never
subtracted first, as PyTorch's kernels do it: an average that lands on a half rounds by the parity of the stored
integer, not of the integer less the zero point.
"""

from __future__ import annotations

import numpy as np

from . import registry as R
from .pooling import avg_pool_setup
from .pooling_adaptive import adaptive_check, adaptive_windows
from .quantized import RANGES
from .quantized_elementwise import make_like, per_tensor


def _requantize_sum(q, total: np.ndarray, div: np.ndarray) -> np.ndarray:
    """``round_half_even(float32(total) * float32(1 / div))``, clamped to ``q``'s dtype's range."""
    mult = (1.0 / div.astype(np.float64)).astype(np.float32)
    v = np.rint(total.astype(np.float32) * mult)
    return np.clip(v, *RANGES[q.dtype.name]).astype(q.dtype.np)


_max_pool2d_cpu = R.get("max_pool2d").kernels["cpu"]
_avg_pool2d_cpu = R.get("avg_pool2d").kernels["cpu"]


def _is_2x2(q, kernel_size, stride, padding, dilation) -> bool:
    """Whether the pooling is 2x2 windows at stride 2 tiling a 4-d input exactly (``_qconv_maxpool``'s case)."""
    def pair(v):
        v = [v] if isinstance(v, int) else list(v)
        return v * 2 if len(v) == 1 else v
    return (q.dim() == 4 and pair(kernel_size) == [2, 2] and (not stride or pair(stride) == [2, 2])
            and pair(padding) == [0, 0] and pair(dilation) == [1, 1] and q.shape[2] % 2 == 0 and q.shape[3] % 2 == 0
            and q.shape[2] > 0 and q.shape[3] > 0)


def _max_pool2d(q, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    per_tensor(q, "max_pool2d")
    if _is_2x2(q, kernel_size, stride, padding, dilation):
        from . import _qconv_maxpool  # optional: numba, never loaded by import toolkit

        return make_like(q, _qconv_maxpool.max_pool2d_2x2(q._data))
    # The integers as float32 are exact, and the maximum of the integers is the integer of the maximum.
    out = _max_pool2d_cpu(q._data.astype(np.float32), kernel_size, stride, padding, dilation, ceil_mode)
    return make_like(q, out.astype(q.dtype.np))


def _avg_pool2d(q, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    per_tensor(q, "avg_pool2d")
    total = _avg_pool2d_cpu(q._data.astype(np.int64), kernel_size, stride, padding, ceil_mode, count_include_pad, 1)
    *_, div = avg_pool_setup(q.shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    *_, valid = avg_pool_setup(q.shape, kernel_size, stride, padding, ceil_mode, False, None)
    return make_like(q, _requantize_sum(q, total + (div - valid) * q._zero_point, div))


def _adaptive_avg_pool2d(q, output_size):
    per_tensor(q, "adaptive_avg_pool2d")
    ho, wo = adaptive_check("adaptive_avg_pool2d", tuple(q.shape), output_size, 2)[-2:]
    h, w = q.shape[-2:]
    (hs, he), (ws, we) = adaptive_windows(h, ho), adaptive_windows(w, wo)
    # Window sums from a 2-d running sum (int64: exact).
    c = np.zeros((*q.shape[:-2], h + 1, w + 1), np.int64)
    c[..., 1:, 1:] = q._data.astype(np.int64).cumsum(-2).cumsum(-1)
    total = (c[..., he[:, None], we[None, :]] - c[..., hs[:, None], we[None, :]]
             - c[..., he[:, None], ws[None, :]] + c[..., hs[:, None], ws[None, :]])
    count = (he - hs)[:, None] * (we - ws)[None, :]
    return make_like(q, _requantize_sum(q, total, count))


R.get("max_pool2d").kernels["quantized_cpu"] = _max_pool2d
R.get("avg_pool2d").kernels["quantized_cpu"] = _avg_pool2d
R.get("adaptive_avg_pool2d").kernels["quantized_cpu"] = _adaptive_avg_pool2d
