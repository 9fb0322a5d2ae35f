"""``HistogramObserver``: an observer that keeps a running histogram of everything it sees and picks the clipping
range that minimizes the L2 quantization error, as ``torch.ao.quantization.HistogramObserver`` does.

Each call bins the new tensor over the union of the old and new ranges; when that range grew, the old histogram is
first upsampled 16 times and re-binned into the new range (PyTorch's ``_combine_histograms``), so the histogram's
shape, and the qparams derived from it, match PyTorch's on the same data. ``calculate_qparams`` walks the quantile
bounds inward (``_non_linear_param_search``) while the estimated error keeps falling, then derives scale and zero
point from the chosen range with the uniform observers' arithmetic.

Example::

    >>> obs = HistogramObserver(reduce_range=True)
    >>> obs(toolkit.randn(1000))
    >>> obs.calculate_qparams()
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import factories
from ..._core import dtypes as _dt
from ...ops import api
from . import _qtypes as q
from ._qtypes import per_tensor_affine, quint8
from .observer import _FLOAT32_EPS, UniformQuantizationObserverBase

_F32 = np.float32


def _get_norm(delta_begin, delta_end, density):
    """``density * (end^3 - begin^3) / 3``: the L2 error of values spread evenly over ``[begin, end]`` (float32)."""
    return density * ((delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / _F32(3))


class HistogramObserver(UniformQuantizationObserverBase):
    """A running histogram of the values seen (``bins`` bins over the running min/max); qparams from the range
    that minimizes the estimated L2 quantization error. Per-tensor schemes only."""

    def __init__(self, bins: int = 2048, dtype=quint8, qscheme=per_tensor_affine, reduce_range: bool = False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps: float = _FLOAT32_EPS,
                 is_dynamic: bool = False, **kwargs):
        if qscheme not in q.PER_TENSOR:
            raise NotImplementedError("HistogramObserver's qscheme only support toolkit.per_tensor_symmetric "
                                      "and toolkit.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.bins = bins
        self.register_buffer("histogram", api.zeros((bins,), dtype=_dt.float32))
        self.register_buffer("min_val", factories.tensor(float("inf")))
        self.register_buffer("max_val", factories.tensor(float("-inf")))
        low, high = q.int_range(dtype)
        self.dst_nbins = 2 ** int(np.log2(high - low + 1))
        self.upsample_rate = 16  # the old histogram is split this finely before it is re-binned

    # ------------------------------------------------------------------ the range search
    def _compute_quantization_error(self, next_start_bin: int, next_end_bin: int) -> float:
        """The L2 error of quantizing the histogram to ``dst_nbins`` levels over bins ``[start, end]``, in float32
        element-wise arithmetic as PyTorch's tensor code computes it."""
        bin_width = (float(self.max_val) - float(self.min_val)) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        bw, dbw = _F32(bin_width), _F32(dst_bin_width)
        src_bin_begin = (np.arange(self.bins) - next_start_bin).astype(_F32) * bw
        src_bin_end = src_bin_begin + bw
        top = _F32(self.dst_nbins - 1)
        dst_bin_of_begin = np.clip(np.floor_divide(src_bin_begin, dbw), _F32(0), top)
        dst_bin_of_begin_center = (dst_bin_of_begin + _F32(0.5)) * dbw
        dst_bin_of_end = np.clip(np.floor_divide(src_bin_end, dbw), _F32(0), top)
        density = self.histogram.numpy() / bw
        half = _F32(dst_bin_width / 2)
        norm = _get_norm(src_bin_begin - dst_bin_of_begin_center, np.full(self.bins, half, _F32), density)
        norm = norm + (dst_bin_of_end - dst_bin_of_begin - _F32(1)) * _get_norm(_F32(-dst_bin_width / 2), half,
                                                                                  density)
        dst_bin_of_end_center = dst_bin_of_end * dbw + half
        norm = norm + _get_norm(_F32(-dst_bin_width / 2), src_bin_end - dst_bin_of_end_center, density)
        return float(api.sum(factories.tensor(norm.astype(_F32))))

    def _non_linear_param_search(self):
        """The ``(min, max)`` that clip the histogram's tails while the L2 error keeps falling (PyTorch's
        ``_non_linear_param_search``, after caffe2's norm minimization)."""
        if self.histogram.shape[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = float(api.sum(self.histogram))
        c_sum = api.cumsum(self.histogram, dim=0).numpy()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            low, high = _F32(next_alpha * total), _F32(next_beta * total)
            left, right = start_bin, end_bin
            while left < end_bin and c_sum[left] < low:
                left += 1
            while right > start_bin and c_sum[right] > high:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin, alpha = left, next_alpha
            else:
                next_end_bin, beta = right, next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        return self.min_val + bin_width * start_bin, self.min_val + bin_width * (end_bin + 1)

    # ------------------------------------------------------------------ combining histograms
    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        """``histogram`` (over ``[orig_min, orig_max]``) split ``upsample_rate`` times, each piece's midpoint
        re-binned into ``bins`` bins over ``[update_min, update_max]``."""
        histogram = api.repeat_interleave(histogram, self.upsample_rate) / self.upsample_rate
        fine = self.bins * self.upsample_rate
        bin_size = (orig_max - orig_min) / fine
        mid_points = api.linspace(float(orig_min), float(orig_max), fine + 1)[:-1] + 0.5 * bin_size
        boundaries = api.linspace(float(update_min), float(update_max), self.bins + 1)
        buckets = api.bucketize(mid_points, boundaries, right=True) - 1
        buckets = api.clamp(buckets, 0, self.bins - 1)  # rounding may put a midpoint past either end
        return api.bincount(buckets, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min, update_max):
        if float(update_min) == float(orig_min) and float(update_max) == float(orig_max):
            return orig_hist + update_hist
        if float(orig_min) == float(orig_max):  # the old values were all one number: bin it in the new range
            bin_value = api.sum(orig_hist)
            moved = api.histc(orig_min.reshape(1), bins=self.bins, min=float(update_min), max=float(update_max))
            return moved * bin_value + update_hist
        if float(update_min) > float(orig_min):
            raise AssertionError("update_min must be <= orig_min")
        if float(update_max) < float(orig_max):
            raise AssertionError("update_max must be >= orig_max")
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max, update_min, update_max)

    def reset_histogram(self, x, min_val, max_val) -> None:
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        self.histogram.copy_(api.histc(x, self.bins, min=float(min_val), max=float(max_val)))

    def forward(self, x_orig):
        """Add ``x_orig``'s values to the histogram (infinities are ignored, with PyTorch's warning); return
        ``x_orig`` unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = api.aminmax(x)
        if float(x_min) == float("-inf") or float(x_max) == float("inf"):
            warnings.warn("toolkit.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[api.abs(x) != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = api.aminmax(x)
        current_min, current_max = self.min_val, self.max_val
        if float(current_min) == float("inf") or float(current_max) == float("-inf"):
            self.reset_histogram(x, x_min, x_max)
            return x_orig
        new_min = api.minimum(current_min, x_min)
        new_max = api.maximum(current_max, x_max)
        update = api.histc(x, self.bins, min=float(new_min), max=float(new_max))
        if float(new_min) == float(current_min) and float(new_max) == float(current_max):
            self.histogram.copy_(self.histogram + update)
        else:
            combined = self._combine_histograms(self.histogram, current_min, current_max, update, new_min, new_max)
            self.histogram.copy_(combined)
            self.min_val.copy_(new_min)
            self.max_val.copy_(new_max)
        return x_orig

    def calculate_qparams(self):
        """``(scale, zero_point)`` of the error-minimizing range; PyTorch's defaults (with its warning) before
        any data was seen."""
        if float(self.min_val) == float("inf") and float(self.max_val) == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning default scale and zero "
                          "point ", stacklevel=2)
            return factories.tensor([1.0]), factories.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the number of bins supplied "
                                 "while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
