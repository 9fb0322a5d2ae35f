"""Reductions that skip NaN: nansum, nanmean, nanmedian.

They read NaN as "missing": nansum counts it as zero, nanmean divides by the
number of non-NaN elements (an all-NaN slice gives NaN), nanmedian takes the
lower median of the non-NaN elements (NaN only for an all-NaN slice).

Example::

    >>> toolkit.tensor([1.0, float("nan"), 3.0]).nanmean()
    tensor(2.)
"""

from __future__ import annotations

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from .complex_refusal import refuse_complex
from .extrema import check_nonempty_dims, evenly_distribute, select_backward
from .reduction import axes, expand_back, int_to_long, reduce_meta, restore_dims
from .registry import REDUCTION, op, refuses_names, takes_dim_names
from .sorting import stable_argsort

_NAN = float("nan")


def _accumulation_dtype(a: np.ndarray, dtype):
    """The dtype nansum adds in and returns: ``dtype``, else int64 for integers and bool, else ``a``'s."""
    out = dtype.np if dtype is not None else (np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype)
    return out, (np.dtype(np.float32) if out == np.float16 else out)


def _nansum(self: np.ndarray, dim, keepdim: bool, dtype, name: str) -> np.ndarray:
    out, acc = _accumulation_dtype(self, dtype)
    ax = axes(dim, self.ndim, name)
    x = self.astype(acc, copy=False)
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), x.dtype.type(0), x)
    return np.asarray(np.sum(x, axis=ax, keepdims=keepdim, dtype=acc)).astype(out, copy=False)


def _not_nan(self):
    """1 where ``self`` holds a number, 0 at NaN (a Tensor in ``self``'s dtype)."""
    return self.isnan().logical_not()


