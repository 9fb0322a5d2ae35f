"""View ops: results share storage with their input (and so see its in-place changes).

Each kernel returns a numpy view of its input; the dispatcher then gives the
result the input's storage and version counter. The shape arithmetic of each
op lives in one ``*_shape`` helper that both the kernel and the meta rule call,
so eager errors and the JIT's type propagation come from the same code.
Views that reorder dims (permute, movedim, transpose, t) are in
``view_order``; views that cut a tensor into parts (split, chunk, unbind,
narrow) are in ``view_parts``, and the strided ones (unfold, diagonal) in
``view_strided``.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import infer_size, wrap_dim
from . import api
from .grad_fn_rules import view_or_copy
from .registry import VIEW, op, takes_dim_names


def _meta(t, shape, dtype=None) -> TensorMeta:
    return TensorMeta(shape, dtype or t.dtype, t.device)


def _reshaped(a: np.ndarray, shape: tuple) -> np.ndarray:
    """A view with ``shape`` when the strides allow one, else a copy (``reshape``'s contract)."""
    return np.reshape(a, shape)


# ---------------------------------------------------------------------------------------------
# view, view_as, reshape
# ---------------------------------------------------------------------------------------------
@op("view(Tensor(a) self, int[] size) -> Tensor(a)", kind=VIEW, function=False)
def view(self, size):
    """Same data, new shape; fails (as in PyTorch) when the strides cannot express it without a copy.

    >>> x = toolkit.arange(6).view(2, 3)
    """
    return _view_to(self, size, "view")


def _view_to(a: np.ndarray, size, name: str) -> np.ndarray:
    shape = infer_size(size, a.size, name)
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead."
        ) from None


@view.meta_rule
def _(self, size):
    return _meta(self, infer_size(size, math.prod(self.shape), "view"))


@view.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@view.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, (12,)), {}
    yield (x, (2, -1, 3)), {}
    yield (x, [4, 3]), {}
    yield (x.T, (4, 3)), {}
    yield (rng.standard_normal(()), (1, 1)), {}
    yield (rng.standard_normal((1, 1)), ()), {}
    yield (rng.standard_normal((0, 3)), (3, 0, 5)), {}


def _view_dtype_shape(shape: tuple, old, new) -> tuple:
    if old.itemsize == new.itemsize:
        return tuple(shape)
    what = f"to view {_dt.title(old)} as {_dt.title(new)} (different element sizes)"
    if not shape:
        raise RuntimeError(f"view(): self.dim() cannot be 0 {what}")
    nbytes = shape[-1] * old.itemsize
    if nbytes % new.itemsize:
        raise RuntimeError(
            f"view(): self.size(-1) must be divisible by {new.itemsize // old.itemsize} {what}, but got {shape[-1]}"
        )
    return tuple(shape[:-1]) + (nbytes // new.itemsize,)


@op("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", kind=VIEW, function=False, differentiable=False)
def view_dtype(self, dtype):
    """Reinterpret the same bytes as another dtype; the last dim scales by the ratio of element sizes."""
    old = _dt.from_numpy_dtype(self.dtype)
    _view_dtype_shape(self.shape, old, dtype)
    if old.itemsize != dtype.itemsize and self.size and self.shape[-1] != 1 and self.strides[-1] != self.itemsize:
        raise RuntimeError(
            f"view(): self.stride(-1) must be 1 to view {_dt.title(old)} as {_dt.title(dtype)} (different element sizes), "
            f"but got {self.strides[-1] // self.itemsize}"
        )
    try:
        return self.view(dtype.np)
    except ValueError:
        raise RuntimeError(
            f"view(): the storage offset of self must be divisible by {dtype.itemsize // old.itemsize} to view "
            f"{_dt.title(old)} as {_dt.title(dtype)} (different element sizes)"
        ) from None


@view_dtype.meta_rule
def _(self, dtype):
    return _meta(self, _view_dtype_shape(tuple(self.shape), self.dtype, dtype), dtype)


@view_dtype.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, _dt.int64), {}
    yield (x, _dt.float32), {}
    yield (x, _dt.int16), {}
    yield (rng.standard_normal(()), _dt.int64), {}
    yield (rng.standard_normal((0, 2)), _dt.int64), {}


