"""Whole-slice indexing along one dim: index_select, index_add, index_copy, index_fill.

``index`` is a 1-D list of positions along ``dim``; index_select's
derivative is index_add and back, all written with registered ops.
"""

from __future__ import annotations

import numpy as np

from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from .gather_scatter import _INTS, _as_1d, _check_bounds, _rand
from .indexing import _np_dtype, dtype_title
from .registry import INDEXING, op, takes_dim_names


# ---------------------------------------------------------------------------------------------
def _vector_index(index, op: str, exc=IndexError):
    if len(index.shape) > 1:
        raise exc(
            f"{op}(): Index is supposed to be a vector, but got dim: {len(index.shape)} with type: "
            f"{dtype_title(index.dtype)} and size: {list(index.shape)}"
        )


@op("index_select(Tensor self, int dim, Tensor index) -> Tensor", kind=INDEXING, nondiff_args=("index",))
def index_select(self, dim, index):
    """The slices of ``self`` along ``dim`` at the positions in the 1-D ``index``."""
    _index_select_checks(self, dim, index)
    src = _as_1d(self)
    d = wrap_dim(dim, src.ndim, "index_select")
    idx = _as_1d(index)
    if idx.size and (idx.max() >= src.shape[d] or idx.min() < 0):
        raise IndexError("index out of range in self")
    out = np.take(src, idx, axis=d)
    return out.reshape(()) if self.ndim == 0 else out


def _index_select_checks(self, dim, index):
    if len(index.shape) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if _np_dtype(index.dtype) not in _INTS:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    return wrap_dim(dim, max(len(self.shape), 1), "index_select")


@index_select.meta_rule
def _(self, dim, index):
    d = _index_select_checks(self, dim, index)
    if not len(self.shape):
        return TensorMeta((), self.dtype, self.device)
    shape = list(self.shape)
    shape[d] = int(np.prod(index.shape, dtype=np.int64))
    return TensorMeta(shape, self.dtype, self.device)


@index_select.grad
def _(grad, self_shape, dim, index):
    return grad.new_zeros(self_shape).index_add(dim, index, grad)


@index_select.sample_inputs
def _(rng):
    yield (_rand(rng, 4, 3), 0, np.array([3, 0, 3])), {}
    yield (_rand(rng, 4, 3).T, -1, np.array([1, 2], dtype=np.int32)), {}
    yield (_rand(rng, 2, 3), 1, np.zeros((0,), np.int64)), {}
    yield (_rand(rng), 0, np.array([0])), {}


def _index_write_checks(self, dim, index, source, op):
    d = wrap_dim(dim, max(len(self.shape), 1), op)
    _vector_index(index, op)
    if _np_dtype(index.dtype) not in _INTS:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index but got: {dtype_title(index.dtype)}")
    if source is None:
        return d
    if _np_dtype(self.dtype) != _np_dtype(source.dtype):
        raise RuntimeError(
            f"{op}(): self ({dtype_title(self.dtype)}) and source ({dtype_title(source.dtype)}) must have the same "
            "scalar type"
        )
    s_shape, r_shape = tuple(self.shape) or (1,), tuple(source.shape) or (1,)
    n = int(np.prod(index.shape, dtype=np.int64))
    if len(r_shape) != len(s_shape) or any(a != b for k, (a, b) in enumerate(zip(s_shape, r_shape)) if k != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{list(self.shape)} source.shape = {list(source.shape)}"
        )
    if r_shape[d] != n:
        raise RuntimeError(
            f"{op}(): Number of indices ({n}) should be equal to source.size(dim): ({r_shape[d]}), for dim: {d}"
        )
    return d


def _index_write(self, dim, index, source, op, how):
    d = _index_write_checks(self, dim, index, None if how == "fill" else source, op)
    out = self.copy()
    target, idx = _as_1d(out), _as_1d(index)
    _check_bounds(idx, target.shape[d], d, allow_negative=how == "fill", exc=IndexError if how != "add" else RuntimeError)
    key = (slice(None),) * d + (idx,)
    if how == "add":
        np.add.at(target, key, _as_1d(source))
    elif how == "copy":
        target[key] = _as_1d(source)
    else:
        target[key] = np.array(source).astype(self.dtype)
    return out


def _same_meta(self, *rest):
    return TensorMeta(self.shape, self.dtype, self.device)


@op("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor", kind=INDEXING,
    inplace=True, nondiff_args=("index",), no_overlap=("source",))
def index_add(self, dim, index, source, alpha=1):
    """A copy of ``self`` with ``alpha * source`` added to the slices along ``dim`` at ``index``."""
    if alpha != 1:
        source = (source * alpha).astype(source.dtype)
    return _index_write(self, dim, index, source, "index_add_", "add")


