"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, mode.

Sorting is stable, so among equal values the earlier element comes first
(descending too), and NaN sorts as the largest value, as in PyTorch. Ops that
return values with their indices give named tuples (``toolkit.return_types``).
"""

from __future__ import annotations

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .complex_refusal import no_complex_kernel, refuse_complex
from .extrema import check_nonempty_dims, evenly_distribute, select_backward
from .reduction import reduce_meta
from .registry import REDUCTION, SHAPE, op, refuses_names, takes_dim_names


def stable_argsort(a: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Indices that sort ``a`` along ``d``; equal values keep their order, NaN counts as the largest."""
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    # Sorting the reversed array ascending and reversing back keeps equal values in their original order.
    rev = np.argsort(np.flip(a, d), axis=d, kind="stable")
    return a.shape[d] - 1 - np.flip(rev, d)


def _sorted(self: np.ndarray, dim: int, descending: bool, name: str):
    d = wrap_dim(dim, max(self.ndim, 1), name)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    idx = stable_argsort(self, d, descending).astype(np.int64, copy=False)
    return np.take_along_axis(self, idx, axis=d), idx


def scatter_back(grad, indices, dim: int, self_shape):
    """A zero tensor of ``self_shape`` with ``grad`` put at ``indices`` along ``dim`` (the adjoint of a gather)."""
    if not self_shape:
        return grad
    return api.zeros(self_shape, dtype=grad.dtype).scatter(dim, indices, grad)


def _sort_meta(self, dim: int, name: str):
    """Sorting keeps the shape: (values, int64 indices)."""
    wrap_dim(dim, max(len(self.shape), 1), name)
    return TensorMeta(self.shape, self.dtype, self.device), TensorMeta(self.shape, _dt.int64, self.device)


# ----------------------------------------------------------------------------- sort, argsort
@op("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", kind=SHAPE)
def sort(self, dim=-1, descending=False):
    """Values sorted along ``dim`` and the indices they came from (stable: ties keep their order)."""
    return _sorted(self, dim, descending, "sort")


@op("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
    kind=SHAPE, grad_fn="SortBackward1")
def sort_stable(self, stable, dim=-1, descending=False):
    """:func:`sort` with the ``stable`` flag; sorting is always stable here."""
    return _sorted(self, dim, descending, "sort")


@op("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", kind=SHAPE, out=False, differentiable=False)
def argsort(self, dim=-1, descending=False):
    """The indices that sort ``self`` along ``dim`` (int64)."""
    return _sorted(self, dim, descending, "argsort")[1]


@op("argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor", kind=SHAPE,
    differentiable=False)
def argsort_stable(self, stable, dim=-1, descending=False):
    """:func:`argsort` with the ``stable`` flag; sorting is always stable here."""
    return _sorted(self, dim, descending, "argsort")[1]


for _o in (sort, sort_stable):
    _o.return_type = return_types.sort


@sort.meta_rule
def _(self, dim=-1, descending=False):
    return _sort_meta(self, dim, "sort")


@sort_stable.meta_rule
def _(self, stable, dim=-1, descending=False):
    return _sort_meta(self, dim, "sort")


@argsort.meta_rule
def _(self, dim=-1, descending=False):
    return _sort_meta(self, dim, "argsort")[1]


@argsort_stable.meta_rule
def _(self, stable, dim=-1, descending=False):
    return _sort_meta(self, dim, "argsort")[1]


@sort.grad
def _(grad, self_shape, result, dim):
    return scatter_back(grad[0], result[1], dim, self_shape)


sort_stable.grad(lambda grad, self_shape, result, dim: scatter_back(grad[0], result[1], dim, self_shape))


def _sort_samples(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {}
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 0), {}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0,), {"descending": True}
    yield (rng.permutation(24).reshape(2, 3, 4) / 8.0, -2, True), {}
    yield (np.array([3, 1, 3, 2, 1, 1]),), {}  # ties keep their order
    yield (np.array([3, 1, 3, 2, 1, 1]),), {"descending": True}
    yield (np.array(0.5),), {}
    yield (np.zeros((0, 3)), 0), {}
    yield (rng.integers(-3, 3, (3, 4)).astype(np.int32), 1), {"descending": True}
    yield (np.array([True, False, True]),), {}


def _stable_samples(rng):
    for args, kwargs in _sort_samples(rng):
        if len(args) == 1:
            yield args, {"stable": True, **kwargs}


