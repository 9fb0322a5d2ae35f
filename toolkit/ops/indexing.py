"""Indexing ops: basic views (``slice``, ``select``), advanced ``index``/``index_put``, masks, ``take``.

``Tensor.__getitem__``/``__setitem__`` (toolkit/indexing.py) decompose Python
indices into these ops, so autograd and the tracer see registered ops only.
Index tensors are never differentiated; integer indices must be int64 or
int32, masks bool (or the deprecated uint8), as in PyTorch. The dim-wise
family lives in ``gather_scatter`` and ``index_dim``, masks, ``take`` and ``nonzero``
in ``masked``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none, wrap_dim
from . import api
from .registry import INDEXING, VIEW, op, takes_dim_names

_INT_INDEX = (np.dtype(np.int64), np.dtype(np.int32))
MASK_INDEX_DTYPES = (np.dtype(np.bool_), np.dtype(np.uint8))  # an index of these dtypes is a mask
INDEX_DTYPE_ERROR = "tensors used as indices must be long, int, byte or bool tensors"


dtype_title = _dt.title


def _np_dtype(d):
    return d.np if isinstance(d, _dt.dtype) else np.dtype(d)


# ---------------------------------------------------------------------------------------------
# Advanced-index shape rules, shared by kernels (arrays) and meta rules (tensors or JIT types)
# ---------------------------------------------------------------------------------------------
def _count_true(mask) -> int | None:
    """Number of True elements of a mask; ``None`` when only metadata is known (the JIT)."""
    data = getattr(mask, "_data", mask)
    return int(np.count_nonzero(data)) if isinstance(data, np.ndarray) else None


def index_shape(self_shape: tuple, indices, op: str = "index") -> tuple:
    """Result shape of ``self[indices]`` under aten::index rules, raising PyTorch's IndexErrors.

    ``None`` entries are full slices; a mask of k dims consumes k dims and acts as k
    index tensors (its nonzero coordinates); advanced indices broadcast together and
    their block replaces the indexed dims in place when adjacent, else moves to the front.
    Mask sizes depend on data: meta rules on tensors count them, JIT types give ``None``.
    """
    ndim = len(self_shape)
    if not indices:
        raise IndexError(f"{op}(): at least one index must be provided")
    kinds = []
    used = 0
    for idx in indices:
        if idx is None:
            kinds.append(None)
            used += 1
            continue
        dt = _np_dtype(idx.dtype)
        if dt in MASK_INDEX_DTYPES:
            kinds.append("mask")
            used += len(idx.shape)
        elif dt in _INT_INDEX:
            kinds.append("int")
            used += 1
        else:
            raise IndexError(INDEX_DTYPE_ERROR)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {used})")
    adv_dims, adv_shapes = [], []
    dim = 0
    for idx, kind in zip(indices, kinds):
        if kind is None:
            dim += 1
        elif kind == "int":
            adv_dims.append(dim)
            adv_shapes.append(tuple(idx.shape))
            dim += 1
        else:
            shape = tuple(idx.shape)
            for j, s in enumerate(shape):
                if s != self_shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(shape)} at index {j} does not match the shape of the indexed "
                        f"tensor {list(self_shape)} at index {dim + j}"
                    )
            n = _count_true(idx)
            for j in range(len(shape)):
                adv_dims.append(dim + j)
                adv_shapes.append((n,))
            dim += len(shape)
    if not adv_dims:
        return tuple(self_shape)
    block: tuple = ()
    for s in adv_shapes:
        r = broadcast_shapes_or_none(block, s)
        if r is None:
            raise IndexError(
                "shape mismatch: indexing tensors could not be broadcast together with shapes "
                + ", ".join(str(list(x)) for x in adv_shapes)
            )
        block = r
    taken = set(adv_dims)
    if adv_dims[-1] - adv_dims[0] + 1 == len(adv_dims):
        return tuple(self_shape[: adv_dims[0]]) + block + tuple(self_shape[adv_dims[-1] + 1:])
    return block + tuple(s for d, s in enumerate(self_shape) if d not in taken)


def _numpy_key(indices, expand_masks: bool = False) -> tuple:
    """The numpy index tuple for aten::index's list (``None`` -> ``:``, uint8 masks -> bool)."""
    key = []
    for a in indices:
        if a is None:
            key.append(slice(None))
        elif a.dtype in MASK_INDEX_DTYPES:
            m = a if a.dtype == np.bool_ else a.astype(np.bool_)
            key.extend(np.nonzero(m)) if expand_masks else key.append(m)
        else:
            key.append(a)
    return tuple(key)


