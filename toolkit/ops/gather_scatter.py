"""Dim-wise indexing ops: gather, scatter (src, value, reduce), scatter_add, take_along_dim.

Each reads or writes ``self`` along one ``dim`` at the positions an integer
index tensor of ``self``'s rank names; gather's derivative is scatter_add and
back, written with registered ops. Whole-slice forms live in ``index_dim``.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none, wrap_dim
from . import api
from .indexing import _np_dtype, dtype_title
from .registry import INDEXING, op

_INTS = (np.dtype(np.int64), np.dtype(np.int32))


def _rand(rng, *shape):
    return np.asarray(rng.standard_normal(shape))


def _check_bounds(index, size: int, dim: int, allow_negative: bool = False, exc=RuntimeError, prefix: str = ""):
    if not index.size:
        return
    lo = -size if allow_negative else 0
    if index.max() >= size or index.min() < lo:
        bad = index[(index >= size) | (index < lo)].flat[0]
        raise exc(f"{prefix}index {int(bad)} is out of bounds for dimension {dim} with size {size}")


def _as_1d(a):
    return a.reshape(1) if a.ndim == 0 else a


def _pad_to(g, shape: tuple):
    """Zero-pad ``g`` at the end of each dim up to ``shape`` (``src`` may be larger than ``index``)."""
    for k, n in enumerate(shape):
        cur = g.shape[k]
        if cur < n:
            full = list(g.shape)
            full[k] = n
            g = api.slice_scatter(g.new_zeros(tuple(full)), g, k, 0, cur)
    return g


# ---------------------------------------------------------------------------------------------
# gather / scatter
# ---------------------------------------------------------------------------------------------
def _gather_checks(self, dim, index):
    if _np_dtype(index.dtype) not in _INTS:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    nd = max(len(self.shape), 1)
    d = wrap_dim(dim, nd, "gather")
    s_shape, i_shape = tuple(self.shape) or (1,), tuple(index.shape) or (1,)
    if len(s_shape) != len(i_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(nd):
        if k != d and i_shape[k] > s_shape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(index.shape)} to be no larger than self "
                f"{list(self.shape)} apart from dimension {d}"
            )
    return d


@op("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", kind=INDEXING,
    nondiff_args=("index",))
def gather(self, dim, index, sparse_grad=False):
    """``out[i][j] = self[i][index[i][j]]`` for ``dim=1``: values picked along ``dim``."""
    d = _gather_checks(self, dim, index)
    src, idx = _as_1d(self), _as_1d(index)
    if idx.size == 0:
        return np.empty(index.shape, self.dtype)
    _check_bounds(idx, src.shape[d], d)
    src = src[tuple(slice(None) if k == d else slice(0, n) for k, n in enumerate(idx.shape))]
    return np.take_along_axis(src, idx, axis=d).reshape(index.shape)


@gather.meta_rule
def _(self, dim, index, sparse_grad=False):
    _gather_checks(self, dim, index)
    return TensorMeta(index.shape, self.dtype, self.device)


@gather.grad
def _(grad, self_shape, dim, index):
    return grad.new_zeros(self_shape).scatter_add(dim, index, grad)


@gather.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 4), 1, np.array([[0, 3, 0], [1, 1, 2]])), {}
    yield (_rand(rng, 3, 4).T, 0, np.array([[2, 0], [0, 0]], dtype=np.int32)), {}
    yield (_rand(rng, 3, 4), -2, np.array([[2, 0, 1, 1]])), {}
    yield (_rand(rng), 0, np.array(0)), {}
    yield (_rand(rng, 2, 3), 1, np.zeros((2, 0), np.int64)), {}


def _scatter_checks(self, dim, index, src, op="scatter"):
    nd = max(len(self.shape), 1)
    d = wrap_dim(dim, nd, op)
    if _np_dtype(index.dtype) not in _INTS:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    if src is not None and _np_dtype(src.dtype) != _np_dtype(self.dtype):
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    s_shape, i_shape = tuple(self.shape) or (1,), tuple(index.shape) or (1,)
    if len(i_shape) != len(s_shape) or (src is not None and len(tuple(src.shape) or (1,)) != len(s_shape)):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    r_shape = (tuple(src.shape) or (1,)) if src is not None else None
    for k in range(nd):
        if (k != d and i_shape[k] > s_shape[k]) or (r_shape is not None and i_shape[k] > r_shape[k]):
            msg = f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} apart from dimension {d}"
            if src is not None:
                msg += f" and to be no larger size than src {list(src.shape)}"
            raise RuntimeError(msg)
    return d


def _scatter(self, dim, index, src, value, reduce, op):
    d = _scatter_checks(self, dim, index, src, op)
    out = self.copy()
    target, idx = _as_1d(out), _as_1d(index)
    if idx.size == 0:
        return out
    _check_bounds(idx, target.shape[d], d)
    coords = list(np.indices(idx.shape, sparse=True))
    coords[d] = idx
    coords = tuple(coords)
    if src is not None:
        src = _as_1d(src)
        vals = src[tuple(slice(0, n) for n in idx.shape)]
    else:
        vals = np.array(value).astype(self.dtype)
    if reduce is None:
        target[coords] = vals
    elif reduce == "add":
        np.add.at(target, coords, vals)
    elif reduce == "multiply":
        np.multiply.at(target, coords, vals)
    else:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return out


def _scatter_meta(self, dim, index, src=None, op="scatter"):
    _scatter_checks(self, dim, index, src, op)
    return TensorMeta(self.shape, self.dtype, self.device)


@op("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", kind=INDEXING, inplace=True,
    nondiff_args=("index",), no_overlap=("src",))
def scatter(self, dim, index, src):
    """A copy of ``self`` with ``src`` written at ``index`` along ``dim`` (``self[i][index[i][j]] = src[i][j]``)."""
    return _scatter(self, dim, index, src, None, None, "scatter")


@scatter.meta_rule
def _(self, dim, index, src):
    return _scatter_meta(self, dim, index, src)


@scatter.grad
def _(grad, dim, index, src_shape, needs_input_grad):
    g_self = grad.scatter(dim, index, 0) if needs_input_grad[0] else None
    return g_self, _pad_to(grad.gather(dim, index), src_shape)


def _unique_rows(rng, n_rows, n_cols, size):
    """Index rows without repeats, so scattered writes do not collide (gradcheck needs that)."""
    return np.stack([rng.permutation(size)[:n_cols] for _ in range(n_rows)])


@scatter.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 5), 1, _unique_rows(rng, 2, 3, 5), _rand(rng, 2, 4)), {}
    yield (_rand(rng, 4, 3).T, 1, _unique_rows(rng, 3, 2, 4), _rand(rng, 3, 2)), {}
    yield (_rand(rng, 4, 2), 0, _unique_rows(rng, 2, 2, 4).T.copy(), _rand(rng, 2, 2)), {}
    yield (_rand(rng), 0, np.array(0), _rand(rng)), {}


@op("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", kind=INDEXING, inplace=True,
    nondiff_args=("index",), grad_fn="ScatterBackward1")
def scatter_value(self, dim, index, value):
    """A copy of ``self`` with ``value`` written at ``index`` along ``dim``."""
    return _scatter(self, dim, index, None, value, None, "scatter")


@scatter_value.meta_rule
def _(self, dim, index, value):
    return _scatter_meta(self, dim, index)


@scatter_value.grad
def _(grad, dim, index):
    return grad.scatter(dim, index, 0)


@scatter_value.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 5), 1, np.array([[0, 4, 4], [2, 1, 0]]), 1.5), {}
    yield (rng.integers(0, 5, (3, 4)), 0, np.array([[0, 2, 1, 1]]), 7), {}


@op("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor", kind=INDEXING,
    inplace=True, nondiff_args=("index",), differentiable=False, no_overlap=("src",))
def scatter_reduce_src(self, dim, index, src, reduce):
    """Scatter ``src`` combining with ``self``'s values by ``reduce`` (``'add'`` or ``'multiply'``)."""
    return _scatter(self, dim, index, src, None, reduce, "scatter")


