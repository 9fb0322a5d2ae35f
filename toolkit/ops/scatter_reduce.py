"""Reducing writes: ``scatter_reduce`` (element-wise along a dim) and ``index_reduce`` (whole slices).

Both combine the values written to one position with ``reduce`` (``sum``,
``prod``, ``mean``, ``amax``, ``amin``), starting from ``self``'s value
there unless ``include_self=False``, when a written position starts from the
reduction's identity. Positions nothing is written to keep ``self``'s value.
Their derivatives are PyTorch's (FunctionsManual's ``scatter_reduce_backward``
and ``index_reduce_backward``): ties of ``amax``/``amin`` share the gradient
evenly, and ``prod`` handles zeros without dividing by them::

    x = toolkit.zeros(3)
    x.scatter_reduce(0, toolkit.tensor([0, 0, 2]), toolkit.tensor([1.0, 3.0, 5.0]), "amax")  # [3., 0., 5.]
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core.meta import TensorMeta
from . import api
from .gather_scatter import _as_1d, _check_bounds, _pad_to, _rand, _scatter_checks
from .index_dim import _index_write_checks
from .registry import INDEXING, op

SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    """The value a written position starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _reduce_at(out: np.ndarray, key: tuple, vals: np.ndarray, reduce: str, include_self: bool, kernel: str):
    """Reduce ``vals`` into ``out`` at ``key`` (a ``ufunc.at`` index: repeated positions combine)."""
    if reduce == "mean" and out.dtype.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    _UFUNCS[reduce].at(out, key, vals)
    if reduce == "mean":
        count = np.ones(out.shape, np.int64) if include_self else np.zeros(out.shape, np.int64)
        np.add.at(count, key, 1)
        count[count == 0] = 1
        if out.dtype.kind == "f":
            np.divide(out, count, out=out, casting="unsafe")
        else:
            np.floor_divide(out, count, out=out, casting="unsafe")
    return out


# ---------------------------------------------------------------------------------------------
# scatter_reduce
# ---------------------------------------------------------------------------------------------
def _scatter_reduce_checks(self, dim, index, src, reduce):
    if reduce not in SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _scatter_checks(self, dim, index, src, "scatter")


@op("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) "
    "-> Tensor", kind=INDEXING, inplace=True, nondiff_args=("index",), no_overlap=("src",))
def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    """A copy of ``self`` with ``src`` reduced into it at ``index`` along ``dim``: for ``dim=0``,
    ``out[index[i][j]][j] = reduce(self[...] if include_self, src[i][j] for every i writing there)``."""
    d = _scatter_reduce_checks(self, dim, index, src, reduce)
    out = self.copy()
    target, idx = _as_1d(out), _as_1d(index)
    if idx.size == 0:
        return out
    _check_bounds(idx, target.shape[d], d)
    coords = list(np.indices(idx.shape, sparse=True))
    coords[d] = idx
    vals = _as_1d(src)[tuple(slice(0, n) for n in idx.shape)]
    _reduce_at(target, tuple(coords), vals, reduce, include_self, "scatter_gather_tensor_cpu_reduce_mean")
    return out


@scatter_reduce.meta_rule
def _(self, dim, index, src, reduce, include_self=True):
    _scatter_reduce_checks(self, dim, index, src, reduce)
    return TensorMeta(self.shape, self.dtype, self.device)


