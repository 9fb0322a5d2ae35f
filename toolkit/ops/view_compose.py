"""Views made from other views: atleast_1d/2d/3d, broadcast_to, ravel, reshape_as, meshgrid, detach, type_as.

PyTorch writes these as compositions (its CompositeImplicitAutograd): their
results are the views (or, for ``reshape``, copies) of the ops they are made
of, so they share storage exactly where those do, and autograd records the
parts. Those with one tensor in and one out have their own kernels instead,
so each is one view op in the view chain; the sequence forms call them per
tensor.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import infer_size
from . import api
from .grad_fn_rules import by_input_dim, view_or_copy
from .registry import CONVERSION, VIEW, op
from .shape import _atleast
from .view import expand_shape


def _meta(t, shape, dtype=None) -> TensorMeta:
    return TensorMeta(tuple(shape), dtype or t.dtype, t.device)


def _reshape_back(grad, self_shape):
    return grad.reshape(self_shape)


# ---------------------------------------------------------------------------------------------
# atleast_1d, atleast_2d, atleast_3d
# ---------------------------------------------------------------------------------------------
_ATLEAST_DOCS = {
    1: "The tensor as is when it has a dim, else as shape ``(1,)`` (a view).",
    2: "The tensor viewed with at least 2 dims: ``()`` becomes ``(1, 1)`` and ``(n,)`` becomes ``(1, n)``.",
    3: "The tensor viewed with at least 3 dims: ``(n,)`` becomes ``(1, n, 1)`` and ``(m, n)`` becomes ``(m, n, 1)``.",
}


def _define_atleast(k: int):
    name = f"atleast_{k}d"

    def single(self):
        return np.reshape(self, _atleast(self.shape, k))

    def sequence(tensors):
        return tuple(api.function_for(name)(t) for t in tensors)

    single.__doc__ = _ATLEAST_DOCS[k] + " Several tensors (or one list of them) give a tuple."
    sequence.__doc__ = _ATLEAST_DOCS[k] + " Applied to each tensor of the sequence."
    one = op(f"{name}(Tensor self) -> Tensor", kind=VIEW, method=False,
             grad_fn=by_input_dim({0: "ViewBackward0"}, "UnsqueezeBackward0"))(single)
    many = op(f"{name}.Sequence(Tensor[] tensors) -> Tensor[]", kind=VIEW, method=False, composite=True)(sequence)
    one.meta_rule(lambda self: _meta(self, _atleast(tuple(self.shape), k)))
    many.meta_rule(lambda tensors: [_meta(t, _atleast(tuple(t.shape), k)) for t in tensors])
    one.grad(_reshape_back)

    @many.grad
    def _(grad, tensors_shape):
        grads = grad if isinstance(grad, (tuple, list)) else [grad]
        return [g.reshape(s) for g, s in zip(grads, tensors_shape)]

    @one.sample_inputs
    def _(rng):
        yield (rng.standard_normal(()),), {}
        yield (rng.standard_normal(3),), {}
        yield (rng.standard_normal((2, 3)),), {}
        yield (rng.standard_normal((3, 2)).T,), {}
        yield (rng.standard_normal((2, 1, 3, 1)),), {}

    @many.sample_inputs
    def _(rng):
        yield ([rng.standard_normal(()), rng.standard_normal(3), rng.standard_normal((2, 3))],), {}
        yield ([rng.standard_normal((2, 2, 2))],), {}
        yield (rng.standard_normal(2), rng.standard_normal((1, 2))), {}

    return one, many


atleast_1d, atleast_1d_sequence = _define_atleast(1)
atleast_2d, atleast_2d_sequence = _define_atleast(2)
atleast_3d, atleast_3d_sequence = _define_atleast(3)


# ---------------------------------------------------------------------------------------------
# broadcast_to, ravel, reshape_as
# ---------------------------------------------------------------------------------------------
@op("broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)", kind=VIEW, grad_fn="ExpandBackward0")
def broadcast_to(self, size):
    """``self.expand(size)``: a view with new leading dims and size-1 dims stretched (stride 0)."""
    return np.broadcast_to(self, expand_shape(self.shape, size, "broadcast_to"))


@broadcast_to.meta_rule
def _(self, size):
    return _meta(self, expand_shape(tuple(self.shape), size, "broadcast_to"))


@broadcast_to.grad
def _(grad, self_shape):
    return grad.sum_to_size(self_shape)


@broadcast_to.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 1)), (3, 4)), {}
    yield (rng.standard_normal(4), (2, 3, 4)), {}
    yield (rng.standard_normal((1, 3)).T, (2, 3, -1)), {}
    yield (rng.standard_normal(()), ()), {}
    yield (rng.standard_normal(1), (0,)), {}
    yield (rng.standard_normal((2, 1)),), {"size": [2, 2]}


@op("ravel(Tensor(a) self) -> Tensor(a)", kind=VIEW, grad_fn=view_or_copy())
def ravel(self):
    """The elements as a 1-D tensor: a view when the strides allow it, else a copy (``reshape(-1)``)."""
    return np.reshape(self, (self.size,))


@ravel.meta_rule
def _(self):
    return _meta(self, (math.prod(self.shape),))


ravel.grad(_reshape_back)


@ravel.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x.T,), {}
    yield (rng.standard_normal(()),), {}
    yield (rng.standard_normal((2, 0, 3)),), {}


@op("reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", kind=VIEW, function=False, nondiff_args=("other",),
    grad_fn=view_or_copy())
def reshape_as(self, other):
    """``self.reshape(other.size())``: a view when the strides allow it, else a copy."""
    return np.reshape(self, infer_size(other.shape, self.size, "reshape_as"))


@reshape_as.meta_rule
def _(self, other):
    return _meta(self, infer_size(tuple(other.shape), math.prod(self.shape), "reshape_as"))


@reshape_as.grad
def _(grad, self_shape):
    return grad.reshape(self_shape), None


@reshape_as.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), rng.standard_normal((2, 6))), {}
    yield (rng.standard_normal((4, 3)).T, rng.standard_normal(12)), {}
    yield (rng.standard_normal(()), rng.standard_normal((1, 1))), {}


# ---------------------------------------------------------------------------------------------
# meshgrid
# ---------------------------------------------------------------------------------------------
MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")


def meshgrid_shape(tensors, indexing: str) -> tuple:
    """The common shape of ``meshgrid``'s outputs, after PyTorch's checks of its inputs."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    first = tensors[0]
    for t in tensors:
        if len(t.shape) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {list(t.shape)}")
        if t.dtype != first.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != first.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    shape = [math.prod(t.shape) for t in tensors]
    if indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    return tuple(shape)


