"""View ops that reorder dims: permute, movedim/moveaxis, transpose/swapaxes/swapdims, t.

They only permute a tensor's shape and strides, so each result shares storage
with its input and their derivatives are the inverse reordering.
"""

from __future__ import annotations

import numpy as np

from .._core import names as _names
from .._core.shape import wrap_dim
from .registry import VIEW, op, takes_dim_names
from .view import _meta


# ---------------------------------------------------------------------------------------------
# permute, movedim, transpose and its aliases, t
# ---------------------------------------------------------------------------------------------
def permute_dims(ndim: int, dims) -> tuple:
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
            f"ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = tuple(wrap_dim(d, ndim, "permute") for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return wrapped


@op("permute(Tensor(a) self, int[] dims) -> Tensor(a)", kind=VIEW)
def permute(self, dims):
    """Reorder the dims (a view): ``x.permute(2, 0, 1)``."""
    return np.transpose(self, permute_dims(self.ndim, dims)) if self.ndim else self.view()


@permute.meta_rule
def _(self, dims):
    return _meta(self, tuple(self.shape[d] for d in permute_dims(len(self.shape), dims)))


@permute.grad
def _(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(permute_dims(len(dims), dims)):
        inverse[d] = i
    return grad.permute(inverse)


@permute.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3, 4))
    yield (x, (2, 0, 1)), {}
    yield (x, (-1, -3, 1)), {}
    yield (x.transpose(1, 2, 0), (1, 0, 2)), {}
    yield (x,), {"dims": (0, 1, 2)}
    yield (rng.standard_normal(()), ()), {}
    yield (rng.standard_normal((0, 3)), (1, 0)), {}


def movedim_perm(ndim: int, source, destination, name: str = "movedim") -> tuple:
    source, destination = tuple(source), tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"{name}: Invalid source or destination dims: source ({list(source)} dims) should contain the same "
            f"number of dims as destination ({list(destination)} dims)"
        )
    src = [wrap_dim(d, ndim, name) for d in source]
    dst = [wrap_dim(d, ndim, name) for d in destination]
    for what, ds, raw in (("source", src, source), ("destination", dst, destination)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"{name}: repeated dim in `{what}` ({list(raw)})")
    if ndim == 0:
        return ()
    order: list = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(ndim) if i not in src)
    return tuple(o if o is not None else next(rest) for o in order)


def _movedim(self, source, destination, name):
    return np.transpose(self, movedim_perm(self.ndim, source, destination, name)) if self.ndim else self.view()


@op("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)", kind=VIEW,
    grad_fn="PermuteBackward0")
def movedim(self, source, destination):
    """Move dims ``source`` to positions ``destination``, keeping the others in order (a view)."""
    return _movedim(self, source, destination, "movedim")


@op("moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)", kind=VIEW,
    grad_fn="PermuteBackward0")
def moveaxis(self, source, destination):
    """Alias of :func:`movedim`, NumPy's name."""
    return _movedim(self, source, destination, "moveaxis")


def _movedim_meta(name):
    def rule(self, source, destination):
        perm = movedim_perm(len(self.shape), source, destination, name)
        return _meta(self, tuple(self.shape[p] for p in perm))

    return rule


def _movedim_grad(grad, source, destination):
    return grad.movedim(destination, source)


def _movedim_samples(rng):
    x = rng.standard_normal((2, 3, 4))
    yield (x, 0, 2), {}
    yield (x, (0, 1), (2, 0)), {}
    yield (x.transpose(2, 1, 0), -1, 0), {}
    yield (x,), {"source": 1, "destination": -1}
    yield (rng.standard_normal(()), 0, 0), {}
    yield (rng.standard_normal((0, 2)), 0, 1), {}


for _d, _n in ((movedim, "movedim"), (moveaxis, "moveaxis")):
    _d.meta_rule(_movedim_meta(_n))
    _d.grad(_movedim_grad)
    _d.sample_inputs(_movedim_samples)


