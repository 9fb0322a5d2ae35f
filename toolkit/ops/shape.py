"""Shape ops that copy data into a new buffer: cat, stack, hstack/vstack/dstack, repeat, tile, repeat_interleave.

Joining ops promote their inputs' dtypes as PyTorch does (``cat`` of an int
and a float tensor is float). Reordering ops (flip, roll, tril/triu, diag)
are in ``shape_order``.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .registry import SHAPE, op, takes_dim_names


def promoted_dtype(dtypes) -> _dt.dtype:
    """The dtype that cat and stack give inputs of ``dtypes`` (a non-empty sequence): all of them promoted."""
    r = dtypes[0]
    for d in dtypes[1:]:
        r = _dt.promote_types(r, d)
    return r


def _np_dtypes(arrays) -> list:
    return [_dt.from_numpy_dtype(a.dtype) for a in arrays]


# ---------------------------------------------------------------------------------------------
# cat and its aliases
# ---------------------------------------------------------------------------------------------
def cat_shape(shapes, dim: int, name: str = "cat") -> tuple:
    """(output shape, wrapped dim, indices of the inputs that take part); 1-D empty inputs are skipped."""
    if not shapes:
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    for i, s in enumerate(shapes):
        if len(s) == 0:
            raise RuntimeError(f"{name}: zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [i for i, s in enumerate(shapes) if tuple(s) != (0,)]
    if not kept:
        return (0,), 0, kept
    ref = tuple(shapes[kept[0]])
    d = wrap_dim(dim, len(ref), name)
    total = 0
    for i in kept:
        s = tuple(shapes[i])
        if len(s) != len(ref):
            raise RuntimeError(f"{name}: Tensors must have same number of dimensions: got {len(ref)} and {len(s)}")
        for j, (r, x) in enumerate(zip(ref, s)):
            if j != d and r != x:
                raise RuntimeError(
                    f"{name}: Sizes of tensors must match except in dimension {d}. Expected size {r} but got size "
                    f"{x} for tensor number {i} in the list."
                )
        total += s[d]
    return ref[:d] + (total,) + ref[d + 1 :], d, kept


def _cat(arrays: list, dim: int, name: str) -> np.ndarray:
    _, d, kept = cat_shape([a.shape for a in arrays], dim, name)
    dtype = promoted_dtype(_np_dtypes(arrays)).np
    if not kept:
        return np.empty((0,), dtype)
    return np.concatenate([arrays[i] for i in kept], axis=d, dtype=dtype, casting="unsafe")


def cat_backward(grad, shapes, dim: int, name: str = "cat") -> list:
    """Each input's slice of ``grad``; skipped 1-D empty inputs get empty gradients."""
    _, d, kept = cat_shape(shapes, dim, name)
    kept, out, start = set(kept), [], 0
    for i, s in enumerate(shapes):
        if i in kept:
            out.append(grad.narrow(d, start, s[d]))
            start += s[d]
        else:
            out.append(api.zeros(s, dtype=grad.dtype, device=grad.device))
    return out


def _cat_meta(name):
    def rule(tensors, dim=0):
        shape, _, _ = cat_shape([tuple(t.shape) for t in tensors], dim, name)
        return TensorMeta(shape, promoted_dtype([t.dtype for t in tensors]), tensors[0].device)

    return rule


def _cat_grad(name):
    def rule(grad, tensors_shape, dim):
        return cat_backward(grad, tensors_shape, dim, name)

    return rule


