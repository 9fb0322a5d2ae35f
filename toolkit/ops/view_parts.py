"""Views of parts of a tensor along one dim: split, chunk, unbind, narrow.

Every result shares storage with the input; gradients go back by ``cat``,
``stack`` or zero padding. The views that reinterpret strides (unfold,
diagonal) are in ``view_strided``, imported at the end of this module, which
registers them after these and keeps their names importable from here.
"""

from __future__ import annotations

import numpy as np

from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .grad_fn_rules import chunk_node
from .registry import VIEW, op, takes_dim_names


def _along(dim: int, index) -> tuple:
    return (slice(None),) * dim + (index,)


def _metas(t, shapes) -> list:
    return [TensorMeta(s, t.dtype, t.device) for s in shapes]


def _grads_list(grad) -> list:
    """Gradients of a multi-output view as a list (a single output arrives as a bare tensor)."""
    return list(grad) if isinstance(grad, (tuple, list)) else [grad]


# ---------------------------------------------------------------------------------------------
# split, split_with_sizes, chunk
# ---------------------------------------------------------------------------------------------
def _split_dim(shape: tuple, dim: int, name: str) -> int:
    if not shape:
        raise RuntimeError(f"{name}: split expects at least a 1-dimensional tensor")
    return wrap_dim(dim, len(shape), name)


def split_sizes(shape: tuple, split_size: int, dim: int) -> tuple:
    """(dim, sizes of the parts) for ``split`` with an int: equal parts, the last one smaller."""
    d = _split_dim(shape, dim, "split")
    n = shape[d]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and n != 0:
        raise RuntimeError(f"split: split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    if n == 0:
        return d, [0]
    full, rest = divmod(n, split_size)
    return d, [split_size] * full + ([rest] if rest else [])


def split_with_sizes_check(shape: tuple, sizes, dim: int, name: str = "split_with_sizes") -> tuple:
    d = _split_dim(shape, dim, name)
    sizes = list(sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={sizes}"
        )
    if sum(sizes) != shape[d]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {shape[d]} (input tensor's size at dimension "
            f"{d}), but got split_sizes={sizes}"
        )
    return d, sizes


def chunk_sizes(shape: tuple, chunks: int, dim: int) -> tuple:
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, len(shape), "chunk")
    n = shape[d]
    if n == 0:
        return d, [0] * chunks
    return split_sizes(shape, -(-n // chunks), d)


def _cut(a: np.ndarray, d: int, sizes) -> list:
    out, start = [], 0
    for s in sizes:
        out.append(a[_along(d, slice(start, start + s))])
        start += s
    return out


def _part_shapes(shape: tuple, d: int, sizes) -> list:
    return [tuple(shape[:d]) + (s,) + tuple(shape[d + 1 :]) for s in sizes]


@op("split.Tensor(Tensor(a) self, int split_size, int dim=0) -> Tensor[]", kind=VIEW, name_rule=_names.KEEP,
    function=False)
def split(self, split_size, dim=0):
    """Cut into parts of ``split_size`` along ``dim`` (the last may be smaller); the parts are views.

    With a list of sizes, the parts have those sizes: ``x.split([1, 3], dim=1)``.
    """
    d, sizes = split_sizes(self.shape, split_size, dim)
    return _cut(self, d, sizes)


@op("split.sizes(Tensor(a) self, int[] split_size, int dim=0) -> Tensor[]", kind=VIEW, name_rule=_names.KEEP,
    function=False,
    grad_fn="SplitWithSizesBackward0")
def split_sizes_op(self, split_size, dim=0):
    """Cut into parts of the given sizes along ``dim`` (views); the sizes must add up to the dim's size."""
    d, sizes = split_with_sizes_check(self.shape, split_size, dim)
    return _cut(self, d, sizes)


@op("split_function.Tensor(Tensor(a) tensor, int split_size_or_sections, int dim=0) -> Tensor[]", kind=VIEW,
    name_rule=_names.KEEP,
    method=False, function="split", grad_fn="SplitBackward0")
def split_function(tensor, split_size_or_sections, dim=0):
    """``toolkit.split``: ``Tensor.split`` under ``torch.split``'s argument names (``tensor``, ``split_size_or_sections``).

    With a list of sizes, the parts have those sizes: ``toolkit.split(x, [1, 3], dim=1)``.
    """
    d, sizes = split_sizes(tensor.shape, split_size_or_sections, dim)
    return _cut(tensor, d, sizes)


@op("split_function.sizes(Tensor(a) tensor, int[] split_size_or_sections, int dim=0) -> Tensor[]", kind=VIEW,
    name_rule=_names.KEEP,
    method=False, function="split", grad_fn="SplitWithSizesBackward0")
def split_function_sizes(tensor, split_size_or_sections, dim=0):
    """``toolkit.split`` with a list of sizes that must add up to the dim's size."""
    d, sizes = split_with_sizes_check(tensor.shape, split_size_or_sections, dim)
    return _cut(tensor, d, sizes)


@op("split_with_sizes(Tensor(a) self, int[] split_sizes, int dim=0) -> Tensor[]", kind=VIEW,
    name_rule=_names.KEEP)
def split_with_sizes(self, split_sizes, dim=0):
    """Cut into parts of the given sizes along ``dim`` (views)."""
    d, sizes = split_with_sizes_check(self.shape, split_sizes, dim)
    return _cut(self, d, sizes)


@op("chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor[]", kind=VIEW, name_rule=_names.KEEP,
    grad_fn=chunk_node("SplitBackward0", "SplitWithSizesBackward0"))
def chunk(self, chunks, dim=0):
    """At most ``chunks`` equal parts along ``dim`` (views), as ``split(ceil(n / chunks))``."""
    d, sizes = chunk_sizes(self.shape, chunks, dim)
    return _cut(self, d, sizes)


@split.meta_rule
def _(self, split_size, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *split_sizes(tuple(self.shape), split_size, dim)))


@split_sizes_op.meta_rule
def _(self, split_size, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *split_with_sizes_check(tuple(self.shape), split_size, dim)))


