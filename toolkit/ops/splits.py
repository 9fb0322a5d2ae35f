"""Splitting at positions or into near-equal parts: tensor_split, hsplit/vsplit/dsplit, and the unsafe splits.

``tensor_split`` (NumPy's ``array_split``) cuts into ``sections`` parts whose
sizes differ by at most one, or at a list of indices. As in PyTorch it is a
composition of ``slice``: each part is a view of its own, which may be
changed in place (unlike the parts of ``split``, one multi-output view). ``hsplit``,
``vsplit`` and ``dsplit`` are it along dim 1 (0 for 1-D), 0 and 2, and require
the sections to divide the dim. ``unsafe_split``/``unsafe_chunk`` return the
parts of ``split``/``chunk`` sharing memory but not tracked as views by
autograd (PyTorch's promise that the caller will not modify them in place).
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .grad_fn_rules import chunk_node
from .registry import SHAPE, VIEW, get, op
from .view_parts import _cut, _grads_list, chunk_sizes, pad_along, split_sizes, split_with_sizes_check


def _metas(t, shapes) -> list:
    return [TensorMeta(s, t.dtype, t.device) for s in shapes]


def _bounds_shapes(shape: tuple, d: int, bounds: list) -> list:
    return [tuple(shape[:d]) + (e - s,) + tuple(shape[d + 1:]) for s, e in bounds]


def _split_dim(shape: tuple, dim: int) -> int:
    if not shape:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    return wrap_dim(dim, len(shape), "tensor_split")


def section_bounds(shape: tuple, sections: int, dim: int) -> tuple:
    """(dim, [(start, end)]) of ``sections`` parts whose sizes differ by at most one, the larger ones first."""
    d = _split_dim(shape, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size, extra = divmod(shape[d], sections)
    bounds, start = [], 0
    for i in range(sections):
        end = start + size + (1 if i < extra else 0)
        bounds.append((start, end))
        start = end
    return d, bounds


def index_bounds(shape: tuple, indices, dim: int) -> tuple:
    """(dim, [(start, end)]) of the parts between ``indices``: Python slice bounds, clamped to the dim."""
    d = _split_dim(shape, dim)
    n = shape[d]
    cuts = [None, *[int(i) for i in indices], None]
    bounds = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        start, end, _ = slice(lo, hi).indices(n)
        bounds.append((start, max(start, end)))
    return d, bounds


def _take(t, d: int, bounds: list) -> tuple:
    """The parts as slices of ``t``: each its own single view, so each may be changed in place (as in PyTorch,
    whose ``tensor_split`` is made of slices, unlike ``split``)."""
    return tuple(api.slice(t, d, s, e) for s, e in bounds)


def _tensor_bounds(shape: tuple, spec, dim: int) -> tuple:
    """Bounds for a tensor ``tensor_indices_or_sections``: a 0-d long tensor is sections, a 1-d one indices."""
    dtype = _dt.from_numpy_dtype(spec.dtype) if isinstance(spec, np.ndarray) else spec.dtype
    if dtype is not _dt.int64:
        raise RuntimeError(
            f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got {_dt.title(dtype)}")
    if len(spec.shape) > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {len(spec.shape)} dims")
    if not hasattr(spec, "__array__"):
        raise RuntimeError("tensor_split: the parts depend on the values of tensor_indices_or_sections")
    values = np.asarray(spec)
    if values.ndim == 0:
        return section_bounds(shape, int(values), dim)
    return index_bounds(shape, values.tolist(), dim)


def _cat_grads(grad, dim):
    return api.cat(_grads_list(grad), dim)


def bounds_grad(grad, self_shape: tuple, d: int, bounds: list):
    """The gradient of the parts ``bounds`` of dim ``d``: their gradients joined by ``cat`` when the parts tile
    the dim in order, else each padded with zeros to the input's shape and summed (parts may overlap)."""
    grads = _grads_list(grad)
    n = self_shape[d]
    tiled = bounds[0][0] == 0 and bounds[-1][1] == n and all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    if tiled:
        return api.cat(grads, d)
    total = None
    for g, (start, end) in zip(grads, bounds):
        part = pad_along(g, self_shape, d, start, n - end)
        total = part if total is None else total + part
    return total


@op("tensor_split.sections(Tensor(a) self, int sections, int dim=0) -> Tensor[]", kind=VIEW,
    name_rule=_names.KEEP, composite=True)