def _cat_samples(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    yield ([a, b], 1), {}
    yield ([a, rng.standard_normal((1, 3)), a], 0), {}
    yield ([a.T, rng.standard_normal((3, 1))], -1), {}
    yield ([np.arange(6).reshape(2, 3), a], 0), {}
    yield ([np.zeros(0), a, rng.standard_normal((0, 3))], 0), {}
    yield ([rng.standard_normal(4)],), {}
    yield ([np.zeros(0), np.zeros(0)],), {}
    yield ([a, a],), {"dim": -2}


@op("cat(Tensor[] tensors, int dim=0) -> Tensor", kind=SHAPE, name_rule=_names.cat, out="cast",
    autocast="promote", method=False)
def cat(tensors, dim=0):
    """Join tensors along an existing dim; dtypes promote, and 1-D empty tensors are skipped.

    >>> toolkit.cat([toolkit.zeros(2, 3), toolkit.ones(2, 1)], dim=1).shape
    toolkit.Size([2, 4])
    """
    return _cat(tensors, dim, "cat")


@op("concat(Tensor[] tensors, int dim=0) -> Tensor", kind=SHAPE, out="cast", method=False,
    grad_fn="CatBackward0")
def concat(tensors, dim=0):
    """Alias of :func:`cat`."""
    return _cat(tensors, dim, "concat")


@op("concatenate(Tensor[] tensors, int dim=0) -> Tensor", kind=SHAPE, out="cast", method=False,
    grad_fn="CatBackward0")
def concatenate(tensors, dim=0):
    """Alias of :func:`cat`, NumPy's name."""
    return _cat(tensors, dim, "concatenate")


for _d in (cat, concat, concatenate):
    _d.meta_rule(_cat_meta(_d.name))
    _d.grad(_cat_grad(_d.name))
    _d.sample_inputs(_cat_samples)


# ---------------------------------------------------------------------------------------------
# stack, hstack, vstack, dstack
# ---------------------------------------------------------------------------------------------
def stack_shape(shapes, dim: int) -> tuple:
    if not shapes:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tuple(shapes[0])
    for i, s in enumerate(shapes[1:], 1):
        if tuple(s) != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and {list(s)} at entry {i}"
            )
    d = wrap_dim(dim, len(ref) + 1, "stack")
    return ref[:d] + (len(shapes),) + ref[d:], d


@op("stack(Tensor[] tensors, int dim=0) -> Tensor", kind=SHAPE, out="cast", autocast="promote", method=False)
def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim ``dim``; dtypes promote."""
    _, d = stack_shape([a.shape for a in tensors], dim)
    return np.stack(tensors, axis=d, dtype=promoted_dtype(_np_dtypes(tensors)).np, casting="unsafe")


@stack.meta_rule
def _(tensors, dim=0):
    shape, _ = stack_shape([tuple(t.shape) for t in tensors], dim)
    return TensorMeta(shape, promoted_dtype([t.dtype for t in tensors]), tensors[0].device)


@stack.grad
def _(grad, dim):
    return grad.unbind(dim)


@stack.sample_inputs
def _(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    yield ([a, b],), {}
    yield ([a, b, a], 2), {}
    yield ([a.T, b.T], -1), {}
    yield ([a, np.arange(6).reshape(2, 3)], 1), {}
    yield ([rng.standard_normal(()), rng.standard_normal(())],), {}
    yield ([np.zeros((0, 2))], 1), {}
    yield ([a],), {"dim": -3}


def _atleast(shape: tuple, k: int) -> tuple:
    """The shape ``atleast_{k}d`` gives: 1-D ``(n,)`` becomes ``(1, n)`` and ``(1, n, 1)``; 2-D gains a last dim."""
    shape = tuple(shape)
    if len(shape) >= k:
        return shape
    if k == 1 or not shape:
        return (1,) * (k - len(shape)) + shape
    if k == 2:
        return (1,) + shape
    return ((1,) + shape + (1,)) if len(shape) == 1 else shape + (1,)


def stack_plan(name: str, shapes) -> tuple:
    """(promoted shapes, cat dim) of hstack (1-D: dim 0, else 1), vstack (dim 0) and dstack (dim 2)."""
    if not shapes:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    k = {"hstack": 1, "vstack": 2, "dstack": 3}[name]
    promoted = [_atleast(s, k) for s in shapes]
    dim = (0 if len(promoted[0]) == 1 else 1) if name == "hstack" else k - 2 if name == "vstack" else 2
    return promoted, dim


def _joined(name):
    def kernel(tensors):
        promoted, dim = stack_plan(name, [a.shape for a in tensors])
        return _cat([np.reshape(a, s) for a, s in zip(tensors, promoted)], dim, name)

    def meta(tensors):
        promoted, dim = stack_plan(name, [tuple(t.shape) for t in tensors])
        shape, _, _ = cat_shape(promoted, dim, name)
        return TensorMeta(shape, promoted_dtype([t.dtype for t in tensors]), tensors[0].device)

    def grad(grad, tensors_shape):
        promoted, dim = stack_plan(name, tensors_shape)
        return [g.reshape(s) for g, s in zip(cat_backward(grad, promoted, dim, name), tensors_shape)]

    def samples(rng):
        a = rng.standard_normal((2, 3))
        yield ([a, a.T.T],), {}
        yield ([a.T, np.arange(6).reshape(3, 2)],), {}
        yield ([rng.standard_normal(()), rng.standard_normal(())],), {}
        yield ([rng.standard_normal(3), rng.standard_normal(3)],), {}
        if name == "hstack":
            yield ([a, rng.standard_normal((2, 1))],), {}
            yield ([rng.standard_normal(3), np.zeros(0), rng.standard_normal(2)],), {}
        elif name == "vstack":
            yield ([a, rng.standard_normal((1, 3)), rng.standard_normal(3)],), {}
        else:
            yield ([rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3, 1)), a],), {}

    return kernel, meta, grad, samples


_STACK_DOCS = {
    "hstack": "Join along dim 1 (dim 0 for 1-D tensors), after making every input at least 1-D.",
    "vstack": "Join along dim 0 after making every input at least 2-D (a 1-D ``(n,)`` becomes ``(1, n)``).",
    "dstack": "Join along dim 2 after making every input at least 3-D.",
}


def _define_joined(name):
    kernel, meta, grad, samples = _joined(name)
    kernel.__doc__ = _STACK_DOCS[name]
    d = op(f"{name}(Tensor[] tensors) -> Tensor", kind=SHAPE, out="cast", method=False,
           grad_fn="CatBackward0")(kernel)
    d.meta_rule(meta)
    d.grad(grad)
    d.sample_inputs(samples)
    return d


hstack = _define_joined("hstack")
vstack = _define_joined("vstack")
dstack = _define_joined("dstack")


# ---------------------------------------------------------------------------------------------
# repeat, tile
# ---------------------------------------------------------------------------------------------
def repeat_shape(shape: tuple, repeats, name: str = "repeat") -> tuple:
    """(input shape padded with leading 1s, output shape) of ``repeat``."""
    repeats = tuple(repeats)
    if len(repeats) < len(shape):
        raise RuntimeError(
            f"{name}: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    out = tuple(p * r for p, r in zip(padded, repeats))
    for s in out:
        if s < 0:
            raise RuntimeError(f"{name}: Trying to create tensor with negative dimension {s}: {list(out)}")
    return padded, out


def tile_reps(ndim: int, dims) -> tuple:
    """``tile``'s ``dims`` as ``repeat``'s repeats: padded with leading 1s to the input's ``ndim``."""
    return (1,) * (ndim - len(dims)) + tuple(dims)


