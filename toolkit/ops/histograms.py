"""Counting values into bins: histc, histogram (equal-width bins or given edges) and bincount.

None of them is differentiable (a count is piecewise constant). Bins are
found as PyTorch finds them, so a value on an edge lands in the same bin: for
equal-width bins the position ``(x - left) * bins / (right - left)``, computed in
the input's dtype (``histogram`` then corrects it against the edges), for given
edges a binary search; the last bin includes its right edge, and values outside
``[left, right]`` are not counted.

Example::

    >>> toolkit.histc(toolkit.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
"""

from __future__ import annotations

import math

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .registry import REDUCTION, op, refuses_names


def _linspace(left: float, right: float, n: int, dtype) -> np.ndarray:
    """``n`` equally spaced values from ``left`` to ``right`` as PyTorch's linspace computes them: from the start
    for the first half and from the end for the second, each with one rounding (its kernel's fused multiply-add,
    here the product and sum in extended precision), so the edges, and the bins of values on them, are PyTorch's."""
    t = np.dtype(dtype).type
    lo, hi = t(left), t(right)
    if n == 1:
        return np.array([lo], dtype=dtype)
    step = (hi - lo) / t(n - 1)
    i = np.arange(n)
    # half precision rounds after every operation, as PyTorch's Half arithmetic does; wider types round once
    wide = t if t is np.float16 else np.longdouble
    from_start = wide(lo) + wide(step) * i.astype(wide)
    from_end = wide(hi) - wide(step) * (n - 1 - i).astype(wide)
    return np.where(i < n // 2, from_start, from_end).astype(dtype)


def _count(x: np.ndarray, edges: np.ndarray, weight, linear: bool, local_search: bool) -> np.ndarray:
    """Counts (or summed weights) of ``x`` in the bins between consecutive ``edges``."""
    nbins = len(edges) - 1
    acc = x.dtype.type  # the position is computed in the input's dtype (Half rounding after each operation)
    left, right = edges[0], edges[-1]
    keep = (x >= left) & (x <= right)
    v = x[keep]
    w = None if weight is None else weight[keep]
    if linear:
        with np.errstate(invalid="ignore", divide="ignore"):
            pos = ((v.astype(acc) - acc(left)) * acc(nbins) / (acc(right) - acc(left))).astype(np.int64)
        if local_search:  # the edges decide where rounding put a value beside its bin
            pos = np.clip(pos, 0, nbins)
            pos = np.where((pos > 0) & (v < edges[pos]), pos - 1, pos)
            nxt = np.minimum(pos + 1, nbins)
            pos = np.where((pos < nbins) & (v >= edges[nxt]), nxt, pos)
    else:
        pos = np.searchsorted(edges, v, side="right") - 1
    pos = np.where(pos == nbins, nbins - 1, pos)
    return np.bincount(pos, weights=w, minlength=nbins)[:nbins]


def _check_bins(bins: int) -> None:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


# ----------------------------------------------------------------------------- histc
def _check_histc_dtype(d) -> None:
    """``d``: a numpy dtype (kernels) or a toolkit dtype (meta rules)."""
    if not (d.is_floating_point if isinstance(d, _dt.dtype) else np.dtype(d).kind == "f"):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_dt.title(d)}'")


@op("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", kind=REDUCTION, differentiable=False)
def histc(self, bins=100, min=0, max=0):  # noqa: A002 - PyTorch's argument names
    """Counts of ``self``'s elements in ``bins`` equal-width bins over ``[min, max]`` (the data's range when both
    are 0); elements outside are ignored. Floating inputs only; the result has the input's dtype."""
    _check_histc_dtype(self.dtype)
    _check_bins(bins)
    left, right = float(min), float(max)
    if left == right and self.size:
        left, right = float(np.min(self)), float(np.max(self))
    if left == right:
        left, right = left - 1, right + 1
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(f"torch.histc: range of [{left}, {right}] is not finite")
    if left > right:
        raise RuntimeError("torch.histc: max must be larger than min")
    edges = _linspace(left, right, bins + 1, self.dtype)
    return _count(self.reshape(-1), edges, None, True, False).astype(self.dtype)