def tensor_split_sections(self, sections, dim=0):
    """Cut into ``sections`` views along ``dim`` whose sizes differ by at most one (NumPy's ``array_split``).

    With a list of indices the cuts are at those positions: ``x.tensor_split([1, 4])`` gives
    ``x[:1], x[1:4], x[4:]``; a long tensor is read as sections (0-d) or indices (1-d).
    """
    d, bounds = section_bounds(self.shape, sections, dim)
    return _take(self, d, bounds)


@op("tensor_split.indices(Tensor(a) self, int[] indices, int dim=0) -> Tensor[]", kind=VIEW,
    name_rule=_names.KEEP, composite=True)
def tensor_split_indices(self, indices, dim=0):
    """Cut along ``dim`` at ``indices`` (views): ``x[:i0], x[i0:i1], ..., x[ik:]``."""
    d, bounds = index_bounds(self.shape, indices, dim)
    return _take(self, d, bounds)


@op("tensor_split.tensor_indices_or_sections(Tensor(a) self, Tensor tensor_indices_or_sections, int dim=0) "
    "-> Tensor[]", kind=VIEW, name_rule=_names.KEEP, composite=True,
    nondiff_args=("tensor_indices_or_sections",))
def tensor_split_tensor(self, tensor_indices_or_sections, dim=0):
    """``tensor_split`` with the sections (a 0-d long tensor) or indices (a 1-d one) given as a tensor."""
    d, bounds = _tensor_bounds(self.shape, tensor_indices_or_sections, dim)
    return _take(self, d, bounds)


@tensor_split_sections.meta_rule
def _(self, sections, dim=0):
    return _metas(self, _bounds_shapes(tuple(self.shape), *section_bounds(tuple(self.shape), sections, dim)))


@tensor_split_indices.meta_rule
def _(self, indices, dim=0):
    return _metas(self, _bounds_shapes(tuple(self.shape), *index_bounds(tuple(self.shape), indices, dim)))


@tensor_split_tensor.meta_rule
def _(self, tensor_indices_or_sections, dim=0):
    shape = tuple(self.shape)
    return _metas(self, _bounds_shapes(shape, *_tensor_bounds(shape, tensor_indices_or_sections, dim)))


@tensor_split_sections.grad
def _(grad, self_shape, sections, dim):
    return bounds_grad(grad, self_shape, *section_bounds(self_shape, sections, dim))


@tensor_split_indices.grad
def _(grad, self_shape, indices, dim):
    return bounds_grad(grad, self_shape, *index_bounds(self_shape, indices, dim))


@tensor_split_tensor.grad
def _(grad, self_shape, tensor_indices_or_sections, dim):
    spec = np.asarray(tensor_indices_or_sections.tolist())
    return bounds_grad(grad, self_shape, *_tensor_bounds(self_shape, spec, dim)), None


@tensor_split_sections.sample_inputs
def _(rng):
    x = rng.standard_normal((7, 4))
    yield (x, 3), {}
    yield (x, 2, 1), {}
    yield (x.T, 9, -1), {}
    yield (x, 1), {}
    yield (x,), {"sections": 4, "dim": 0}
    yield (rng.standard_normal((0, 2)), 2), {}


@tensor_split_indices.sample_inputs
def _(rng):
    x = rng.standard_normal((7, 4))
    yield (x, [2, 5]), {}
    yield (x, (-2, 9, 3)), {}
    yield (x.T, [1], 1), {}
    yield (x, []), {}
    yield (x,), {"indices": [1, 1, 3], "dim": -1}


@tensor_split_tensor.sample_inputs
def _(rng):
    x = rng.standard_normal((7, 4))
    yield (x, np.array(3)), {}
    yield (x, np.array([2, 5])), {}
    yield (x, np.array([1]), 1), {}


# ---------------------------------------------------------------------------------------------
# hsplit, vsplit, dsplit
# ---------------------------------------------------------------------------------------------
_AXIS = {"hsplit": 1, "vsplit": 2, "dsplit": 3}  # the dims each needs at least


def _axis(name: str, shape: tuple) -> int:
    need = _AXIS[name]
    if len(shape) < need:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with {len(shape)} "
            "dimensions!")
    return {"hsplit": 1 if len(shape) > 1 else 0, "vsplit": 0, "dsplit": 2}[name]


def directional_bounds(name: str, shape: tuple, sections) -> tuple:
    """(dim, [(start, end)]) of ``hsplit``/``vsplit``/``dsplit``: equal sections that must divide the dim, or indices."""
    d = _axis(name, shape)
    if isinstance(sections, int):
        n = shape[d]
        if sections == 0 or n % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {d}, but the size of the dimension {n} is not "
                f"divisible by the split_size {sections}!")
        return section_bounds(shape, sections, d)
    return index_bounds(shape, sections, d)