def _bounds_error(self_shape, indices, err: IndexError) -> IndexError:
    """PyTorch's message for an out-of-range index: the value, the index tensor's position, the dim's size."""
    dim = 0
    k = 0  # PyTorch numbers the dimension among the index tensors, skipping ``None`` entries
    for a in indices:
        if a is None:
            dim += 1
            continue
        if a.dtype in MASK_INDEX_DTYPES:
            dim += a.ndim
            k += a.ndim
            continue
        size = self_shape[dim]
        bad = a[(a >= size) | (a < -size)]
        if bad.size:
            return IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {k} with size {size}")
        dim += 1
        k += 1
    return err


def _samples_float(rng, *shape):
    return np.asarray(rng.standard_normal(shape))


# ---------------------------------------------------------------------------------------------
# Basic indexing: views
# ---------------------------------------------------------------------------------------------
@op("slice(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    kind=VIEW, name_rule=_names.KEEP, method=False, function=False)
def slice_op(self, dim=0, start=None, end=None, step=1):
    """Elements ``start:end:step`` along ``dim`` (a view); out-of-range bounds clamp as in Python."""
    nd = self.ndim
    if step <= 0 or nd == 0:
        if nd == 0:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        raise RuntimeError("slice step must be positive")
    if dim == 0:
        return self[start:end:step]
    d = dim if 0 < dim < nd else wrap_dim(dim, nd, "slice")
    return self[(slice(None),) * d + (slice(start, end, step),)]


@slice_op.meta_rule
def _(self, dim=0, start=None, end=None, step=1):
    if len(self.shape) == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, len(self.shape), "slice")
    shape = list(self.shape)
    shape[d] = len(range(*slice(start, end, step).indices(shape[d])))
    return TensorMeta(shape, self.dtype, self.device)


@slice_op.grad
def _(grad, self_shape, dim, start, end, step):
    return api.slice_scatter(grad.new_zeros(self_shape), grad, dim, start, end, step)


@slice_op.sample_inputs
def _(rng):
    x = _samples_float(rng, 5, 4)
    yield (x, 0, 1, 4, 2), {}
    yield (x, 1, -3, None), {}
    yield (x,), {"dim": -1, "start": -100, "end": 100, "step": 3}
    yield (x.T, 0, 3, 1), {}  # empty
    yield (_samples_float(rng, 0, 3), 1, 1), {}


@op("select(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", kind=VIEW, name_rule=_names.drop_dim)
def select(self, dim, index):
    """The slice at ``index`` along ``dim``, with that dim removed (a view)."""
    shape = self.shape
    d = dim if 0 <= dim < len(shape) else _check_select(shape, dim, index)
    if index < -shape[d] or index >= shape[d]:
        _check_select(shape, dim, index)
    if d == 0:
        return self[index, ...]
    return self[(slice(None),) * d + (index, Ellipsis)]


def _check_select(shape, dim, index):
    if len(shape) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape), "select")
    if index < -shape[d] or index >= shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(shape)} at dimension {d}")
    return d


@select.meta_rule
def _(self, dim, index):
    d = _check_select(tuple(self.shape), dim, index)
    return TensorMeta(tuple(self.shape[:d]) + tuple(self.shape[d + 1:]), self.dtype, self.device)


@select.grad
def _(grad, self_shape, dim, index):
    return api.select_scatter(grad.new_zeros(self_shape), grad, dim, index)


@select.sample_inputs
def _(rng):
    x = _samples_float(rng, 3, 4)
    yield (x, 0, 2), {}
    yield (x, -1, -4), {}
    yield (x.T, 1, 0), {}
    yield (_samples_float(rng, 4), 0, 1), {}
    yield (_samples_float(rng, 2, 0), 0, 1), {}