@histc.meta_rule
def _(self, bins=100, min=0, max=0):  # noqa: A002
    _check_histc_dtype(self.dtype)
    _check_bins(bins)
    return TensorMeta((bins,), self.dtype, self.device)


@histc.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)),), {}
    yield (rng.uniform(-2, 2, 20), 4), {"min": -1, "max": 1}  # values outside the range are not counted
    yield (np.array([0.0, 0.25, 0.5, 0.75, 1.0]), 4, 0, 1), {}  # on the edges
    yield (np.array([2.0, 2.0]), 4), {}  # one value: the range widens by 1 each side
    yield (np.zeros((0,)), 3), {}
    yield (rng.uniform(-2, 2, (4, 3)).T.astype(np.float32), 7), {}
    yield (rng.uniform(0, 5, 30).astype(np.float16), 5), {}


# ----------------------------------------------------------------------------- histogram
def _check_histogram(x_dtype, weight_dtype=None, bins_dtype=None) -> None:
    if x_dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dt.title(x_dtype)}'")
    if bins_dtype is not None and bins_dtype is not x_dtype:
        raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                           f"input with dtype {x_dtype.name} and bins for dimension 0 with dtype {bins_dtype.name}")
    if weight_dtype is not None and weight_dtype is not x_dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, it should have the same dtype as the "
                           f"input tensor, but got input with dtype {x_dtype.name} and weight with dtype "
                           f"{weight_dtype.name}")


def _dtype_of(a):
    return None if a is None else _dt.from_numpy_dtype(a.dtype)


def _histogram(x: np.ndarray, edges: np.ndarray, weight, density: bool, linear: bool):
    _check_histogram(_dtype_of(x), _dtype_of(weight), _dtype_of(edges))
    if weight is not None and weight.shape != x.shape:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(x.shape)} and weight with shape {list(weight.shape)}")
    hist = _count(x.reshape(-1), edges, None if weight is None else weight.reshape(-1), linear, linear)
    hist = hist.astype(x.dtype)
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = (hist / hist.sum() / np.diff(edges)).astype(x.dtype)
    return hist, edges


@op("histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> (Tensor hist, Tensor bin_edges)", kind=REDUCTION, differentiable=False)
def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):  # noqa: A002
    """Counts of ``self``'s elements (or their summed ``weight``) in ``bins`` equal-width bins over ``range`` (the
    data's range by default), and the bins' edges; ``density`` divides by the total and the bin widths."""
    _check_histogram(_dtype_of(self), _dtype_of(weight))
    _check_bins(bins)
    if range is not None:
        left, right = float(range[0]), float(range[1])
    elif self.size:
        left, right = float(np.min(self)), float(np.max(self))
    else:
        left, right = 0.0, 1.0
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{left}, {right}] is not finite")
    if left > right:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {left:g} max {right:g} "
                           "for dimension 0")
    if left == right:
        left, right = left - 0.5, right + 0.5
    return _histogram(self, _linspace(left, right, bins + 1, self.dtype), weight, density, True)


@op("histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False) "
    "-> (Tensor hist, Tensor bin_edges)", kind=REDUCTION, differentiable=False)
def histogram_bins_tensor(self, bins, weight=None, density=False):
    """Counts of ``self``'s elements (or their summed ``weight``) between the consecutive edges in ``bins``."""
    if bins.ndim != 1 or bins.size < 2:
        raise RuntimeError("torch.histogramdd: bins tensor should have one dimension and at least 2 elements, "
                           f"but got {bins.ndim} dimensions and {bins.size} elements")
    return _histogram(self, bins.copy(), weight, density, False)


for _o in (histogram_bin_ct, histogram_bins_tensor):
    _o.return_type = return_types.histogram


@histogram_bin_ct.meta_rule
def _(self, bins=100, range=None, weight=None, density=False):  # noqa: A002
    _check_histogram(self.dtype, None if weight is None else weight.dtype)
    _check_bins(bins)
    return TensorMeta((bins,), self.dtype, self.device), TensorMeta((bins + 1,), self.dtype, self.device)