@index_add.meta_rule
def _(self, dim, index, source, alpha=1):
    _index_write_checks(self, dim, index, source, "index_add_")
    return _same_meta(self)


@index_add.grad
def _(grad, dim, index, alpha, needs_input_grad):
    g_source = None
    if needs_input_grad[1]:
        g_source = grad.index_select(dim, index)
        if alpha != 1:
            g_source = g_source * alpha
    return grad, g_source


@index_add.sample_inputs
def _(rng):
    yield (_rand(rng, 4, 3), 0, np.array([3, 0, 3]), _rand(rng, 3, 3)), {}
    yield (_rand(rng, 4, 3).T, 1, np.array([1, 2], dtype=np.int32), _rand(rng, 3, 2)), {"alpha": 2.5}
    yield (_rand(rng), 0, np.array([0]), _rand(rng)), {}


@op("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", kind=INDEXING, autocast="promote", inplace=True,
    nondiff_args=("index",), no_overlap=("source",))
def index_copy(self, dim, index, source):
    """A copy of ``self`` whose slices along ``dim`` at ``index`` are replaced by ``source``'s."""
    if _np_dtype(index.dtype) != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {dtype_title(index.dtype)}")
    return _index_write(self, dim, index, source, "index_copy_", "copy")


@index_copy.meta_rule
def _(self, dim, index, source):
    _index_write_checks(self, dim, index, source, "index_copy_")
    return _same_meta(self)


@index_copy.grad
def _(grad, dim, index, needs_input_grad):
    g_self = grad.index_fill(dim, index, 0) if needs_input_grad[0] else None
    return g_self, grad.index_select(dim, index)


@index_copy.sample_inputs
def _(rng):
    yield (_rand(rng, 4, 3), 0, np.array([3, 0]), _rand(rng, 2, 3)), {}
    yield (_rand(rng, 4, 3).T, 1, np.array([1, 2, 0]), _rand(rng, 3, 3)), {}


def _fill_checks(self, dim, index, value):
    d = wrap_dim(dim, max(len(self.shape), 1), "index_fill_")
    _vector_index(index, "index_fill_")
    if _np_dtype(index.dtype) != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if value is not None and len(value.shape):
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {len(value.shape)} "
            "dimension(s)."
        )
    return d


@op("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor", kind=INDEXING,
    name_rule=_names.KEEP, out=False,
    inplace=True, nondiff_args=("index",), overlap_ok=("self", "value"), grad_fn="IndexFillBackward1")
def index_fill(self, dim, index, value):
    """A copy of ``self`` with the slices along ``dim`` at ``index`` set to the 0-d ``value``."""
    _fill_checks(self, dim, index, value)
    return _index_write(self, dim, index, value, "index_fill_", "fill")


@index_fill.meta_rule
def _(self, dim, index, value):
    _fill_checks(self, dim, index, value)
    return _same_meta(self)


@index_fill.grad
def _(grad, dim, index, needs_input_grad):
    kept = grad.index_fill(dim, index, 0)
    g_value = (grad.sum() - kept.sum()) if needs_input_grad[1] else None  # repeated indices count once
    return (kept if needs_input_grad[0] else None), g_value


@index_fill.sample_inputs
def _(rng):
    yield (_rand(rng, 4, 3), 0, np.array([3, 0]), _rand(rng)), {}
    yield (_rand(rng, 4, 3).T, 1, np.array([-1, 2, 3]), _rand(rng)), {}


@op("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", kind=INDEXING,
    name_rule=_names.KEEP, out=False,
    inplace=True, nondiff_args=("index",), overlap_ok=("self",))
def index_fill_scalar(self, dim, index, value):
    """A copy of ``self`` with the slices along ``dim`` at ``index`` set to ``value``."""
    _fill_checks(self, dim, index, None)
    return _index_write(self, dim, index, value, "index_fill_", "fill")


@index_fill_scalar.meta_rule
def _(self, dim, index, value):
    _fill_checks(self, dim, index, None)
    return _same_meta(self)


@index_fill_scalar.grad
def _(grad, dim, index):
    return grad.index_fill(dim, index, 0)


@index_fill_scalar.sample_inputs
def _(rng):
    yield (_rand(rng, 4, 3), 0, np.array([3, 0]), 1.5), {}
    yield (rng.integers(0, 9, (4, 3)), 1, np.array([2]), -2), {}
    yield (_rand(rng), 0, np.array([0]), 1.0), {}


@index_select.symbolic
def _(g, self, dim, index):
    if g.rank(self) == 0:
        raise g.unsupported("indexing a 0-dim tensor")
    return g.op("Gather", self, index, axis=dim)

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("index_fill",))
