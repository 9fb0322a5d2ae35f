"""``torch.histogramdd``: counts of D-dimensional points in a grid of bins.

The last dim of the input holds each point's coordinates; every dim gets its own bins, given as a count
(equal-width bins over ``range`` or the data's extent, edges computed as PyTorch's linspace computes them)
or as a tensor of edges. A point falls in bin ``i`` of a dim when ``edges[i] <= x < edges[i + 1]`` (the
last bin also takes its right edge); points outside any dim's edges are not counted. ``density`` divides
by the total and by each bin's volume.
"""

from __future__ import annotations

import math

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .histograms import _linspace
from .registry import REDUCTION, op

_NAME = "torch.histogramdd"


def _check(self_dtype, self_shape, n_bins, weight_dtype, weight_shape, counts: bool = False) -> int:
    if counts and len(self_shape) and n_bins != self_shape[-1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if self_dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dt.title(self_dtype)}'")
    if len(self_shape) < 2:
        raise RuntimeError(f"{_NAME}: input tensor should have at least 2 dimensions")
    d = self_shape[-1]
    if n_bins != d:
        raise RuntimeError(f"{_NAME}: expected {d} sequences of bin edges for a {d}-dimensional histogram but got "
                           f"{n_bins}")
    if weight_dtype is not None:
        if weight_dtype is not self_dtype:
            raise RuntimeError(f"{_NAME}: if weight tensor is provided, it should have the same dtype as the input "
                               f"tensor, but got input with dtype {self_dtype.name} and weight with dtype "
                               f"{weight_dtype.name}")
        if tuple(weight_shape) != tuple(self_shape[:-1]):
            raise RuntimeError(f"{_NAME}: if weight tensor is provided it should have the same shape as the input "
                               f"tensor excluding its innermost dimension, but got input with shape "
                               f"{list(self_shape)} and weight with shape {list(weight_shape)}")
    return d


def _dtype(a):
    return None if a is None else _dt.from_numpy_dtype(a.dtype)


def _outer_edges(points: np.ndarray, range) -> list[tuple[float, float]]:  # noqa: A002
    d = points.shape[1]
    if range is not None:
        if len(range) != 2 * d:
            raise RuntimeError(f"{_NAME}: for a {d}-dimensional histogram range should have {2 * d} elements, but "
                               f"got {len(range)}")
        pairs = [(float(range[2 * i]), float(range[2 * i + 1])) for i in builtins_range(d)]
    elif points.shape[0]:
        pairs = [(float(points[:, i].min()), float(points[:, i].max())) for i in builtins_range(d)]
    else:
        pairs = [(0.0, 0.0)] * d
    out = []
    for i, (left, right) in enumerate(pairs):
        if not (math.isfinite(left) and math.isfinite(right)):
            raise RuntimeError(f"{_NAME}: dimension {i}'s range [{left}, {right}] is not finite")
        if left > right:
            raise RuntimeError(f"{_NAME}: min should not exceed max, but got min {left:g} max {right:g} for "
                               f"dimension {i}")
        out.append((left - 0.5, right + 0.5) if left == right else (left, right))
    return out


builtins_range = range


def _bin_index(v: np.ndarray, edges: np.ndarray, linear: bool) -> np.ndarray:
    """Each value's bin (values already within the edges)."""
    nbins = len(edges) - 1
    if linear:
        acc = v.dtype.type
        left, right = edges[0], edges[-1]
        with np.errstate(invalid="ignore", divide="ignore"):
            pos = ((v - acc(left)) * acc(nbins) / (acc(right) - acc(left))).astype(np.int64)
        pos = np.clip(pos, 0, nbins)
        pos = np.where((pos > 0) & (v < edges[pos]), pos - 1, pos)
        nxt = np.minimum(pos + 1, nbins)
        pos = np.where((pos < nbins) & (v >= edges[nxt]), nxt, pos)
    else:
        pos = np.searchsorted(edges, v, side="right") - 1
    return np.where(pos == nbins, nbins - 1, pos)


def _histogramdd(tensor, edges: list[np.ndarray], weight, density: bool, linear: bool):
    """The counts in numpy, returned as ``(hist, bin_edges)`` tensors beside ``tensor``."""
    self = tensor.detach().numpy()
    weight = None if weight is None else weight.detach().numpy()
    d = self.shape[-1]
    points = self.reshape(-1, d)
    w = None if weight is None else weight.reshape(-1)
    keep = np.ones(points.shape[0], dtype=bool)
    for i, e in enumerate(edges):
        keep &= (points[:, i] >= e[0]) & (points[:, i] <= e[-1])
    shape = tuple(len(e) - 1 for e in edges)
    flat = np.zeros(points[keep].shape[0], dtype=np.int64)
    for i, e in enumerate(edges):
        flat = flat * shape[i] + _bin_index(points[keep, i], e, linear)
    counts = np.bincount(flat, weights=None if w is None else w[keep], minlength=math.prod(shape))
    hist = counts[:math.prod(shape)].reshape(shape).astype(self.dtype)
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = hist / hist.sum()
            for i, e in enumerate(edges):
                widths = np.diff(e).reshape([-1 if j == i else 1 for j in builtins_range(d)])
                hist = hist / widths
        hist = hist.astype(self.dtype)
    return return_types.histogramdd(tensor.new_tensor(hist), [tensor.new_tensor(e) for e in edges])