@histogram_bins_tensor.meta_rule
def _(self, bins, weight=None, density=False):
    _check_histogram(self.dtype, None if weight is None else weight.dtype, bins.dtype)
    n = bins.shape[0] if len(bins.shape) == 1 else 0
    return TensorMeta((max(n - 1, 0),), self.dtype, self.device), TensorMeta((n,), self.dtype, self.device)


@histogram_bin_ct.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)),), {}
    yield (rng.uniform(-2, 2, 20), 4), {"range": (-1.0, 1.0)}
    yield (np.array([0.0, 0.1, 0.2, 0.3, 0.7, 1.0]), 10), {}  # values on the edges
    yield (np.array([2.0, 2.0]), 4), {}
    yield (np.zeros((0,)), 3), {}
    yield (rng.uniform(0, 1, 10), 3), {"density": True}
    yield (rng.uniform(0, 1, (2, 5)).astype(np.float32), 5), {"density": True}


@histogram_bins_tensor.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), np.array([-2.0, -0.5, 0.0, 1.0, 2.0])), {}
    yield (np.array([0.0, 1.0, 1.5, 3.0, 4.0]), np.array([0.0, 1.5, 3.0])), {"density": True}
    yield (np.zeros((0,)), np.array([0.0, 1.0])), {}
    yield (rng.uniform(0, 1, 8).astype(np.float32), np.array([0.0, 0.25, 0.5, 1.0], np.float32)), {}


# ----------------------------------------------------------------------------- bincount
def _check_bincount(x_dtype, x_ndim: int, weights_shape, n: int, minlength: int) -> None:
    if not x_dtype.is_integral:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_dt.title(x_dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x_ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights_shape is not None and (len(weights_shape) != 1 or weights_shape[0] != n):
        raise RuntimeError("weights should be 1-d and have the same length as input")


def _bincount_dtype(weights_dtype):
    """Integer counts without weights; float32 weights sum in float32, any others in float64."""
    if weights_dtype is None:
        return _dt.int64
    return _dt.float32 if weights_dtype is _dt.float32 else _dt.float64


@op("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor", kind=REDUCTION, out=False,
    differentiable=False)
def bincount(self, weights=None, minlength=0):
    """How often each value ``0..max(self)`` occurs in the 1-D non-negative integer ``self`` (at least
    ``minlength`` bins); with ``weights``, their sums instead of counts."""
    _check_bincount(_dt.from_numpy_dtype(self.dtype), self.ndim, None if weights is None else weights.shape,
                    self.shape[0] if self.ndim else 0, minlength)
    if self.size and self.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    out = _bincount_dtype(None if weights is None else _dt.from_numpy_dtype(weights.dtype))
    w = None if weights is None else weights.astype(np.float64)
    return np.bincount(self.astype(np.int64), weights=w, minlength=minlength).astype(out.np)


@bincount.meta_rule
def _(self, weights=None, minlength=0):
    _check_bincount(self.dtype, len(self.shape), None if weights is None else tuple(weights.shape),
                    self.shape[0] if len(self.shape) else 0, minlength)
    data = getattr(self, "_data", None)  # the length is known only with the data
    n = max(int(data.max()) + 1 if data.size else 0, minlength) if isinstance(data, np.ndarray) else None
    return TensorMeta((n,), _bincount_dtype(None if weights is None else weights.dtype), self.device)


@bincount.sample_inputs
def _(rng):
    yield (rng.integers(0, 6, 20),), {}
    yield (rng.integers(0, 4, 10).astype(np.int32),), {"minlength": 7}
    yield (rng.integers(0, 5, 10), rng.uniform(0, 1, 10)), {}
    yield (rng.integers(0, 5, 10).astype(np.uint8), rng.uniform(0, 1, 10).astype(np.float32)), {"minlength": 2}
    yield (rng.integers(0, 5, 10), rng.integers(0, 3, 10)), {}  # integer weights sum in float64
    yield (np.zeros(0, np.int64),), {"minlength": 3}

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("bincount", "histc", "histogram"))