def _scatter_key(ndim, dim, start, end, step):
    d = wrap_dim(dim, ndim, "slice_scatter")
    return (slice(None),) * d + (slice(start, end, step),)


@op("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
    "-> Tensor", kind=INDEXING)
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    """A copy of ``self`` with ``src`` written into the slice ``start:end:step`` along ``dim``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = _scatter_key(self.ndim, dim, start, end, step)
    out = self.copy()
    if out[key].shape != src.shape:
        raise RuntimeError(
            f"slice_scatter: Expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {list(out[key].shape)}"
        )
    out[key] = src
    return out


@slice_scatter.meta_rule
def _(self, src, dim=0, start=None, end=None, step=1):
    return TensorMeta(self.shape, self.dtype, self.device)


@slice_scatter.grad
def _(grad, src_shape, dim, start, end, step, needs_input_grad):
    g_self = api.slice_scatter(grad, grad.new_zeros(src_shape), dim, start, end, step) if needs_input_grad[0] else None
    return g_self, api.slice(grad, dim, start, end, step)


@slice_scatter.sample_inputs
def _(rng):
    yield (_samples_float(rng, 5, 3), _samples_float(rng, 2, 3), 0, 1, 5, 2), {}
    yield (_samples_float(rng, 3, 4), _samples_float(rng, 3, 2)), {"dim": 1, "start": -2}
    yield (_samples_float(rng, 4), _samples_float(rng, 0), 0, 3, 1), {}


@op("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor", kind=INDEXING, out=False)
def select_scatter(self, src, dim, index):
    """A copy of ``self`` with ``src`` written into the slice at ``index`` along ``dim``."""
    d = _check_select(self.shape, dim, index)
    key = (slice(None),) * d + (index, Ellipsis)
    out = self.copy()
    if out[key].shape != src.shape:
        raise RuntimeError(
            f"select_scatter: Expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {list(out[key].shape)}"
        )
    out[key] = src
    return out


@select_scatter.meta_rule
def _(self, src, dim, index):
    _check_select(tuple(self.shape), dim, index)
    return TensorMeta(self.shape, self.dtype, self.device)


@select_scatter.grad
def _(grad, src_shape, dim, index, needs_input_grad):
    g_self = api.select_scatter(grad, grad.new_zeros(src_shape), dim, index) if needs_input_grad[0] else None
    return g_self, grad.select(dim, index)


@select_scatter.sample_inputs
def _(rng):
    yield (_samples_float(rng, 3, 4), _samples_float(rng, 4), 0, 1), {}
    yield (_samples_float(rng, 3, 4), _samples_float(rng, 3), -1, -2), {}
    yield (_samples_float(rng, 3), _samples_float(rng), 0, 2), {}


# ---------------------------------------------------------------------------------------------
# Advanced indexing
# ---------------------------------------------------------------------------------------------
@op("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", kind=INDEXING, method=False, function=False,
    nondiff_args=("indices",))
def index(self, indices):
    """``self[indices]`` with integer and mask index tensors (a copy), numpy's and PyTorch's rules."""
    shape = index_shape(self.shape, indices, "index")
    if self.size == 0:  # PyTorch checks no index against a dimension of a tensor with no elements
        return np.empty(shape, self.dtype)
    key = _numpy_key(indices)
    if all(k.__class__ is slice for k in key):
        return self.copy()
    try:
        return self[key]
    except IndexError as e:
        raise _bounds_error(self.shape, indices, e) from None


@index.meta_rule
def _(self, indices):
    return TensorMeta(index_shape(tuple(self.shape), indices, "index"), self.dtype, self.device)


@index.grad
def _(grad, self_shape, indices):
    return api.index_put(grad.new_zeros(self_shape), indices, grad, True)


def _mask(rng, *shape):
    m = rng.random(shape) < 0.5
    return m


@index.sample_inputs
def _(rng):
    x = _samples_float(rng, 4, 3)
    yield (x, [np.array([0, 3, -1, 0])]), {}  # repeated index accumulates in backward
    yield (x, [None, np.array([[2, 0], [1, 1]], dtype=np.int32)]), {}
    yield (x, [np.array([1, 2]), np.array([0, 2])]), {}
    yield (x, [_mask(rng, 4, 3)]), {}
    yield (x.T, [_mask(rng, 3)]), {}
    y = _samples_float(rng, 3, 2, 4)
    yield (y, [np.array([0, 2]), None, np.array([3, 1])]), {}  # non-adjacent: block moves to the front
    yield (y, [None, np.array([1]), np.array([[0], [3]])]), {}
    yield (y, [np.array([], dtype=np.int64)]), {}


@op("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    kind=INDEXING, out=False, inplace=True, nondiff_args=("indices",), overlap_ok=("self",), no_overlap=("values",))
def index_put(self, indices, values, accumulate=False, out=None):
    """``self[indices] = values`` on a copy (``+=`` with repeats summed when ``accumulate``)."""
    if values.dtype != self.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {dtype_title(self.dtype)} for the "
            f"destination and {dtype_title(values.dtype)} for the source."
        )
    shape = index_shape(self.shape, indices, "index_put")
    if broadcast_shapes_or_none(tuple(values.shape), shape) != shape:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to indexing result "
            f"of shape {list(shape)}"
        )
    out = self.copy() if out is None else out  # ``out`` is ``self`` itself for index_put_
    if out.size == 0:  # nothing to write, and PyTorch checks no index against an empty tensor
        return out
    try:
        if accumulate:
            np.add.at(out, _numpy_key(indices, expand_masks=True), values)
        else:
            out[_numpy_key(indices)] = values
    except IndexError as e:
        raise _bounds_error(self.shape, indices, e) from None
    return out


@index_put.meta_rule
def _(self, indices, values, accumulate=False):
    index_shape(tuple(self.shape), indices, "index_put")
    return TensorMeta(self.shape, self.dtype, self.device)


@index_put.grad
def _(grad, indices, accumulate, needs_input_grad):
    g_self = None
    if needs_input_grad[0]:
        g_self = grad if accumulate else api.index_put(grad, indices, grad.new_zeros(()), False)
    g_values = api.index(grad, indices) if needs_input_grad[1] else None
    return g_self, g_values


@index_put.sample_inputs
def _(rng):
    x = _samples_float(rng, 4, 3)
    yield (x, [np.array([0, 2])], _samples_float(rng, 2, 3)), {}
    yield (x, [np.array([0, 2, 0])], _samples_float(rng, 3)), {"accumulate": True}
    yield (x, [np.array([[2], [0]]), np.array([1, 0, 2])], _samples_float(rng, 2, 1)), {}
    yield (x, [_mask(rng, 4, 3)], _samples_float(rng)), {}
    yield (x.T, [np.array([1, 0]), np.array([3, 3])], _samples_float(rng, 2)), {"accumulate": True}
    y = _samples_float(rng, 3, 2, 4)
    yield (y, [np.array([0, 2]), np.array([[1], [0]])], _samples_float(rng, 2, 2, 4)), {}


from . import gather_scatter, index_dim, masked  # noqa: E402,F401  (the rest of the family registers here)


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_ints(g, values):
    from .view import onnx_ints  # the view ops' helper, defined before this module

    return onnx_ints(g, values)


@slice_op.symbolic
def _(g, self, dim=0, start=None, end=None, step=1):
    return g.op("Slice", self, _onnx_ints(g, [0 if start is None else start]),
                _onnx_ints(g, [2 ** 63 - 1 if end is None else end]), _onnx_ints(g, [dim]), _onnx_ints(g, [step]))


@select.symbolic
def _(g, self, dim, index):
    index = g.op("Cast", index, to=_dt.int64) if g.is_value(index) else g.constant(index, _dt.int64)
    return g.op("Gather", self, index, axis=dim)


@index.symbolic
def _(g, self, indices):
    used = [(i, x) for i, x in enumerate(indices) if x is not None]
    if len(used) != 1 or g.dtype(used[0][1]) is _dt.bool:
        raise g.unsupported("indexing with several index tensors or a mask (one integer index tensor is exported)")
    dim, idx = used[0]
    return g.op("Gather", self, idx, axis=dim)

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("select",))