def _from_counts(tensor, bins, range, weight, density):  # noqa: A002
    self = tensor.detach().numpy()
    _check(_dtype(self), self.shape, len(bins), None if weight is None else _dtype(weight.detach().numpy()),
           None if weight is None else tuple(weight.shape), counts=True)
    for i, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {i}")
    outer = _outer_edges(self.reshape(-1, self.shape[-1]), range)
    edges = [_linspace(left, right, b + 1, self.dtype) for (left, right), b in zip(outer, bins)]
    return _histogramdd(tensor, edges, weight, density, True)


_RETURNS = "-> (Tensor hist, Tensor[] bin_edges)"
_OPTS = "float[]? range=None, Tensor? weight=None, bool density=False"


@op(f"histogramdd(Tensor self, int[] bins, {_OPTS}) {_RETURNS}", kind=REDUCTION, method=False,
    differentiable=False, composite=True)
def histogramdd(self, bins, range=None, weight=None, density=False):  # noqa: A002
    """A D-dimensional histogram of the points in ``self`` (shape ``(..., D)``) with ``bins[i]`` equal
    bins in dim ``i``: ``(hist, bin_edges)``.

    >>> hist, edges = toolkit.histogramdd(toolkit.rand(100, 2), bins=[3, 4])
    """
    return _from_counts(self, list(bins), range, weight, density)


@op(f"histogramdd.int_bins(Tensor self, int bins, {_OPTS}) {_RETURNS}", kind=REDUCTION, method=False,
    differentiable=False, composite=True)
def histogramdd_int_bins(self, bins, range=None, weight=None, density=False):  # noqa: A002
    """``histogramdd`` with the same number of bins in every dim."""
    return _from_counts(self, [bins] * (self.shape[-1] if self.dim() else 0), range, weight, density)


@op(f"histogramdd.TensorList_bins(Tensor self, Tensor[] bins, {_OPTS}) {_RETURNS}", kind=REDUCTION,
    method=False, differentiable=False, composite=True)
def histogramdd_tensors(self, bins, range=None, weight=None, density=False):  # noqa: A002
    """``histogramdd`` with each dim's bin edges given (increasing 1-D tensors)."""
    tensor, self = self, self.detach().numpy()
    _check(_dtype(self), self.shape, len(bins), None if weight is None else _dtype(weight.detach().numpy()),
           None if weight is None else tuple(weight.shape))
    bins = [b.detach().numpy() for b in bins]
    for i, b in enumerate(bins):
        if b.dtype != self.dtype:
            raise RuntimeError(f"{_NAME}: input tensor and bins tensors should have the same dtype, but got input "
                               f"with dtype {_dtype(self).name} and bins for dimension {i} with dtype "
                               f"{_dtype(b).name}")
        if b.ndim != 1 or b.size < 2:
            raise RuntimeError(f"{_NAME}: bins tensor should have one dimension and at least 2 elements, but got "
                               f"{b.ndim} dimensions and {b.size} elements")
    return _histogramdd(tensor, [b.copy() for b in bins], weight, density, False)


def _meta(self, bin_counts, weight):
    _check(self.dtype, tuple(self.shape), len(bin_counts), None if weight is None else weight.dtype,
           None if weight is None else tuple(weight.shape))
    return (TensorMeta(tuple(bin_counts), self.dtype, self.device),
            [TensorMeta((b + 1,), self.dtype, self.device) for b in bin_counts])


@histogramdd.meta_rule
def _(self, bins, range=None, weight=None, density=False):  # noqa: A002
    return _meta(self, list(bins), weight)


@histogramdd_int_bins.meta_rule
def _(self, bins, range=None, weight=None, density=False):  # noqa: A002
    return _meta(self, [bins] * (self.shape[-1] if len(self.shape) else 0), weight)


@histogramdd_tensors.meta_rule
def _(self, bins, range=None, weight=None, density=False):  # noqa: A002
    return _meta(self, [b.shape[0] - 1 for b in bins], weight)


for _o in (histogramdd, histogramdd_int_bins, histogramdd_tensors):
    _o.return_type = return_types.histogramdd


@histogramdd.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (20, 2)), [3, 4]), {}
    yield (rng.uniform(-1, 1, (4, 5, 3)), [2, 3, 2]), {"range": [-0.5, 0.5, -1.0, 1.0, 0.0, 1.0]}
    yield (rng.uniform(0, 1, (10, 2)), [2, 2], None, rng.random(10)), {"density": True}
    yield (np.array([[1.0, 2.0], [1.0, 2.0]]), [2, 3]), {}


@histogramdd_int_bins.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (30, 3)).astype(np.float32), 4), {}


@histogramdd_tensors.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (20, 2)), [np.array([-1.0, 0.0, 0.3, 1.0]), np.array([-0.5, 0.5])]), {}