def repeat_backward(grad, self_shape: tuple, repeats):
    """Sum the gradient over every copy: view it as (copies, size) per dim and reduce the copies."""
    padded, _ = repeat_shape(self_shape, repeats)
    if all(r == 1 for r in repeats):
        return grad.reshape(self_shape)
    split = []
    for p, r in zip(padded, repeats):
        split += [r, p]
    return grad.reshape(split).sum(tuple(range(0, 2 * len(padded), 2))).reshape(self_shape)


@op("repeat(Tensor self, int[] repeats) -> Tensor", kind=SHAPE, function=False)
def repeat(self, repeats):
    """Tile the whole tensor ``repeats[i]`` times along dim i (new leading dims when ``repeats`` is longer)."""
    padded, _ = repeat_shape(self.shape, repeats)
    return np.tile(np.reshape(self, padded), tuple(repeats))


@repeat.meta_rule
def _(self, repeats):
    return TensorMeta(repeat_shape(tuple(self.shape), repeats)[1], self.dtype, self.device)


@repeat.grad
def _(grad, self_shape, repeats):
    return repeat_backward(grad, self_shape, repeats)


@repeat.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3))
    yield (x, (2, 1)), {}
    yield (x, (2, 1, 3)), {}
    yield (x.T, [1, 2]), {}
    yield (x, (0, 2)), {}
    yield (x,), {"repeats": (1, 1)}
    yield (rng.standard_normal(()), (3,)), {}
    yield (rng.standard_normal(()), ()), {}
    yield (rng.standard_normal((0, 2)), (2, 2)), {}


@op("tile(Tensor self, int[] dims) -> Tensor", kind=SHAPE, grad_fn="RepeatBackward0", out=False)
def tile(self, dims):
    """Like ``repeat``, but ``dims`` shorter than the tensor's rank is padded with leading 1s."""
    reps = tile_reps(self.ndim, dims)
    padded, _ = repeat_shape(self.shape, reps, "tile")
    return np.tile(np.reshape(self, padded), reps)


@tile.meta_rule
def _(self, dims):
    return TensorMeta(repeat_shape(tuple(self.shape), tile_reps(len(self.shape), dims), "tile")[1],
                      self.dtype, self.device)