@op("view_as(Tensor(a) self, Tensor other) -> Tensor(a)", kind=VIEW, function=False, nondiff_args=("other",),
    grad_fn="ViewBackward0")
def view_as(self, other):
    """``self.view(other.size())``."""
    return _view_to(self, other.shape, "view_as")


@view_as.meta_rule
def _(self, other):
    return _meta(self, infer_size(tuple(other.shape), math.prod(self.shape), "view_as"))


@view_as.grad
def _(grad, self_shape):
    return grad.reshape(self_shape), None


@view_as.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), rng.standard_normal((2, 6))), {}
    yield (rng.standard_normal(()), rng.standard_normal((1,))), {}
    yield (rng.standard_normal((0, 4)), rng.standard_normal((2, 0))), {}


@op("reshape(Tensor(a) self, int[] shape) -> Tensor(a)", kind=VIEW, grad_fn=view_or_copy())
def reshape(self, shape):
    """A view when the strides allow it, else a copy."""
    return _reshaped(self, infer_size(shape, self.size, "reshape"))


@reshape.meta_rule
def _(self, shape):
    return _meta(self, infer_size(shape, math.prod(self.shape), "reshape"))


@reshape.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@reshape.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, (12,)), {}
    yield (x.T, (-1,)), {}
    yield (x, (2, 2, 3)), {}
    yield (x, [-1, 6]), {}
    yield (rng.standard_normal(()), (1,)), {}
    yield (rng.standard_normal((1,)), ()), {}
    yield (rng.standard_normal((2, 0)), (0, 4)), {}
    yield (x,), {"shape": (6, 2)}


# ---------------------------------------------------------------------------------------------
# flatten, unflatten
# ---------------------------------------------------------------------------------------------
def flatten_shape(shape: tuple, start_dim: int, end_dim: int) -> tuple:
    n = len(shape)
    if n == 0:
        wrap_dim(start_dim, 0, "flatten")
        wrap_dim(end_dim, 0, "flatten")
        return (1,)
    s, e = wrap_dim(start_dim, n, "flatten"), wrap_dim(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return tuple(shape[:s]) + (math.prod(shape[s : e + 1]),) + tuple(shape[e + 1 :])


@op("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", kind=VIEW,
    name_rule=_names.flatten,
    grad_fn=view_or_copy())
def flatten(self, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible); a 0-d tensor becomes 1-d."""
    return _reshaped(self, flatten_shape(self.shape, start_dim, end_dim))


@flatten.meta_rule
def _(self, start_dim=0, end_dim=-1):
    return _meta(self, flatten_shape(tuple(self.shape), start_dim, end_dim))


@flatten.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@flatten.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3, 4))
    yield (x,), {}
    yield (x, 1), {}
    yield (x, 0, 1), {}
    yield (x.transpose(2, 0, 1), -2, -1), {}
    yield (x,), {"start_dim": 1, "end_dim": 1}
    yield (rng.standard_normal(()),), {}
    yield (rng.standard_normal((2, 0, 3)), 1), {}


def unflatten_shape(shape: tuple, dim: int, sizes: tuple) -> tuple:
    if not shape:
        raise RuntimeError(f"unflatten: Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, len(shape), "unflatten")
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[d]
    inferred = [i for i, s in enumerate(sizes) if s == -1]
    if len(inferred) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if inferred:
        if known == 0 and n == 0:
            raise RuntimeError(
                f"unflatten: cannot reshape tensor of 0 elements into shape {list(sizes)} because the unspecified "
                "dimension size -1 can be any value and is ambiguous"
            )
        ok = known != 0 and n % known == 0
        sizes = sizes[: inferred[0]] + (n // known if ok else -1,) + sizes[inferred[0] + 1 :]
    else:
        ok = known == n and all(s >= 0 for s in sizes)
    if not ok:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} ({n}) in the input "
            "tensor"
        )
    return tuple(shape[:d]) + sizes + tuple(shape[d + 1 :])


@op("unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)", kind=VIEW, name_rule=_names.unflatten,
    grad_fn="ViewBackward0")
def unflatten(self, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one of them may be -1); always a view."""
    return np.reshape(self, unflatten_shape(self.shape, dim, sizes))


@unflatten.meta_rule
def _(self, dim, sizes):
    return _meta(self, unflatten_shape(tuple(self.shape), dim, sizes))


@unflatten.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@unflatten.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, 1, (2, 2)), {}
    yield (x, -1, (-1, 2)), {}
    yield (x.T, 0, (2, 1, 2)), {}
    yield (x, 0, (3,)), {}
    yield (x,), {"dim": 0, "sizes": (1, 3)}
    yield (rng.standard_normal((2, 0)), 1, (0, 5)), {}