sort.sample_inputs(_sort_samples)
sort_stable.sample_inputs(_stable_samples)
argsort.sample_inputs(_sort_samples)
argsort_stable.sample_inputs(_stable_samples)


@op("msort(Tensor self) -> Tensor", kind=SHAPE, composite=True)
def msort(self):
    """``self`` sorted along its first dim (the values of ``sort(self, 0)``), as PyTorch composes it."""
    return api.sort(self, 0)[0]


@msort.meta_rule
def _(self):
    return _sort_meta(self, 0, "msort")[0]


@msort.grad
def _(grad, self):
    return scatter_back(grad, api.sort(self.detach(), 0)[1], 0, tuple(self.shape))


@msort.sample_inputs
def _(rng):
    yield (rng.permutation(12).reshape(4, 3) / 4.0,), {}
    yield (rng.permutation(12).reshape(3, 4).T / 4.0,), {}
    yield (rng.permutation(5) / 4.0,), {}
    yield (np.array([3, 1, 3, 2, 1, 1]),), {}
    yield (np.array(0.5),), {}
    yield (np.zeros((0, 3)),), {}


# ----------------------------------------------------------------------------- topk, kthvalue
def _check_topk(self, k: int, d: int) -> None:
    if self.dtype in (np.bool_, _dt.bool):
        raise RuntimeError("topk does not support bool dtypes on CPU")
    n = self.shape[d] if len(self.shape) else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")


@op("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
    kind=REDUCTION)