def _define_directional(name: str):
    doc = {
        "hsplit": "Split into views along dim 1 (dim 0 of a 1-D tensor): ``sections`` equal parts, or at ``indices``.",
        "vsplit": "Split into views along dim 0 of a tensor of at least 2 dims: equal parts, or at ``indices``.",
        "dsplit": "Split into views along dim 2 of a tensor of at least 3 dims: equal parts, or at ``indices``.",
    }[name]

    def by_sections(self, sections):
        return _take(self, *directional_bounds(name, self.shape, int(sections)))

    def by_indices(self, indices):
        return _take(self, *directional_bounds(name, self.shape, list(indices)))

    by_sections.__doc__ = by_indices.__doc__ = doc
    made = []
    for overload, fn, arg in (("int", by_sections, "int sections"), ("array", by_indices, "int[] indices")):
        d = op(f"{name}.{overload}(Tensor(a) self, {arg}) -> Tensor[]", kind=VIEW, composite=True)(fn)

        def meta(self, spec, _overload=overload):
            shape = tuple(self.shape)
            spec = int(spec) if _overload == "int" else list(spec)
            return _metas(self, _bounds_shapes(shape, *directional_bounds(name, shape, spec)))

        def grad_int(grad, self_shape, sections):
            return bounds_grad(grad, self_shape, *directional_bounds(name, tuple(self_shape), int(sections)))

        def grad_array(grad, self_shape, indices):
            return bounds_grad(grad, self_shape, *directional_bounds(name, tuple(self_shape), list(indices)))

        d.meta_rule(meta)
        d.grad(grad_int if overload == "int" else grad_array)
        made.append(d)

    def samples_int(rng):
        x = rng.standard_normal((4, 6, 2))
        yield (x, 2), {}
        yield (x.transpose(1, 0, 2), 2), {}
        yield (x, 1), {}
        if name == "hsplit":
            yield (rng.standard_normal(6), 3), {}

    def samples_array(rng):
        x = rng.standard_normal((4, 6, 2))
        yield (x, [1, 3]), {}
        yield (x, (-1,)), {}
        yield (x, []), {}
        if name == "hsplit":
            yield (rng.standard_normal(6), [2, 10]), {}

    made[0].sample_inputs(samples_int)
    made[1].sample_inputs(samples_array)
    return made


hsplit_int, hsplit_array = _define_directional("hsplit")
vsplit_int, vsplit_array = _define_directional("vsplit")
dsplit_int, dsplit_array = _define_directional("dsplit")


# ---------------------------------------------------------------------------------------------
# unsafe_split, unsafe_split_with_sizes, unsafe_chunk
# ---------------------------------------------------------------------------------------------
def _part_shapes(shape: tuple, d: int, sizes) -> list:
    return [tuple(shape[:d]) + (s,) + tuple(shape[d + 1:]) for s in sizes]


@op("unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", kind=SHAPE,
    name_rule=_names.KEEP)
def unsafe_split(self, split_size, dim=0):
    """``split``'s parts, sharing memory with the input but not tracked as its views by autograd."""
    return _cut(self, *split_sizes(self.shape, split_size, dim))


@op("unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]", kind=SHAPE,
    name_rule=_names.KEEP)
def unsafe_split_with_sizes(self, split_sizes, dim=0):
    """``split_with_sizes``'s parts, sharing memory with the input but not tracked as its views by autograd."""
    return _cut(self, *split_with_sizes_check(self.shape, split_sizes, dim))


@op("unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", kind=SHAPE, name_rule=_names.KEEP,
    grad_fn=chunk_node("UnsafeSplitBackward0", "UnsafeSplitWithSizesBackward0"))
def unsafe_chunk(self, chunks, dim=0):
    """``chunk``'s parts, sharing memory with the input but not tracked as its views by autograd."""
    return _cut(self, *chunk_sizes(self.shape, chunks, dim))


@unsafe_split.meta_rule
def _(self, split_size, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *split_sizes(tuple(self.shape), split_size, dim)))


@unsafe_split_with_sizes.meta_rule
def _(self, split_sizes, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *split_with_sizes_check(tuple(self.shape), split_sizes, dim)))


@unsafe_chunk.meta_rule
def _(self, chunks, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *chunk_sizes(tuple(self.shape), chunks, dim)))


for _d, _view in ((unsafe_split, "split.Tensor"), (unsafe_split_with_sizes, "split_with_sizes"), (unsafe_chunk, "chunk")):
    _d.grad(_cat_grads)
    _d.sample_inputs(get(_view).samples)  # the same samples as the tracked view