# ---------------------------------------------------------------------------------------------
# squeeze, unsqueeze
# ---------------------------------------------------------------------------------------------
def squeeze_shape(shape: tuple, dim) -> tuple:
    if dim is None:
        return tuple(s for s in shape if s != 1)
    dims = [wrap_dim(d, len(shape), "squeeze") for d in dim]
    if len(set(dims)) != len(dims):
        dup = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"squeeze: dim {dup} appears multiple times in the list of dims")
    return tuple(s for i, s in enumerate(shape) if not (s == 1 and i in dims))


def _squeeze_node(bound, outputs) -> str:
    """PyTorch's three squeeze formulas: all dims, one dim (``squeeze(0)``, bound here as ``(0,)``), a list."""
    dim = bound[1]
    return "SqueezeBackward0" if dim is None else "SqueezeBackward1" if len(dim) == 1 else "SqueezeBackward2"


@op("squeeze(Tensor(a) self, int[]? dim=None) -> Tensor(a)", kind=VIEW, name_rule=_names.squeeze,
    grad_fn=_squeeze_node)
def squeeze(self, dim=None):
    """Remove dims of size 1 (all of them, or those in ``dim`` that have size 1)."""
    shape = self.shape
    if dim is not None and len(dim) == 1 and -len(shape) <= dim[0] < len(shape):  # the common case, quickly
        d = dim[0] % len(shape)
        return self.reshape(shape[:d] + shape[d + 1:]) if shape[d] == 1 else self.view()
    return np.reshape(self, squeeze_shape(shape, dim))


@squeeze.meta_rule
def _(self, dim=None):
    return _meta(self, squeeze_shape(tuple(self.shape), dim))


@squeeze.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@squeeze.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 1, 4, 1))
    yield (x,), {}
    yield (x, 1), {}
    yield (x, 0), {}
    yield (x, (1, -1)), {}
    yield (x.transpose(3, 2, 1, 0), -2), {}
    yield (x,), {"dim": 3}
    yield (rng.standard_normal(()), 0), {}
    yield (rng.standard_normal((1, 0, 1)),), {}


def unsqueeze_shape(shape: tuple, dim: int) -> tuple:
    d = wrap_dim(dim, len(shape) + 1, "unsqueeze")
    return tuple(shape[:d]) + (1,) + tuple(shape[d:])


@op("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", kind=VIEW)
def unsqueeze(self, dim):
    """Insert a dim of size 1 at ``dim`` (a view)."""
    return np.expand_dims(self, wrap_dim(dim, self.ndim + 1, "unsqueeze"))


@unsqueeze.meta_rule
def _(self, dim):
    return _meta(self, unsqueeze_shape(tuple(self.shape), dim))


@unsqueeze.grad
def _(grad, dim):
    return grad.squeeze(dim)