@scatter_reduce_src.meta_rule
def _(self, dim, index, src, reduce):
    return _scatter_meta(self, dim, index, src)


@scatter_reduce_src.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 5), 1, np.array([[0, 4, 4], [2, 1, 0]]), _rand(rng, 2, 3)), {"reduce": "add"}
    yield (_rand(rng, 3, 5), 0, np.array([[0, 2, 2], [0, 1, 0]]), _rand(rng, 2, 3)), {"reduce": "multiply"}


@op("scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor",
    kind=INDEXING, inplace=True, nondiff_args=("index",), differentiable=False)
def scatter_reduce_value(self, dim, index, value, reduce):
    """Scatter ``value`` combining with ``self``'s values by ``reduce`` (``'add'`` or ``'multiply'``)."""
    return _scatter(self, dim, index, None, value, reduce, "scatter")


@scatter_reduce_value.meta_rule
def _(self, dim, index, value, reduce):
    return _scatter_meta(self, dim, index)


@scatter_reduce_value.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 5), 1, np.array([[0, 4, 4], [2, 1, 0]]), 2.0), {"reduce": "multiply"}
    yield (_rand(rng, 3, 5), 0, np.array([[0, 2, 2], [0, 1, 0]]), -1.5), {"reduce": "add"}


@op("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", kind=INDEXING, inplace=True,
    nondiff_args=("index",), no_overlap=("src",))