@split_with_sizes.meta_rule
def _(self, split_sizes, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *split_with_sizes_check(tuple(self.shape), split_sizes, dim)))


@chunk.meta_rule
def _(self, chunks, dim=0):
    return _metas(self, _part_shapes(tuple(self.shape), *chunk_sizes(tuple(self.shape), chunks, dim)))


def _cat_grads(grad, dim):
    return api.cat(_grads_list(grad), dim)


@split_function.meta_rule
def _(tensor, split_size_or_sections, dim=0):
    return _metas(tensor, _part_shapes(tuple(tensor.shape), *split_sizes(tuple(tensor.shape), split_size_or_sections, dim)))


@split_function_sizes.meta_rule
def _(tensor, split_size_or_sections, dim=0):
    shape = tuple(tensor.shape)
    return _metas(tensor, _part_shapes(shape, *split_with_sizes_check(shape, split_size_or_sections, dim)))


for _d in (split, split_sizes_op, split_with_sizes, chunk, split_function, split_function_sizes):
    _d.grad(_cat_grads)


@split.sample_inputs
def _(rng):
    x = rng.standard_normal((4, 5))
    yield (x, 2), {}
    yield (x, 2, 1), {}
    yield (x.T, 3, -1), {}
    yield (x, 5), {}
    yield (x, 3), {"dim": 1}
    yield (rng.standard_normal((0, 2)), 2), {}


def _sizes_samples(rng):
    x = rng.standard_normal((4, 5))
    yield (x, [1, 3]), {}
    yield (x, [2, 0, 3], 1), {}
    yield (x.T, [5], 0), {}
    yield (x, (1, 1, 2), -2), {}
    yield (x, [4, 1]), {"dim": 1}
    yield (rng.standard_normal((0, 2)), [0, 0]), {}


split_sizes_op.sample_inputs(_sizes_samples)


@split_function.sample_inputs
def _(rng):
    x = rng.standard_normal((4, 5))
    yield (x, 2), {}
    yield (x, 3, -1), {}
    yield (x.T,), {"split_size_or_sections": 3, "dim": 1}
    yield (x, 5), {}
    yield (rng.standard_normal((0, 2)), 2), {}


@split_function_sizes.sample_inputs
def _(rng):
    x = rng.standard_normal((4, 5))
    yield (x, [1, 3]), {}
    yield (x, (2, 0, 3), 1), {}
    yield (x.T,), {"split_size_or_sections": [5], "dim": 0}
    yield (rng.standard_normal((0, 2)), [0, 0]), {}
split_with_sizes.sample_inputs(_sizes_samples)


@chunk.sample_inputs
def _(rng):
    x = rng.standard_normal((5, 4))
    yield (x, 2), {}
    yield (x, 3, 1), {}
    yield (x, 4), {}
    yield (x.T, 2, -1), {}
    yield (x, 7), {}
    yield (x,), {"chunks": 2, "dim": 1}
    yield (rng.standard_normal((0, 2)), 3), {}


# ---------------------------------------------------------------------------------------------
# unbind
# ---------------------------------------------------------------------------------------------
def _unbind_dim(shape: tuple, dim: int) -> int:
    if not shape:
        raise IndexError(f"unbind: Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, len(shape), "unbind")


@op("unbind.int(Tensor(a) self, int dim=0) -> Tensor[]", kind=VIEW, name_rule=_names.drop_dim)
def unbind(self, dim=0):
    """The slices along ``dim``, as views with that dim removed."""
    d = _unbind_dim(self.shape, dim)
    return [self[_along(d, i)] for i in range(self.shape[d])]


@unbind.meta_rule
def _(self, dim=0):
    shape = tuple(self.shape)
    d = _unbind_dim(shape, dim)
    return _metas(self, [shape[:d] + shape[d + 1 :]] * shape[d])


@unbind.grad
def _(grad, dim):
    return api.stack(_grads_list(grad), dim)


@unbind.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x, 1), {}
    yield (x.T, -1), {}
    yield (x,), {"dim": -2}
    yield (rng.standard_normal(1), 0), {}
    yield (rng.standard_normal((2, 0)), 0), {}