@unsqueeze.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, 0), {}
    yield (x, 2), {}
    yield (x.T, -1), {}
    yield (x,), {"dim": -3}
    yield (rng.standard_normal(()), 0), {}
    yield (rng.standard_normal((0, 2)), 1), {}


# ---------------------------------------------------------------------------------------------
# expand, expand_as
# ---------------------------------------------------------------------------------------------
def expand_shape(shape: tuple, size, name: str = "expand") -> tuple:
    size = tuple(size)
    if len(size) < len(shape):
        raise RuntimeError(
            f"{name}: the number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    lead = len(size) - len(shape)
    target = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"{name}: The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                    f"dimension {i}"
                )
            target.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            target.append(cur)
        elif cur == 1 and s >= 0 or cur == s:
            target.append(s)
        else:
            raise RuntimeError(
                f"{name}: The expanded size of the tensor ({s}) must match the existing size ({cur}) at non-singleton "
                f"dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(shape)}"
            )
    return tuple(target)


@op("expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)", kind=VIEW,
    name_rule=_names.keep_right, function=False)
def expand(self, size, implicit=False):
    """Broadcast to ``size`` without copying (-1 keeps a dim); the result's new dims have stride 0."""
    return np.broadcast_to(self, expand_shape(self.shape, size))


@expand.meta_rule
def _(self, size, implicit=False):
    return _meta(self, expand_shape(tuple(self.shape), size))


@expand.grad
def _(grad, self_shape):
    return grad.sum_to_size(self_shape)


@expand.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 1)), (3, 4)), {}
    yield (rng.standard_normal((3, 1)), (2, -1, 4)), {}
    yield (rng.standard_normal((1, 3)).T, (3, 2)), {}
    yield (rng.standard_normal(4), [2, 4]), {}
    yield (rng.standard_normal(()), (2, 2)), {}
    yield (rng.standard_normal(()), ()), {}
    yield (rng.standard_normal((1, 2)), (0, 2)), {}
    yield (rng.standard_normal((3, 1)),), {"size": (3, 3)}


def _common_shape(shapes: list) -> tuple:
    """The broadcast shape of ``shapes``; PyTorch's message names the first two sizes that differ."""
    out: tuple = ()
    for s in shapes:
        n = max(len(out), len(s))
        a, b = (1,) * (n - len(out)) + tuple(out), (1,) * (n - len(s)) + tuple(s)
        dims = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                                   f"non-singleton dimension {i}")
            dims.append(y if x == 1 else x)
        out = tuple(dims)
    return out


@op("broadcast_tensors(Tensor[] tensors) -> Tensor[]", kind=VIEW, method=False, composite=True)
def broadcast_tensors(tensors):
    """The tensors expanded to their common broadcast shape, as views (``expand``), so the gradient of each is
    the incoming one summed back to its own shape."""
    shape = _common_shape([tuple(t.shape) for t in tensors])
    return tuple(api.expand(t, shape) for t in tensors)


@broadcast_tensors.meta_rule
def _(tensors):
    shape = _common_shape([tuple(t.shape) for t in tensors])
    return [_meta(t, shape) for t in tensors]


@broadcast_tensors.grad
def _(grad, tensors_shape):
    return [g.sum_to_size(s) for g, s in zip(grad if isinstance(grad, (tuple, list)) else [grad], tensors_shape)]


@broadcast_tensors.sample_inputs
def _(rng):  # the tensors as separate arguments, as torch.broadcast_tensors(*tensors) takes them
    yield (rng.standard_normal((3, 1)), rng.standard_normal(4)), {}
    yield (rng.standard_normal((2, 1, 4)), rng.standard_normal((3, 1)), rng.standard_normal(())), {}
    yield (rng.standard_normal((2, 3)),), {}
    yield (rng.standard_normal((0, 1)), rng.standard_normal(3)), {}


@op("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", kind=VIEW, name_rule=_names.keep_right,
    function=False, nondiff_args=("other",),
    grad_fn="ExpandBackward0")