def transpose_shape(shape: tuple, dim0: int, dim1: int, name: str = "transpose") -> tuple:
    n = len(shape)
    a, b = wrap_dim(dim0, n, name), wrap_dim(dim1, n, name)
    if n == 0:
        return ()
    out = list(shape)
    out[a], out[b] = out[b], out[a]
    return tuple(out)


def _swap(self, dim0, dim1, name):
    n = self.ndim
    a, b = wrap_dim(dim0, n, name), wrap_dim(dim1, n, name)
    return np.swapaxes(self, a, b) if n else self.view()


@op("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", kind=VIEW, name_rule=_names.transpose,
    self_inverse=True)
def transpose(self, dim0, dim1):
    """Swap two dims (a view): ``x.transpose(0, 1)``."""
    return _swap(self, dim0, dim1, "transpose")


@op("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", kind=VIEW, self_inverse=True,
    grad_fn="TransposeBackward0")
def swapaxes(self, axis0, axis1):
    """Alias of :func:`transpose`, NumPy's name."""
    return _swap(self, axis0, axis1, "swapaxes")


@op("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", kind=VIEW, self_inverse=True,
    grad_fn="TransposeBackward0")
def swapdims(self, dim0, dim1):
    """Alias of :func:`transpose`."""
    return _swap(self, dim0, dim1, "swapdims")


@transpose.grad
def _(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


@swapaxes.grad
def _(grad, axis0, axis1):
    return grad.transpose(axis0, axis1)


@swapdims.grad
def _(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


def _transpose_family(d, name):
    @d.meta_rule
    def _(self, a, b):
        return _meta(self, transpose_shape(tuple(self.shape), a, b, name))

    a_name, b_name = d.arg_names[1], d.arg_names[2]

    @d.sample_inputs
    def _(rng):
        x = rng.standard_normal((2, 3, 4))
        yield (x, 0, 1), {}
        yield (x, -1, 0), {}
        yield (x.transpose(2, 0, 1), 1, 2), {}
        yield (x, 1, 1), {}
        yield (x,), {a_name: 2, b_name: -2}
        yield (rng.standard_normal(()), 0, -1), {}
        yield (rng.standard_normal((0, 3)), 0, 1), {}


for _d, _n in ((transpose, "transpose"), (swapaxes, "swapaxes"), (swapdims, "swapdims")):
    _transpose_family(_d, _n)


def _t_shape(shape: tuple) -> tuple:
    if len(shape) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(shape)}D")
    return tuple(reversed(shape))


@op("t(Tensor(a) self) -> Tensor(a)", kind=VIEW, name_rule=_names.reverse, self_inverse=True)
def t(self):
    """Transpose a matrix; 0-d and 1-d tensors come back as they are."""
    _t_shape(self.shape)
    return self.T


@t.meta_rule
def _(self):
    return _meta(self, _t_shape(tuple(self.shape)))


@t.grad
def _(grad):
    return grad.t()


@t.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)),), {}
    yield (rng.standard_normal((4, 3)).T,), {}
    yield (rng.standard_normal(5),), {}
    yield (rng.standard_normal(()),), {}
    yield (rng.standard_normal((0, 2)),), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
@t.symbolic
def _(g, self):
    return self if g.rank(self) is not None and g.rank(self) < 2 else g.op("Transpose", self, perm=[1, 0])


@transpose.symbolic
def _(g, self, dim0, dim1):
    rank = g.rank(self)
    if rank is None:
        raise g.unsupported("transpose of a tensor of unknown rank")
    if rank == 0:
        return self
    perm = list(range(rank))
    perm[dim0 % rank], perm[dim1 % rank] = perm[dim1 % rank], perm[dim0 % rank]
    return g.op("Transpose", self, perm=perm)


@permute.symbolic
def _(g, self, dims):
    rank = g.rank(self) or len(dims)
    if rank == 0:
        return self
    return g.op("Transpose", self, perm=[d % rank for d in dims])

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("transpose",))