def scatter_add(self, dim, index, src):
    """A copy of ``self`` with ``src`` added at ``index`` along ``dim``; repeated indices accumulate."""
    return _scatter(self, dim, index, src, None, "add", "scatter_add")


@scatter_add.meta_rule
def _(self, dim, index, src):
    return _scatter_meta(self, dim, index, src, "scatter_add")


@scatter_add.grad
def _(grad, dim, index, src_shape):
    return grad, _pad_to(grad.gather(dim, index), src_shape)


@scatter_add.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 5), 1, np.array([[0, 4, 4], [2, 1, 0]]), _rand(rng, 2, 4)), {}
    yield (_rand(rng, 4, 3).T, 0, np.array([[0, 2, 2, 0], [1, 1, 1, 2]]), _rand(rng, 2, 4)), {}
    yield (_rand(rng), 0, np.array(0), _rand(rng)), {}


# ---------------------------------------------------------------------------------------------
# take_along_dim
# ---------------------------------------------------------------------------------------------
def _take_along_shapes(self, indices, dim):
    if _np_dtype(indices.dtype) != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {dtype_title(indices.dtype)}")
    if dim is None:
        return None, (int(np.prod(indices.shape, dtype=np.int64)),)
    s, i = tuple(self.shape), tuple(indices.shape)
    if len(s) != len(i):
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{len(s)} dimensions for input, and {len(i)} dimensions for indices"
        )
    d = wrap_dim(dim, max(len(s), 1), "take_along_dim")
    out = []
    for k, (a, b) in enumerate(zip(s, i)):
        if k == d:
            out.append(b)
            continue
        r = broadcast_shapes_or_none((a,), (b,))
        if r is None:
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {k}"
            )
        out.append(r[0])
    return d, tuple(out)


@op("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor", kind=INDEXING,
    nondiff_args=("indices",), grad_fn="GatherBackward0")
def take_along_dim(self, indices, dim=None):
    """Values of ``self`` at ``indices`` along ``dim`` (broadcasting the other dims); flattened when ``dim=None``."""
    d, shape = _take_along_shapes(self, indices, dim)
    if d is None:
        src, idx = self.reshape(-1), indices.reshape(-1)
        _check_bounds(idx, src.shape[0], 0)
        return src[idx]
    src, idx = _as_1d(self), _as_1d(indices)
    b_src = list(shape) or [1]
    b_src[d] = src.shape[d]
    src = np.broadcast_to(src, b_src)
    idx = np.broadcast_to(idx, shape or (1,))
    if src.shape[d] == 0:
        _check_bounds(idx, 0, d)
        return np.empty(shape, self.dtype)
    # Along a dim, PyTorch wraps indices modulo the size (negative ones count from the end).
    return np.take_along_axis(src, np.mod(idx, src.shape[d]), axis=d).reshape(shape)


@take_along_dim.meta_rule
def _(self, indices, dim=None):
    return TensorMeta(_take_along_shapes(self, indices, dim)[1], self.dtype, self.device)


@take_along_dim.grad
def _(grad, self_shape, indices, dim):
    if dim is None:
        numel = int(np.prod(self_shape, dtype=np.int64))
        return grad.new_zeros((numel,)).scatter_add(0, indices.reshape(-1), grad.reshape(-1)).reshape(self_shape)
    if not self_shape:
        return grad
    nd = len(self_shape)
    d = wrap_dim(dim, nd)
    g_shape = tuple(grad.shape)
    coords = [
        indices.expand(g_shape) if k == d else api.arange(g_shape[k]).reshape(tuple(-1 if j == k else 1 for j in range(nd)))
        for k in range(nd)
    ]
    full = list(g_shape)
    full[d] = self_shape[d]
    return api.index_put(grad.new_zeros(tuple(full)), coords, grad, True)


@take_along_dim.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 4), np.array([[0, 3], [1, 1], [2, 0]]), 1), {}
    yield (_rand(rng, 3, 4), np.array([[0], [2], [1], [1]]).T, 0), {}
    yield (_rand(rng, 3, 1), np.array([[0, 0, 0]]), 1), {}
    yield (_rand(rng, 3, 4).T, np.array([[1, 11], [3, 0]])), {}
    yield (_rand(rng, 2, 4), np.array([[-1, 2, -4]]), -1), {}


@gather.symbolic
def _(g, self, dim, index, sparse_grad=False):
    if g.rank(self) == 0:
        raise g.unsupported("gathering from a 0-dim tensor")
    return g.op("GatherElements", self, index, axis=dim)