# ----------------------------------------------------------------------------- nansum
@op("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kind=REDUCTION)
def nansum(self, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` (all dims by default) with NaN counted as zero; integers add in int64."""
    return _nansum(self, dim, keepdim, dtype, "nansum")


@nansum.meta_rule
def _(self, dim=None, keepdim=False, dtype=None):
    return reduce_meta(self, dim, keepdim, int_to_long(self.dtype, dtype), "nansum")


@nansum.grad
def _(grad, self, dim, keepdim):
    return expand_back(grad, self.shape, dim, keepdim) * _not_nan(self)


def _with_nans(rng, shape, low=-2.0, high=2.0):
    a = rng.uniform(low, high, shape)
    a[rng.uniform(0, 1, shape) < 0.3] = np.nan
    return a


@nansum.sample_inputs
def _(rng):
    yield (_with_nans(rng, (3, 4)),), {}
    yield (_with_nans(rng, (3, 4)), 1), {}
    yield (_with_nans(rng, (2, 3, 4)), (0, -1)), {"keepdim": True}
    yield (_with_nans(rng, (4, 3)).T, -2), {}
    yield (np.array([[np.nan, np.nan], [1.0, np.nan]]), 1), {}
    yield (np.array(np.nan),), {}
    yield (rng.uniform(-2, 2, (0, 3)), 0), {}
    yield (rng.integers(-5, 5, (3, 4)).astype(np.int32), 0), {}
    yield (np.array([True, False, True]),), {}
    yield (_with_nans(rng, (2, 3)).astype(np.float32),), {"dim": 1, "dtype": _dt.float64}


# ----------------------------------------------------------------------------- nanmean
def _check_nanmean(self_dtype, dtype) -> None:
    if not self_dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_dt.title(self_dtype)}")
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating "
                           f"point or complex dtype. Got: {_dt.title(dtype)}")


@op("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kind=REDUCTION, grad_fn="DivBackward0", out="cast")
def nanmean(self, dim=None, keepdim=False, dtype=None):
    """Mean of the non-NaN elements over ``dim``; an all-NaN (or empty) slice gives NaN. Floating inputs only."""
    _check_nanmean(_dt.from_numpy_dtype(self.dtype), dtype)
    total = _nansum(self, dim, keepdim, dtype, "nanmean")
    count = np.sum(~np.isnan(self), axis=axes(dim, self.ndim, "nanmean"), keepdims=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.float32 if total.dtype == np.float16 else total.dtype
        return np.asarray(total.astype(acc) / count).astype(total.dtype, copy=False)


@nanmean.meta_rule
def _(self, dim=None, keepdim=False, dtype=None):
    _check_nanmean(self.dtype, dtype)
    return reduce_meta(self, dim, keepdim, dtype or self.dtype, "nanmean")


@nanmean.grad
def _(grad, self, dim, keepdim):
    keep = _not_nan(self)
    count = keep.sum(dim, keepdim=True) if dim not in (None, ()) else keep.sum()
    return restore_dims(grad, self.shape, dim, keepdim) * keep / count


@nanmean.sample_inputs
def _(rng):
    yield (_with_nans(rng, (3, 4)),), {}
    yield (_with_nans(rng, (3, 4)), 1), {}
    yield (_with_nans(rng, (2, 3, 4)), (0, -1)), {"keepdim": True}
    yield (_with_nans(rng, (4, 3)).T, -2), {}
    yield (np.array(1.5),), {}
    yield (rng.uniform(-2, 2, (0, 3)), 0), {}
    yield (_with_nans(rng, (2, 3)).astype(np.float32),), {"dim": 1, "dtype": _dt.float64}


# ----------------------------------------------------------------------------- nanmedian
def _check_nanmedian(dtype) -> None:
    if dtype in (np.bool_, _dt.bool):
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")


def _nanmedian_along(self: np.ndarray, d: int, keepdim: bool):
    """Lower median of the non-NaN elements along ``d`` and its index; an all-NaN slice gives its first NaN.

    NaN sorts last, so the median of ``k`` numbers sits at sorted position ``(k - 1) // 2`` (0 when ``k`` is 0).
    Ties go to the earlier element, as PyTorch's selection breaks them by index. For an all-NaN slice PyTorch's
    index depends on its selection algorithm (its comparator puts NaN after NaN); here it is the first.
    """
    order = stable_argsort(self, d, False).astype(np.int64, copy=False)
    count = np.sum(~np.isnan(self), axis=d, keepdims=True) if self.dtype.kind == "f" else \
        np.full([1 if i == d else s for i, s in enumerate(self.shape)], self.shape[d])
    pos = np.maximum(count - 1, 0) // 2
    idx = np.take_along_axis(order, pos, axis=d)
    values = np.take_along_axis(self, idx, axis=d)
    return (values, idx) if keepdim else (np.squeeze(values, d), np.squeeze(idx, d))


@op("nanmedian(Tensor self) -> Tensor", kind=REDUCTION, out=False)
def nanmedian(self):
    """The lower median of the non-NaN elements (NaN when all are NaN or ``self`` is empty)."""
    _check_nanmedian(self.dtype)
    if self.size == 0:
        return np.array(_NAN, dtype=self.dtype)
    return _nanmedian_along(self.reshape(-1), 0, False)[0]


@op("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", kind=REDUCTION,
    grad_fn="NanmedianBackward1")
def nanmedian_dim(self, dim, keepdim=False):
    """The lower median of the non-NaN elements along ``dim`` and its index."""
    _check_nanmedian(self.dtype)
    d = wrap_dim(dim, max(self.ndim, 1), "nanmedian")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    check_nonempty_dims(self.shape, (d,), "median")
    return _nanmedian_along(self, d, keepdim)


nanmedian_dim.return_type = return_types.nanmedian


@nanmedian.meta_rule
def _(self):
    _check_nanmedian(self.dtype)
    return TensorMeta((), self.dtype, self.device)


@nanmedian_dim.meta_rule
def _(self, dim, keepdim=False):
    _check_nanmedian(self.dtype)
    d = wrap_dim(dim, max(len(self.shape), 1), "nanmedian")
    check_nonempty_dims(tuple(self.shape), (d,), "median")
    return (reduce_meta(self, dim, keepdim, self.dtype, "nanmedian"),
            reduce_meta(self, dim, keepdim, _dt.int64, "nanmedian"))


@nanmedian.grad
def _(grad, self, result):
    return evenly_distribute(grad, self, result, nan_selects=True)


@nanmedian_dim.grad
def _(grad, self_shape, result, dim, keepdim):
    return select_backward(grad[0], result[1], dim, self_shape, keepdim)


def _distinct_with_nans(rng, shape):
    a = rng.permutation(int(np.prod(shape))).reshape(shape) / 4.0
    a[rng.uniform(0, 1, shape) < 0.3] = np.nan
    return a


@nanmedian.sample_inputs
def _(rng):
    yield (_distinct_with_nans(rng, (3, 4)),), {}
    yield (rng.permutation(7) / 4.0,), {}
    yield (_distinct_with_nans(rng, (4, 3)).T,), {}
    yield (np.array(0.5),), {}
    yield (np.zeros((0, 3)),), {}
    yield (rng.integers(-3, 3, (5,)).astype(np.int32),), {}


@nanmedian_dim.sample_inputs
def _(rng):
    yield (_distinct_with_nans(rng, (3, 4)), 1), {}
    yield (_distinct_with_nans(rng, (3, 5)), -1), {"keepdim": True}
    yield (_distinct_with_nans(rng, (4, 3)).T, 0), {}
    yield (np.array([[2, 1, 1, 1, 3], [0, 1, 0, 1, 5]]), 1), {}  # ties: as PyTorch picks
    yield (np.array([[1.0, np.nan, np.nan], [np.nan, 2.5, 3.0], [np.nan, 3.0, 2.0]]), 1), {}
    yield (np.array(0.5), 0), {}
    yield (np.zeros((0, 3)), 1), {}
    yield (rng.integers(-3, 3, (3, 4)).astype(np.int64), 0), {}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("nansum", "nanmean"), "nansum on CPU does not support complex inputs", RuntimeError)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("nansum",))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("nanmedian",))