def expand_as(self, other):
    """``self.expand(other.size())``."""
    return np.broadcast_to(self, expand_shape(self.shape, other.shape))


@expand_as.meta_rule
def _(self, other):
    return _meta(self, expand_shape(tuple(self.shape), tuple(other.shape)))


@expand_as.grad
def _(grad, self_shape):
    return grad.sum_to_size(self_shape), None


@expand_as.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 1)), rng.standard_normal((2, 3, 4))), {}
    yield (rng.standard_normal(()), rng.standard_normal((2,))), {}
    yield (rng.standard_normal(1), rng.standard_normal((0,))), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def onnx_ints(g, values):
    """An int64 1-D ONNX value of ``values``: a list of ints (some may be values computed at run time) or a
    value already."""
    if g.is_value(values):
        return values
    if not any(g.is_value(v) for v in values):
        return g.constant(list(values), _dt.int64)
    parts = [g.op("Reshape", g.op("Cast", v, to=_dt.int64), g.constant([1])) if g.is_value(v)
             else g.constant([v], _dt.int64) for v in values]
    return g.op("Concat", *parts, axis=0)


def _onnx_reshape(g, self, size):
    return g.op("Reshape", self, onnx_ints(g, size))


view.symbolic(_onnx_reshape)
reshape.symbolic(_onnx_reshape)


@flatten.symbolic
def _(g, self, start_dim=0, end_dim=-1):
    rank = g.rank(self)
    if rank is None:
        raise g.unsupported("flatten of a tensor of unknown rank")
    if rank == 0:
        return g.op("Reshape", self, g.constant([1]))
    start, end = start_dim % rank, end_dim % rank
    if end == rank - 1:  # 0 in an ONNX shape keeps the input's dim, dynamic or not
        return g.op("Reshape", self, g.constant([0] * start + [-1]))
    head, tail = _onnx_dims_around(g, self, start, end, rank)
    return g.op("Reshape", self, g.op("Concat", head, g.constant([-1]), tail, axis=0))


def _onnx_dims_around(g, self, start: int, end: int, rank: int) -> tuple:
    """The sizes of ``self``'s dims before ``start`` and after ``end``, read at run time (they may be dynamic)."""
    shape = g.op("Shape", self)
    return (g.op("Slice", shape, g.constant([0]), g.constant([start])),
            g.op("Slice", shape, g.constant([end + 1]), g.constant([rank])))


@unsqueeze.symbolic
def _(g, self, dim):
    return g.op("Unsqueeze", self, onnx_ints(g, [dim]))


@squeeze.symbolic
def _(g, self, dim=None):
    if dim is None:
        return g.op("Squeeze", self)
    dims = [dim] if isinstance(dim, int) else list(dim)
    shape = g.shape(self)
    if shape == ():
        return self
    if shape is not None:  # PyTorch skips dims that are not 1; ONNX refuses them
        dims = [d for d in dims if shape[d] == 1 or shape[d] is None]
        if not dims:
            return self
    return g.op("Squeeze", self, onnx_ints(g, dims))


@expand.symbolic
def _(g, self, size, implicit=False):
    if not g.is_value(size):  # -1 keeps the dim: 1 does the same under ONNX's two-way broadcasting
        size = [1 if (not g.is_value(s) and s == -1) else s for s in size]
    return g.op("Expand", self, onnx_ints(g, size))


@expand_as.symbolic
def _(g, self, other):
    return g.op("Expand", self, g.op("Shape", other))


@unflatten.symbolic
def _(g, self, dim, sizes):
    rank = g.rank(self)
    if rank is None:
        raise g.unsupported("unflatten of a tensor of unknown rank")
    head, tail = _onnx_dims_around(g, self, dim % rank, dim % rank, rank)
    return g.op("Reshape", self, g.op("Concat", head, onnx_ints(g, sizes), tail, axis=0))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("squeeze", "flatten", "unflatten"))
