"""Shape ops that reorder or mask elements into a new buffer: flip, roll, tril/triu, diag, diag_embed."""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .grad_fn_rules import by_input_dim
from .registry import SHAPE, op
from .view_parts import diag_view, diagonal_geometry


def _same(t) -> TensorMeta:
    return TensorMeta(tuple(t.shape), t.dtype, t.device)


# ---------------------------------------------------------------------------------------------
# flip, fliplr, flipud
# ---------------------------------------------------------------------------------------------
def flip_dims(ndim: int, dims, name: str = "flip") -> tuple:
    wrapped = [wrap_dim(d, ndim, name) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"{name}: dim {d} appears multiple times in the list of dims")
    return tuple(wrapped)


@op("flip(Tensor self, int[] dims) -> Tensor", kind=SHAPE, out=False)
def flip(self, dims):
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch)."""
    axes = flip_dims(self.ndim, dims)
    return np.flip(self, axes).copy() if self.ndim and axes else self.copy()


@flip.meta_rule
def _(self, dims):
    flip_dims(len(self.shape), dims)
    return _same(self)


@flip.grad
def _(grad, dims):
    return grad.flip(dims)


@flip.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3, 4))
    yield (x, (0,)), {}
    yield (x, (0, 2)), {}
    yield (x.transpose(2, 1, 0), [-1, 1]), {}
    yield (x, ()), {}
    yield (x,), {"dims": (1,)}
    yield (rng.standard_normal(()), (0,)), {}
    yield (rng.standard_normal((0, 2)), (0, 1)), {}


def _min_dims(name: str, ndim: int, k: int) -> None:
    if ndim < k:
        raise RuntimeError(f"{name}: Input must be >= {k}-d.")


@op("fliplr(Tensor self) -> Tensor", kind=SHAPE, grad_fn="FlipBackward0", out=False)
def fliplr(self):
    """Reverse dim 1 (left/right in a matrix)."""
    _min_dims("fliplr", self.ndim, 2)
    return np.flip(self, 1).copy()


@op("flipud(Tensor self) -> Tensor", kind=SHAPE, grad_fn="FlipBackward0", out=False)
def flipud(self):
    """Reverse dim 0 (up/down in a matrix)."""
    _min_dims("flipud", self.ndim, 1)
    return np.flip(self, 0).copy()


@fliplr.meta_rule
def _(self):
    _min_dims("fliplr", len(self.shape), 2)
    return _same(self)


@flipud.meta_rule
def _(self):
    _min_dims("flipud", len(self.shape), 1)
    return _same(self)


@fliplr.grad
def _(grad):
    return grad.fliplr()


@flipud.grad
def _(grad):
    return grad.flipud()


def _flip2_samples(rng):
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x.T,), {}
    yield (rng.standard_normal((2, 3, 2)),), {}
    yield (rng.standard_normal((0, 2)),), {}


fliplr.sample_inputs(_flip2_samples)


@flipud.sample_inputs
def _(rng):
    yield from _flip2_samples(rng)
    yield (rng.standard_normal(4),), {}


# ---------------------------------------------------------------------------------------------
# roll
# ---------------------------------------------------------------------------------------------
def roll_dims(ndim: int, shifts, dims) -> tuple:
    """Wrapped dims of ``roll``; an empty ``dims`` means the flattened tensor (and one shift)."""
    if not shifts:
        raise RuntimeError("roll: `shifts` required")
    if len(shifts) != len(dims) and (dims or len(shifts) != 1):
        raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if ndim == 0 and dims:
        raise IndexError(f"roll: Dimension specified as {dims[0]} but tensor has no dimensions")
    return tuple(wrap_dim(d, ndim, "roll") for d in dims)


@op("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", kind=SHAPE, out=False)
def roll(self, shifts, dims=()):
    """Rotate elements along ``dims`` by ``shifts`` (of the flattened tensor when ``dims`` is empty)."""
    axes = roll_dims(self.ndim, shifts, dims)
    if not axes:
        return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    return np.roll(self, shifts, axes)


@roll.meta_rule
def _(self, shifts, dims=()):
    roll_dims(len(self.shape), shifts, dims)
    return _same(self)


@roll.grad
def _(grad, shifts, dims):
    return grad.roll(tuple(-s for s in shifts), dims)


@roll.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, 1), {}
    yield (x, 2, 1), {}
    yield (x, (1, -2), (0, 1)), {}
    yield (x.T, -5, -1), {}
    yield (x, (1, 1), (0, 0)), {}
    yield (x,), {"shifts": 3, "dims": 0}
    yield (rng.standard_normal(()), 2), {}
    yield (rng.standard_normal((0, 3)), 1, 1), {}


# ---------------------------------------------------------------------------------------------
# tril, triu
# ---------------------------------------------------------------------------------------------
def _check_matrix(name: str, ndim: int) -> None:
    if ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


@op("tril(Tensor self, int diagonal=0) -> Tensor", kind=SHAPE, inplace=True)
def tril(self, diagonal=0):
    """Zero the elements above diagonal ``diagonal`` of the last two dims (the lower triangle stays)."""
    _check_matrix("tril", self.ndim)
    return np.tril(self, diagonal)


@op("triu(Tensor self, int diagonal=0) -> Tensor", kind=SHAPE, inplace=True)
def triu(self, diagonal=0):
    """Zero the elements below diagonal ``diagonal`` of the last two dims (the upper triangle stays)."""
    _check_matrix("triu", self.ndim)
    return np.triu(self, diagonal)


@tril.meta_rule
def _(self, diagonal=0):
    _check_matrix("tril", len(self.shape))
    return _same(self)


@triu.meta_rule
def _(self, diagonal=0):
    _check_matrix("triu", len(self.shape))
    return _same(self)


@tril.grad
def _(grad, diagonal):
    return grad.tril(diagonal)


@triu.grad
def _(grad, diagonal):
    return grad.triu(diagonal)


def _tri_samples(rng):
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x, 1), {}
    yield (x.T, -1), {}
    yield (x, 10), {}
    yield (rng.standard_normal((2, 3, 3)),), {"diagonal": -2}
    yield (np.arange(12).reshape(3, 4), 0), {}
    yield (rng.standard_normal((0, 3)),), {}


tril.sample_inputs(_tri_samples)
triu.sample_inputs(_tri_samples)


# ---------------------------------------------------------------------------------------------
# diag, diag_embed
# ---------------------------------------------------------------------------------------------
def diag_shape(shape: tuple, diagonal: int) -> tuple:
    if len(shape) == 1:
        m = shape[0] + abs(diagonal)
        return (m, m)
    if len(shape) == 2:
        return diagonal_geometry(shape, diagonal, 0, 1, "diag")[3]
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {len(shape)}D")


@op("diag(Tensor self, int diagonal=0) -> Tensor", kind=SHAPE,
    grad_fn=by_input_dim({1: "DiagEmbedBackward0"}, "DiagonalBackward0_copy"))
def diag(self, diagonal=0):
    """A 1-D tensor becomes a square matrix with it on diagonal ``diagonal``; a matrix gives that diagonal."""
    shape = diag_shape(self.shape, diagonal)
    if self.ndim == 2:
        return diag_view(self, diagonal, 0, 1).copy()
    out = np.zeros(shape, self.dtype)
    diag_view(out, diagonal, 0, 1)[...] = self
    return out


@diag.meta_rule
def _(self, diagonal=0):
    return TensorMeta(diag_shape(tuple(self.shape), diagonal), self.dtype, self.device)


@diag.grad
def _(grad, self_shape, diagonal):
    if len(self_shape) == 1:
        return grad.diagonal(diagonal)
    return api.diagonal_backward(grad, self_shape, diagonal, 0, 1)


@diag.sample_inputs
def _(rng):
    v = rng.standard_normal(3)
    yield (v,), {}
    yield (v, 1), {}
    yield (v, -2), {}
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x.T, 1), {}
    yield (x,), {"diagonal": -1}
    yield (x, 6), {}
    yield (np.arange(3), 0), {}
    yield (rng.standard_normal(0),), {}


def diag_embed_geometry(shape: tuple, offset: int, dim1: int, dim2: int) -> tuple:
    """(dim1, dim2, output shape): ``shape``'s last dim becomes a diagonal over two new dims."""
    n = len(shape) + 1
    d1, d2 = wrap_dim(dim1, n, "diag_embed"), wrap_dim(dim2, n, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = shape[-1] + abs(offset)
    out = list(shape[:-1])
    lo, hi = sorted((d1, d2))
    out.insert(lo, m)
    out.insert(hi, m)
    return d1, d2, tuple(out)


@op("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", kind=SHAPE, out=False)
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Put the last dim on the diagonal of two new dims ``dim1`` and ``dim2`` (batched ``diag``)."""
    d1, d2, shape = diag_embed_geometry(self.shape, offset, dim1, dim2)
    out = np.zeros(shape, self.dtype)
    diag_view(out, offset, d1, d2)[...] = self
    return out


@diag_embed.meta_rule
def _(self, offset=0, dim1=-2, dim2=-1):
    return TensorMeta(diag_embed_geometry(tuple(self.shape), offset, dim1, dim2)[2], self.dtype, self.device)


@diag_embed.grad
def _(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


@diag_embed.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3))
    yield (x,), {}
    yield (x, 1), {}
    yield (x, -1, 0, 2), {}
    yield (x.T, 0, 2, 0), {}
    yield (x,), {"offset": 2, "dim1": 1, "dim2": -1}
    yield (rng.standard_normal(3),), {}
    yield (rng.standard_normal((0, 2)),), {}


# ---------------------------------------------------------------------------------------------
# rot90, diagflat
# ---------------------------------------------------------------------------------------------
def rot90_dims(ndim: int, dims) -> tuple:
    """The two wrapped dims of ``rot90``'s plane, after PyTorch's checks."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim, "rot90"), wrap_dim(dims[1], ndim, "rot90")
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return d0, d1


@op("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", kind=SHAPE, out=False, composite=True)
def rot90(self, k=1, dims=(0, 1)):
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from the first dim towards the second (a copy).

    As PyTorch composes it: ``flip`` then ``transpose`` (a quarter turn), ``flip`` of both dims (a half turn).
    """
    d0, d1 = rot90_dims(self.ndim, dims)
    k %= 4
    if k == 1:
        return self.flip([d1]).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose(d0, d1)
    return self.clone()


@rot90.meta_rule
def _(self, k=1, dims=(0, 1)):
    d0, d1 = rot90_dims(len(self.shape), dims)
    shape = list(self.shape)
    if k % 2:
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return TensorMeta(tuple(shape), self.dtype, self.device)


@rot90.grad
def _(grad, k, dims):
    return grad.rot90(-k, dims)


@rot90.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3))
    yield (x,), {}
    yield (x, 2), {}
    yield (x, -1, [1, 0]), {}
    yield (x.T, 3), {}
    y = rng.standard_normal((2, 3, 4))
    yield (y, 5, (0, -1)), {}
    yield (y,), {"k": 1, "dims": [2, 1]}
    yield (x, 0), {}


def diagflat_size(shape: tuple, offset: int) -> int:
    n = 1
    for s in shape:
        n *= s
    return n + abs(offset)


@op("diagflat(Tensor self, int offset=0) -> Tensor", kind=SHAPE, out=False, composite=True)
def diagflat(self, offset=0):
    """A square matrix with the flattened input on diagonal ``offset`` (above the main one when positive):
    ``diag`` of the flattened input, as PyTorch composes it."""
    return api.diag(self.reshape(-1), offset)


@diagflat.meta_rule
def _(self, offset=0):
    m = diagflat_size(tuple(self.shape), offset)
    return TensorMeta((m, m), self.dtype, self.device)


@diagflat.grad
def _(grad, self_shape, offset):
    return grad.diagonal(offset).reshape(self_shape)


@diagflat.sample_inputs
def _(rng):
    yield (rng.standard_normal(3),), {}
    yield (rng.standard_normal((2, 3)), 1), {}
    yield (rng.standard_normal((3, 2)).T, -2), {}
    yield (rng.standard_normal(()),), {"offset": -1}
    yield (np.arange(4), 0), {}
    yield (rng.standard_normal(0),), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


@flip.symbolic
def _(g, self, dims):
    rank = g.rank(self)
    if rank is None:
        raise g.unsupported("flip of a tensor of unknown rank")
    axes = list(flip_dims(rank, dims)) if rank else []
    if not axes:
        return g.op("Identity", self)
    # ONNX has no flip: a Slice with step -1 from the last element to before the first
    n = len(axes)
    return g.op("Slice", self, g.constant([-1] * n), g.constant([_INT64_MIN] * n), g.constant(axes),
                g.constant([-1] * n))


@roll.symbolic
def _(g, self, shifts, dims=()):
    rank = g.rank(self)
    if rank is None:
        raise g.unsupported("roll of a tensor of unknown rank")
    axes = roll_dims(rank, shifts, dims)
    if not axes:  # rolls the flattened tensor
        flat = g.op("Reshape", self, g.constant([-1]))
        return g.op("Reshape", _onnx_roll(g, flat, shifts[0], 0), g.op("Shape", self))
    for shift, axis in zip(shifts, axes):
        self = _onnx_roll(g, self, shift, axis)
    return self


def _onnx_roll(g, x, shift, axis: int):
    """``x`` rotated by ``shift`` along ``axis``: its last ``shift % n`` elements, then the others."""
    n = (g.shape(x) or [None] * (axis + 1))[axis]
    # a shift of 0 slices the whole dim, then nothing
    if n is not None and not g.is_value(shift):
        k = g.constant([-(shift % n)])
    else:  # the dim's size read at run time (dynamic)
        size = g.op("Gather", g.op("Shape", x), g.constant([axis]), axis=0)
        k = g.op("Neg", g.op("Mod", g.as_value(shift), size, fmod=0))
    axes = g.constant([axis])
    tail = g.op("Slice", x, k, g.constant([_INT64_MAX]), axes)
    head = g.op("Slice", x, g.constant([0]), k, axes)
    return g.op("Concat", tail, head, axis=axis)