# ---------------------------------------------------------------------------------------------
# narrow
# ---------------------------------------------------------------------------------------------
def narrow_range(shape: tuple, dim: int, start: int, length: int) -> tuple:
    """(dim, start) of ``narrow`` after PyTorch's checks; a negative start counts from the end."""
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, len(shape), "narrow")
    n = shape[d]
    if not -n <= start <= n:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start > n - length:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return d, start


@op("narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", kind=VIEW, name_rule=_names.KEEP,
    grad_fn="SliceBackward0")
def narrow(self, dim, start, length):
    """``length`` elements of ``dim`` from ``start`` (a view); ``start`` may be a 0-d integer tensor."""
    d, s = narrow_range(self.shape, dim, start, length)
    return self[_along(d, slice(s, s + length))]


@narrow.meta_rule
def _(self, dim, start, length):
    shape = tuple(self.shape)
    d, _ = narrow_range(shape, dim, start, length)
    return TensorMeta(shape[:d] + (length,) + shape[d + 1 :], self.dtype, self.device)


@narrow.grad
def _(grad, self_shape, dim, start, length):
    d, s = narrow_range(self_shape, dim, start, length)
    return pad_along(grad, self_shape, d, s, self_shape[d] - s - length)


def pad_along(grad, shape: tuple, d: int, before: int, after: int):
    """``grad`` with zeros before and after it along dim ``d`` (the adjoint of taking a slice)."""
    parts = []
    for n in (before, None, after):
        if n is None:
            parts.append(grad)
        elif n:
            parts.append(api.zeros(tuple(shape[:d]) + (n,) + tuple(shape[d + 1 :]), dtype=grad.dtype,
                                   device=grad.device))
    return api.cat(parts, d) if len(parts) > 1 else grad


@narrow.sample_inputs
def _(rng):
    x = rng.standard_normal((4, 5))
    yield (x, 0, 1, 2), {}
    yield (x, 1, -3, 3), {}
    yield (x.T, -1, 0, 4), {}
    yield (x, 1, 5, 0), {}
    yield (x,), {"dim": 1, "start": 2, "length": 2}
    yield (rng.standard_normal((0, 3)), 1, 1, 2), {}


from .view_strided import (  # noqa: E402, F401  (the rest of the family registers here)
    diag_view,
    diagonal,
    diagonal_backward,
    diagonal_geometry,
    strided_view,
    unfold,
    unfold_backward,
    unfold_shape,
)


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_dim_size(g, self, dim):
    shape = g.shape(self)
    if shape is None or shape[dim] is None:
        raise g.unsupported("splitting a dimension whose size is only known at run time")
    return shape[dim]


def _onnx_split(g, self, sizes, dim):
    parts = g.op("Split", self, g.constant(list(sizes)), axis=dim, outputs=len(sizes))
    return list(parts) if len(sizes) > 1 else [parts]


@split.symbolic
def _(g, self, split_size, dim=0):
    n = _onnx_dim_size(g, self, dim)
    sizes = [min(split_size, n - i) for i in range(0, n, split_size)] if split_size else [n]
    return _onnx_split(g, self, sizes, dim)


@split_sizes_op.symbolic
def _(g, self, split_size, dim=0):
    return _onnx_split(g, self, split_size, dim)


@unbind.symbolic
def _(g, self, dim=0):
    # the parts' count is the dimension's size, fixed in the graph (ListUnpack takes that many)
    parts = _onnx_split(g, self, [1] * _onnx_dim_size(g, self, dim), dim)
    return [g.op("Squeeze", p, g.constant([dim])) for p in parts]


@chunk.symbolic
def _(g, self, chunks, dim=0):
    n = _onnx_dim_size(g, self, dim)
    step = -(-n // chunks)
    return _onnx_split(g, self, [min(step, n - i) for i in range(0, n, step)] if n else [0], dim)


@narrow.symbolic
def _(g, self, dim, start, length):
    from .view import onnx_ints  # the view ops' helper, defined before this module

    if g.is_value(start) or g.is_value(length):
        end = g.op("Add", onnx_ints(g, [start]), onnx_ints(g, [length]))
    else:  # a negative start running to the end: ONNX reads an end of 0 as the first index
        end = [2 ** 63 - 1 if start < 0 and start + length == 0 else start + length]
    return g.op("Slice", self, onnx_ints(g, [start]), onnx_ints(g, end), onnx_ints(g, [dim]))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("unbind", "diagonal"))