def _leading_part(src, index):
    """The part of ``src`` that ``index`` reads (``src`` may be larger in every dim)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


@scatter_reduce.grad
def _(grad, self, dim, index, src, reduce, include_self, result, src_shape):
    s = _leading_part(src, index)
    if reduce == "sum":
        g_self, g_src = grad, grad.gather(dim, index)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        g_self = grad * masked_self.scatter_reduce(dim, index, s, "prod", include_self=include_self) / masked_self
        src_zero = s == 0
        zeros_there = api.zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype)).gather(dim, index)
        single_zero = src_zero & (zeros_there == 1)
        without_zero = self.scatter_reduce(dim, index, s.masked_fill(single_zero, 1), "prod", include_self=include_self)
        g_src = api.where(single_zero, (grad * without_zero).gather(dim, index),
                          (grad * result).gather(dim, index) / s.masked_fill(src_zero, 1))
    elif reduce == "mean":
        n = (api.ones_like(grad) if include_self else api.zeros_like(grad)).scatter_add(dim, index, api.ones_like(s))
        n = n.masked_fill(n == 0, 1)
        g_self, g_src = grad / n, grad.gather(dim, index) / n.gather(dim, index)
    else:  # amax, amin: ties share the gradient evenly
        self_is_result = (self == result).to(self.dtype)
        src_is_result = (s == result.gather(dim, index)).to(self.dtype)
        share = grad / self_is_result.scatter_add(dim, index, src_is_result)
        g_self, g_src = self_is_result * share, src_is_result * share.gather(dim, index)
    if not include_self:
        g_self = g_self.scatter(dim, index, 0)
    return g_self, _pad_to(g_src, tuple(src_shape))


def _distinct_rows(rng, n_rows: int, n_cols: int, size: int):
    return np.stack([rng.permutation(size)[:n_cols] for _ in range(n_rows)])


@scatter_reduce.sample_inputs
def _(rng):
    idx = np.array([[0, 2, 2, 1], [1, 0, 0, 0]])  # repeated positions along dim 1
    for reduce in SCATTER_REDUCTIONS:
        yield (_rand(rng, 2, 3), 1, idx, _rand(rng, 2, 4), reduce), {}
        yield (_rand(rng, 3, 2), 0, idx.T.copy() % 3, _rand(rng, 4, 2), reduce), {"include_self": False}
    yield (_rand(rng, 4, 3).T, 1, _distinct_rows(rng, 2, 3, 4), _rand(rng, 2, 3), "amax"), {}
    yield (_rand(rng), 0, np.array(0), _rand(rng), "prod"), {}
    yield (rng.integers(-9, 9, (2, 3)), 1, idx, rng.integers(-9, 9, (2, 4)), "mean"), {}
    yield (rng.integers(-9, 9, (2, 3)), 1, idx, rng.integers(-9, 9, (2, 4)), "amin"), {"include_self": False}
    yield (np.array([0.0, 2.0, 3.0]), 0, np.array([0, 0, 1, 2]), np.array([4.0, 0.0, 0.0, 5.0]), "prod"), {}


# ---------------------------------------------------------------------------------------------
# index_reduce
# ---------------------------------------------------------------------------------------------
_warned_beta = False


def _index_reduce_checks(self, dim, index, source, reduce):
    if reduce not in INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    return _index_write_checks(self, dim, index, source, "index_reduce_")


@op("index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) "
    "-> Tensor", kind=INDEXING, inplace=True, nondiff_args=("index",), no_overlap=("source",))
def index_reduce(self, dim, index, source, reduce, include_self=True):
    """A copy of ``self`` with the slices of ``source`` reduced into the slices along ``dim`` at ``index``."""
    global _warned_beta
    d = _index_reduce_checks(self, dim, index, source, reduce)
    if not _warned_beta:  # PyTorch warns once per process
        _warned_beta = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    out = self.copy()
    target, idx = _as_1d(out), _as_1d(index)
    if idx.size and (idx.max() >= target.shape[d] or idx.min() < 0):
        raise IndexError("index out of range in self")
    if self.dtype.kind == "b":
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    _reduce_at(target, (slice(None),) * d + (idx,), _as_1d(source), reduce, include_self, "index_func_")
    return out


@index_reduce.meta_rule
def _(self, dim, index, source, reduce, include_self=True):
    _index_reduce_checks(self, dim, index, source, reduce)
    return TensorMeta(self.shape, self.dtype, self.device)


@index_reduce.grad
def _(grad, self, dim, index, source, reduce, include_self, result):
    if reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        g_self = grad * masked_self.index_reduce(dim, index, source, "prod", include_self=include_self) / masked_self
        src_zero = source == 0
        zeros_there = api.zeros_like(self).index_add(dim, index, src_zero.to(self.dtype)).index_select(dim, index)
        single_zero = src_zero & (zeros_there == 1)
        without_zero = self.index_reduce(dim, index, source.masked_fill(single_zero, 1), "prod",
                                         include_self=include_self)
        g_src = api.where(single_zero, (grad * without_zero).index_select(dim, index),
                          (grad * result).index_select(dim, index) / source.masked_fill(src_zero, 1))
    elif reduce == "mean":
        n = (api.ones_like(grad) if include_self else api.zeros_like(grad)).index_add(dim, index,
                                                                                     api.ones_like(source))
        n = n.masked_fill(n == 0, 1)
        g_self, g_src = grad / n, grad.index_select(dim, index) / n.index_select(dim, index)
    else:  # amax, amin: ties share the gradient evenly
        self_is_result = (self == result).to(self.dtype)
        src_is_result = (source == result.index_select(dim, index)).to(self.dtype)
        share = grad / self_is_result.index_add(dim, index, src_is_result)
        g_self, g_src = self_is_result * share, src_is_result * share.index_select(dim, index)
    if not include_self:
        g_self = g_self.index_fill(dim, index, 0)
    return g_self, g_src


@index_reduce.sample_inputs
def _(rng):
    idx = np.array([3, 0, 3])
    for reduce in INDEX_REDUCTIONS:
        yield (_rand(rng, 4, 2), 0, idx, _rand(rng, 3, 2), reduce), {}
        yield (_rand(rng, 2, 4), 1, idx, _rand(rng, 2, 3), reduce), {"include_self": False}
    yield (_rand(rng, 3, 4).T, 0, np.array([1, 2], dtype=np.int32), _rand(rng, 2, 3), "amin"), {}
    yield (_rand(rng), 0, np.array([0]), _rand(rng), "prod"), {}
    yield (rng.integers(-9, 9, (4, 2)), 0, idx, rng.integers(-9, 9, (3, 2)), "mean"), {}
    yield (np.array([0.0, 2.0, 3.0]), 0, np.array([0, 0, 1, 2]), np.array([4.0, 0.0, 0.0, 5.0]), "prod"), {}