def topk(self, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) values along ``dim``, in order, with their indices."""
    d = wrap_dim(dim, max(self.ndim, 1), "topk")
    _check_topk(self, k, d)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)  # PyTorch gives the 0-d value back for k=0 too
    idx = np.take(stable_argsort(self, d, largest), np.arange(k), axis=d).astype(np.int64, copy=False)
    return np.take_along_axis(self, idx, axis=d), idx


topk.return_type = return_types.topk


@topk.meta_rule
def _(self, k, dim=-1, largest=True, sorted=True):
    shape = tuple(self.shape)
    d = wrap_dim(dim, max(len(shape), 1), "topk")
    _check_topk(self, k, d)
    out = shape[:d] + (k,) + shape[d + 1:] if shape else ()
    return TensorMeta(out, self.dtype, self.device), TensorMeta(out, _dt.int64, self.device)


@topk.grad
def _(grad, self_shape, result, dim):
    return scatter_back(grad[0], result[1], dim, self_shape)


@topk.sample_inputs
def _(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 2), {}
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 3, 0), {"largest": False}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0, 1), {"dim": -2}
    yield (rng.permutation(24).reshape(2, 3, 4) / 8.0, 4), {"sorted": True}
    yield (rng.permutation(6) / 4.0, 0), {}
    yield (np.array(0.5), 1), {}
    yield (np.zeros((0, 3)), 2), {}
    yield (rng.permutation(8).reshape(2, 4).astype(np.int32), 2), {}


def _check_kth(self, k: int, d: int) -> None:
    if self.dtype in (np.bool_, _dt.bool):
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    n = self.shape[d] if len(self.shape) else 1
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")


def _pick(self: np.ndarray, pos, d: int, keepdim: bool):
    """The element at sorted position ``pos`` along ``d`` and its index (positions of a stable sort)."""
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    order = stable_argsort(self, d, False)
    idx = np.take(order, [pos], axis=d).astype(np.int64, copy=False)
    values = np.take_along_axis(self, idx, axis=d)
    return (values, idx) if keepdim else (np.squeeze(values, d), np.squeeze(idx, d))


def _quickselect(self: np.ndarray, pos: int, d: int, keepdim: bool):
    """The element at sorted position ``pos`` along ``d`` and the index PyTorch's quickselect reports for it."""
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    from ._select_numba import kth_indices  # optional: numba, never loaded by import toolkit

    moved = np.moveaxis(self, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    idx = kth_indices(rows.astype(np.float32) if rows.dtype == np.float16 else rows, pos)
    idx = np.expand_dims(idx.reshape(moved.shape[:-1]), d)
    values = np.take_along_axis(self, idx, axis=d)
    return (values, idx) if keepdim else (np.squeeze(values, d), np.squeeze(idx, d))


@op("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    kind=REDUCTION)
def kthvalue(self, k, dim=-1, keepdim=False):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index (on ties, the one PyTorch gives)."""
    d = wrap_dim(dim, max(self.ndim, 1), "kthvalue")
    _check_kth(self, k, d)
    return _quickselect(self, k - 1, d, keepdim)


kthvalue.return_type = return_types.kthvalue


def _values_indices_meta(self, dim, keepdim, name):
    return reduce_meta(self, dim, keepdim, self.dtype, name), reduce_meta(self, dim, keepdim, _dt.int64, name)


@kthvalue.meta_rule
def _(self, k, dim=-1, keepdim=False):
    _check_kth(self, k, wrap_dim(dim, max(len(self.shape), 1), "kthvalue"))
    return _values_indices_meta(self, dim, keepdim, "kthvalue")


@kthvalue.grad
def _(grad, self_shape, result, dim, keepdim):
    return select_backward(grad[0], result[1], dim, self_shape, keepdim)


@kthvalue.sample_inputs
def _(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 2), {}
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 3, 0), {"keepdim": True}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0, 1), {"dim": -2}
    yield (np.array([3, 1, 3, 2, 1, 1, 3]), 3), {}  # ties: the index a stable sort gives
    yield (np.array(0.5), 1), {}
    yield (np.zeros((0, 3)), 2), {"dim": 1}
    yield (rng.permutation(8).reshape(2, 4).astype(np.int32), 2), {}


# ----------------------------------------------------------------------------- median
def _check_median(dtype) -> None:
    if dtype in (np.bool_, _dt.bool):
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")


def _median_along(self: np.ndarray, d: int, keepdim: bool):
    """Lower median along ``d`` and its index; a slice with NaN gives NaN at the first NaN's index."""
    n = self.shape[d]
    values, idx = _pick(self, (n - 1) // 2, d, True)
    if self.dtype.kind == "f":
        isnan = np.isnan(self)
        has_nan = np.any(isnan, axis=d, keepdims=True)
        if has_nan.any():
            first = np.expand_dims(np.argmax(isnan, axis=d), d)
            values = np.where(has_nan, np.nan, values).astype(self.dtype)
            idx = np.where(has_nan, first, idx)
    return (values, idx) if keepdim else (np.squeeze(values, d), np.squeeze(idx, d))


@op("median(Tensor self) -> Tensor", kind=REDUCTION, out=False)
def median(self):
    """The lower median of all elements (NaN when any is NaN or ``self`` is empty)."""
    _check_median(self.dtype)
    if self.size == 0:
        return np.array(np.nan, dtype=self.dtype)
    return _median_along(self.reshape(-1), 0, False)[0]


@op("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", kind=REDUCTION,
    grad_fn="MedianBackward1")
def median_dim(self, dim, keepdim=False):
    """The lower median along ``dim`` and its index."""
    _check_median(self.dtype)
    d = wrap_dim(dim, max(self.ndim, 1), "median")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    check_nonempty_dims(self.shape, (d,), "median")
    return _median_along(self, d, keepdim)


median_dim.return_type = return_types.median


@median.meta_rule
def _(self):
    _check_median(self.dtype)
    return TensorMeta((), self.dtype, self.device)


@median_dim.meta_rule
def _(self, dim, keepdim=False):
    _check_median(self.dtype)
    d = wrap_dim(dim, max(len(self.shape), 1), "median")
    check_nonempty_dims(tuple(self.shape), (d,), "median")
    return _values_indices_meta(self, dim, keepdim, "median")


@median.grad
def _(grad, self, result):
    return evenly_distribute(grad, self, result, nan_selects=True)


@median_dim.grad
def _(grad, self_shape, result, dim, keepdim):
    return select_backward(grad[0], result[1], dim, self_shape, keepdim)


@median.sample_inputs
def _(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {}
    yield (rng.permutation(7) / 4.0,), {}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0,), {}
    yield (np.array(0.5),), {}
    yield (np.zeros((0, 3)),), {}
    yield (rng.integers(-3, 3, (5,)).astype(np.int32),), {}


@median_dim.sample_inputs
def _(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 1), {}
    yield (rng.permutation(15).reshape(3, 5) / 4.0, -1), {"keepdim": True}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0, 0), {}
    yield (np.array([[2, 1, 1, 1, 3], [0, 1, 0, 1, 5]]), 1), {}  # ties: as PyTorch picks
    yield (np.array(0.5), 0), {}
    yield (np.zeros((0, 3)), 1), {}
    yield (rng.integers(-3, 3, (3, 4)).astype(np.int64), 0), {}


# ----------------------------------------------------------------------------- mode
def _mode_along(self: np.ndarray, d: int, keepdim: bool):
    """The most frequent value along ``d`` (the smallest among equally frequent) and its last index."""
    moved = np.moveaxis(self, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, axis=1)
    n = s.shape[1]
    starts = np.ones(s.shape, bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    ends = np.ones(s.shape, bool)
    ends[:, :-1] = starts[:, 1:]
    pos = np.arange(n)
    run_start = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    length = np.where(ends, pos - run_start + 1, 0)
    best = np.argmax(length, axis=1)[:, None]  # the first longest run: the smallest value
    values = np.take_along_axis(s, best, axis=1)[:, 0].reshape(moved.shape[:-1])
    idx = np.take_along_axis(order, best, axis=1)[:, 0].reshape(moved.shape[:-1]).astype(np.int64)
    return (np.expand_dims(values, d), np.expand_dims(idx, d)) if keepdim else (values, idx)


@op("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)", kind=REDUCTION)
def mode(self, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest on ties) and the index of its last occurrence."""
    d = wrap_dim(dim, max(self.ndim, 1), "mode")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    check_nonempty_dims(self.shape, (d,), "mode")
    return _mode_along(self, d, keepdim)


mode.return_type = return_types.mode


@mode.meta_rule
def _(self, dim=-1, keepdim=False):
    d = wrap_dim(dim, max(len(self.shape), 1), "mode")
    check_nonempty_dims(tuple(self.shape), (d,), "mode")
    return _values_indices_meta(self, dim, keepdim, "mode")


@mode.grad
def _(grad, self_shape, result, dim, keepdim):
    return select_backward(grad[0], result[1], dim, self_shape, keepdim)


@mode.sample_inputs
def _(rng):
    yield (np.array([[1, 2, 2, 1], [5, 5, 5, 1]]),), {}  # ties in count: the smallest value, its last index
    yield (np.array([[1, 2, 2, 1], [5, 5, 5, 1]]), 0), {"keepdim": True}
    yield (rng.integers(0, 3, (4, 5)).T, -2), {}
    yield (rng.integers(0, 3, (2, 3, 6)).astype(np.int32),), {"dim": 1}
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {}  # distinct values: differentiable
    yield (rng.permutation(12).reshape(4, 3).T / 4.0, 0), {}
    yield (np.array(0.5),), {}
    yield (np.zeros((0, 3)), 1), {}
    yield (np.array([True, False, False]),), {}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("kthvalue", "median"), no_complex_kernel("{name}_cpu"))
refuse_complex(("sort", "argsort", "msort"), " Sort does not support complex dtypes on CPU", RuntimeError)
refuse_complex(("topk",), " topk does not support complex dtypes on CPU", RuntimeError)


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_top(g, self, k, dim: int, largest: bool):
    """ONNX TopK (sorted; equal elements keep their order, lower index first, as a stable sort) of ``k``
    elements along ``dim``; ``k`` None takes the whole dim (a sort)."""
    rank = g.rank(self)
    if rank is None:
        raise g.unsupported("sorting a tensor of unknown rank")
    if rank == 0:  # its one element, at index 0
        return g.op("Identity", self), g.constant(0, _dt.int64)
    dim = dim % rank
    if k is None:  # the dim's size, read at run time
        k = g.op("Gather", g.op("Shape", self), g.constant([dim]), axis=0)
    elif g.is_value(k):
        k = g.op("Reshape", g.op("Cast", k, to=_dt.int64), g.constant([1]))
    else:
        k = g.constant([k], _dt.int64)
    values, indices = g.op("TopK", self, k, outputs=2, axis=dim, largest=int(largest), sorted=1)
    g.set_type(indices, _dt.int64)
    return values, indices


def _onnx_sort(indices_only: bool, stable: bool):
    """The lowering of sort/argsort (``.stable``: a ``stable`` argument first, ONNX's TopK is stable anyway)."""
    def lower(g, self, *args):
        dim, descending = args[1:3] if stable else args[:2]
        values, indices = _onnx_top(g, self, None, dim, descending)
        return indices if indices_only else (values, indices)
    return lower


for _o, _indices_only, _stable in ((sort, False, False), (sort_stable, False, True), (argsort, True, False),
                                   (argsort_stable, True, True)):
    _o.symbolic(_onnx_sort(_indices_only, _stable))


@topk.symbolic
def _(g, self, k, dim=-1, largest=True, sorted=True):
    return _onnx_top(g, self, k, dim, largest)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("topk",))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("median", "mode", "kthvalue"))