@tile.grad
def _(grad, self_shape, dims):
    return repeat_backward(grad, self_shape, tile_reps(len(self_shape), dims))


@tile.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3))
    yield (x, (2,)), {}
    yield (x, (2, 1, 2)), {}
    yield (x.T, [2, 2]), {}
    yield (x, ()), {}
    yield (x,), {"dims": (0,)}
    yield (rng.standard_normal(()), (2, 2)), {}


# ---------------------------------------------------------------------------------------------
# repeat_interleave
# ---------------------------------------------------------------------------------------------
def interleave_dim(shape: tuple, dim):
    """(dim, size along it) that repeat_interleave works on; ``dim=None`` means the flattened input."""
    if dim is None:
        return None, math.prod(shape)
    if not shape:
        raise IndexError("repeat_interleave: Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    d = wrap_dim(dim, len(shape), "repeat_interleave")
    return d, shape[d]


def _interleave_shape(shape: tuple, d, total: int) -> tuple:
    return (total,) if d is None else tuple(shape[:d]) + (total,) + tuple(shape[d + 1 :])


def _check_output_size(output_size, total: int, message: str) -> None:
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: {message}")


@op("repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor",
    kind=SHAPE, grad_fn="ViewBackward0", out=False)
def repeat_interleave(self, repeats, dim=None, output_size=None):
    """Repeat each element ``repeats`` times along ``dim`` (of the flattened input when ``dim`` is None).

    ``repeats`` may also be a 1-D integer tensor: one count per element along ``dim``.
    """
    if repeats < 0:
        raise RuntimeError("repeat_interleave: Repeats must be non-negative")
    d, n = interleave_dim(self.shape, dim)
    _check_output_size(output_size, n * repeats, f"Invalid output_size, expected {n * repeats} but got {output_size}")
    return np.repeat(self.reshape(-1) if d is None else self, repeats, axis=0 if d is None else d)


@repeat_interleave.meta_rule
def _(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("repeat_interleave: Repeats must be non-negative")
    d, n = interleave_dim(tuple(self.shape), dim)
    _check_output_size(output_size, n * repeats, f"Invalid output_size, expected {n * repeats} but got {output_size}")
    return TensorMeta(_interleave_shape(tuple(self.shape), d, n * repeats), self.dtype, self.device)


@repeat_interleave.grad
def _(grad, self_shape, repeats, dim):
    d, n = interleave_dim(self_shape, dim)
    if d is None:
        return grad.reshape(n, repeats).sum(1).reshape(self_shape)
    return grad.reshape(tuple(self_shape[:d]) + (n, repeats) + tuple(self_shape[d + 1 :])).sum(d + 1)


@repeat_interleave.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3))
    yield (x, 2), {}
    yield (x, 2, 1), {}
    yield (x.T, 3, -1), {}
    yield (x, 0, 0), {}
    yield (x, 2), {"dim": 0, "output_size": 4}
    yield (rng.standard_normal(()), 3), {}
    yield (rng.standard_normal((0, 2)), 2, 0), {}