def _grid(tensors, indexing: str) -> tuple:
    shape = meshgrid_shape(tensors, indexing)
    swap = indexing == "xy" and len(tensors) >= 2
    out = []
    for i, t in enumerate(tensors):
        axis = (1 - i if i < 2 else i) if swap else i
        view = [1] * len(shape)
        view[axis] = -1
        out.append(t.reshape(view).expand(shape))
    return tuple(out)


@op("meshgrid(Tensor[] tensors) -> Tensor[]", kind=VIEW, method=False, composite=True)
def meshgrid(tensors):
    """Coordinate grids of 1-D tensors (views, by ``expand``): output i varies along dim i.

    ``indexing='ij'`` (the default, with a warning as in PyTorch when it is left out) puts the first tensor along
    dim 0; ``'xy'`` swaps the first two dims, as NumPy's and MATLAB's grids do.
    """
    warnings.warn(MESHGRID_WARNING, UserWarning, stacklevel=3)
    return _grid(tensors, "ij")


@op("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]", kind=VIEW, method=False, composite=True)
def meshgrid_indexing(tensors, indexing):
    """Coordinate grids with ``indexing`` ``'ij'`` (matrix) or ``'xy'`` (Cartesian: the first two dims swapped)."""
    return _grid(tensors, indexing)


def _grid_grads(grad, tensors_shape, indexing):
    grads = grad if isinstance(grad, (tuple, list)) else [grad]
    n = len(tensors_shape)
    swap = indexing == "xy" and n >= 2
    out = []
    for i, (g, s) in enumerate(zip(grads, tensors_shape)):
        axis = (1 - i if i < 2 else i) if swap else i
        others = tuple(d for d in range(n) if d != axis)
        out.append((g.sum(others) if others else g).reshape(s))
    return out


@meshgrid.meta_rule
def _(tensors):
    shape = meshgrid_shape(tensors, "ij")
    return [_meta(t, shape) for t in tensors]


@meshgrid_indexing.meta_rule
def _(tensors, indexing):
    shape = meshgrid_shape(tensors, indexing)
    return [_meta(t, shape) for t in tensors]


@meshgrid.grad
def _(grad, tensors_shape):
    return _grid_grads(grad, tensors_shape, "ij")


@meshgrid_indexing.grad
def _(grad, tensors_shape, indexing):
    return _grid_grads(grad, tensors_shape, indexing)


@meshgrid_indexing.sample_inputs
def _(rng):
    a, b, c = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(4)
    yield ([a, b],), {"indexing": "ij"}
    yield ([a, b, c],), {"indexing": "xy"}
    yield (a, b), {"indexing": "xy"}
    yield ([a],), {"indexing": "xy"}
    yield ([rng.standard_normal(()), b],), {"indexing": "ij"}


@meshgrid.sample_inputs
def _(rng):
    yield ([rng.standard_normal(3), rng.standard_normal(2)],), {}


# ---------------------------------------------------------------------------------------------
# detach (the function), type_as
# ---------------------------------------------------------------------------------------------
@op("detach(Tensor(a) self) -> Tensor(a)", kind=VIEW, name_rule=_names.KEEP, method=False, composite=True,
    differentiable=False)
def detach(self):
    """``self.detach()``: the same storage and version counter, cut from the autograd graph."""
    return self.detach()


@detach.meta_rule
def _(self):
    return _meta(self, self.shape)


@detach.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)),), {}
    yield (rng.standard_normal(()),), {}


@op("type_as(Tensor self, Tensor other) -> Tensor", kind=CONVERSION, function=False, composite=True,
    nondiff_args=("other",))
def type_as(self, other):
    """``self`` converted to ``other``'s dtype (``self`` itself when they already match)."""
    return self if self.dtype == other.dtype else self.to(other.dtype)


@type_as.meta_rule
def _(self, other):
    return _meta(self, self.shape, other.dtype)


@type_as.grad
def _(grad, self_dtype):
    return grad.to(self_dtype), None


@type_as.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), np.zeros(1)), {}
    yield (rng.standard_normal((2, 3)).astype(np.float32), np.zeros(1)), {}
    yield (np.arange(4), rng.standard_normal(2)), {}


@type_as.symbolic
def _(g, self, other):
    dtype = g.dtype(other)
    if dtype is None:
        return g.op("CastLike", self, other)
    return self if dtype is g.dtype(self) else g.op("Cast", self, to=dtype)