def _counts(repeats, n: int) -> np.ndarray:
    """The per-element counts of a repeats tensor, checked and broadcast to ``n`` as PyTorch does."""
    if repeats.dtype.kind not in "iu":
        raise NotImplementedError(
            f"repeat_interleave: \"repeat_interleave_cpu\" not implemented for '{repeats.dtype}'"
        )
    if repeats.ndim > 1:
        raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    r = repeats.reshape(-1)
    if r.size == 1:
        r = np.broadcast_to(r, (n,))
    elif r.size != n:
        raise RuntimeError(
            "repeat_interleave: repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {r.size} and input.size = {n}"
        )
    if (r < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    return r


@op("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor",
    kind=SHAPE, grad_fn="IndexSelectBackward0", out=False, nondiff_args=("repeats",))
def repeat_interleave_tensor(self, repeats, dim=None, output_size=None):
    """Repeat element i along ``dim`` ``repeats[i]`` times."""
    d, n = interleave_dim(self.shape, dim)
    r = _counts(repeats, n)
    _check_output_size(output_size, int(r.sum()), "allocated size does not match required size")
    return np.repeat(self.reshape(-1) if d is None else self, r, axis=0 if d is None else d)


@repeat_interleave_tensor.meta_rule
def _(self, repeats, dim=None, output_size=None):
    # The output's length is data-dependent: output_size states it, or an eager tensor's values give it.
    d, n = interleave_dim(tuple(self.shape), dim)
    if output_size is None:
        if not hasattr(repeats, "__array__"):
            raise RuntimeError("repeat_interleave: the output size depends on the values of repeats; pass output_size")
        output_size = int(_counts(np.asarray(repeats), n).sum())
    return TensorMeta(_interleave_shape(tuple(self.shape), d, output_size), self.dtype, self.device)


@repeat_interleave_tensor.grad
def _(grad, self_shape, repeats, dim):
    d, n = interleave_dim(self_shape, dim)
    if n == 0:
        return api.zeros(self_shape, dtype=grad.dtype, device=grad.device), None
    counts = repeats.reshape(-1).tolist()
    counts = counts * n if len(counts) == 1 else counts
    axis = 0 if d is None else d
    parts = [p.sum(axis, keepdim=True) for p in grad.split(counts, axis)]
    return api.cat(parts, axis).reshape(self_shape), None


@repeat_interleave_tensor.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 2))
    yield (x, np.array([1, 0, 2]), 0), {}
    yield (x, np.array([2, 1]), -1), {}
    yield (x.T, np.array([1, 2, 3]), 1), {}
    yield (x, np.array([2])), {}
    yield (x, np.array(3), 1), {}
    yield (x, np.array([1, 1, 2]), 0), {"output_size": 4}
    yield (rng.standard_normal((0, 2)), np.zeros(0, dtype=np.int64), 0), {}


@op("repeat_interleave.Tensor(Tensor repeats, *, int? output_size=None) -> Tensor", kind=SHAPE, out=False, method=False,
    differentiable=False)
def repeat_interleave_counts(repeats, output_size=None):
    """``i`` repeated ``repeats[i]`` times: the indices that ``repeat_interleave(x, repeats, 0)`` gathers."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave: repeat_interleave only accept 1D vector as repeat")
    r = _counts(repeats, repeats.size)
    _check_output_size(output_size, int(r.sum()), "allocated size does not match required size")
    return np.repeat(np.arange(r.size, dtype=repeats.dtype), r)


@repeat_interleave_counts.meta_rule
def _(repeats, output_size=None):
    if len(repeats.shape) != 1:
        raise RuntimeError("repeat_interleave: repeat_interleave only accept 1D vector as repeat")
    if output_size is None:
        if not hasattr(repeats, "__array__"):
            raise RuntimeError("repeat_interleave: the output size depends on the values of repeats; pass output_size")
        output_size = int(np.asarray(repeats).sum())
    return TensorMeta((output_size,), repeats.dtype, repeats.device)


@repeat_interleave_counts.sample_inputs
def _(rng):
    yield (np.array([1, 0, 3]),), {}
    yield (np.array([2, 2]),), {"output_size": 4}
    yield (np.zeros(0, dtype=np.int64),), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
@cat.symbolic
def _(g, tensors, dim=0):
    from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them

    tensors = [t for t in tensors if g.shape(t) != (0,)]  # PyTorch skips 1-D empty tensors in cat
    return g.op("Concat", *onnx_promote(g, *tensors), axis=dim)


@stack.symbolic
def _(g, tensors, dim=0):
    from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them

    axes = g.constant([dim], _dt.int64)
    return g.op("Concat", *[g.op("Unsqueeze", t, axes) for t in onnx_promote(g, *tensors)], axis=dim)


def _onnx_tile(g, self, repeats):
    """``repeat``: ``self`` given leading dims of 1 up to ``len(repeats)``, then tiled ``repeats`` times."""
    from .view import onnx_ints  # defined beside the view ops, imported after them

    rank = g.rank(self)
    count = g.shape(repeats)[0] if g.is_value(repeats) and g.shape(repeats) else None
    count = len(repeats) if not g.is_value(repeats) else count
    if rank is None or count is None:
        raise g.unsupported("repeat of a tensor of unknown rank or by a list of unknown length")
    if count > rank:
        self = g.op("Unsqueeze", self, g.constant(list(range(count - rank))))
    return g.op("Tile", self, onnx_ints(g, repeats))


repeat.symbolic(_onnx_tile)


@tile.symbolic
def _(g, self, dims):
    rank = g.rank(self)
    if rank is None or g.is_value(dims):
        raise g.unsupported("tile of a tensor of unknown rank or by a list computed at run time")
    return _onnx_tile(g, self, tile_reps(rank, dims))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("cat",))
