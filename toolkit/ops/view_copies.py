"""The ``*_copy`` ops: each view op's values in a fresh tensor (``view_copy``, ``t_copy``, ``split_copy``...).

PyTorch has them so that programs without aliasing (its functionalization)
can still express every view. Each one here is a composition, as in PyTorch
(CompositeImplicitAutograd): the view op, then ``clone`` of what it returns,
so it runs on every device and autograd records its parts; the meta rule and
the derivative (for the JIT) are the view's own (the gradient of a copy of a
view is the gradient of the view). Nothing returned shares storage with the input.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.meta import TensorMeta
from . import indexing, runtime, view, view_order, view_parts, view_strided  # noqa: F401  (the view ops these copy register first)
from .registry import SHAPE, get, op


def _fresh(out):
    """A clone of a view op's result (a tensor, or a tuple of them as PyTorch returns ``Tensor[]``)."""
    if isinstance(out, (list, tuple)):
        return tuple(o.clone() for o in out)
    return out.clone()


def _define_copy(schema: str, view_name: str, *, adapt: Callable | None = None, method: bool = False,
                 differentiable: bool = True, samples: Callable | None = None, out: bool | str = True):
    """Register ``schema`` as the copying twin of view op ``view_name``; ``adapt`` maps its arguments to the view's."""
    source = get(view_name)
    fit = adapt or (lambda *a: a)

    def kernel(*args):
        return _fresh(runtime.execute(source, list(fit(*args))))

    name = schema.split("(", 1)[0].split(".")[0]
    kernel.__name__ = name
    kernel.__doc__ = (f"``{source.name}`` of the input as a new tensor: the same values in fresh memory, sharing "
                      f"nothing with the input (PyTorch's copying twin of a view op).")
    d = op(schema, kind=SHAPE, out=out, method=method, differentiable=differentiable, composite=True)(kernel)

    @d.meta_rule
    def _(*args):
        return source.meta(*fit(*args))

    if differentiable and source.derivative is not None:
        d.grad(source.derivative)
    d.sample_inputs(samples or source.samples)
    return d


def _same_as(t) -> TensorMeta:
    return TensorMeta(tuple(t.shape), t.dtype, t.device)


def _copy_samples(rng):
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x.T,), {}
    yield (rng.standard_normal(()),), {}
    yield (np.arange(6).reshape(2, 3),), {}


@op("alias_copy(Tensor self) -> Tensor", kind=SHAPE, method=False, composite=True)
def alias_copy(self):
    """The input's values in a new tensor (the copying twin of ``alias``)."""
    return self.clone()


@op("detach_copy(Tensor self) -> Tensor", kind=SHAPE, method=False, differentiable=False, composite=True)
def detach_copy(self):
    """The input's values in a new tensor with no autograd history (the copying twin of ``detach``)."""
    return self.detach().clone()


for _d in (alias_copy, detach_copy):
    _d.meta_rule(_same_as)
    _d.sample_inputs(_copy_samples)


@alias_copy.grad
def _(grad):
    return grad


def _squeeze_samples(which: str):
    def samples(rng):
        x = rng.standard_normal((3, 1, 4, 1))
        if which == "all":
            yield (x,), {}
            yield (x.transpose(3, 2, 1, 0),), {}
            yield (rng.standard_normal(()),), {}
        elif which == "dim":
            yield (x, 1), {}
            yield (x, 0), {}
            yield (x,), {"dim": -1}
            yield (rng.standard_normal(()), 0), {}
        else:
            yield (x, (1, -1)), {}
            yield (x, [0]), {}
            yield (x,), {"dim": (3,)}

    return samples


diagonal_copy = _define_copy("diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor", "diagonal")
expand_copy = _define_copy("expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor", "expand")
narrow_copy = _define_copy("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor", "narrow",
                           method=True)
permute_copy = _define_copy("permute_copy(Tensor self, int[] dims) -> Tensor", "permute")
select_copy = _define_copy("select_copy.int(Tensor self, int dim, SymInt index) -> Tensor", "select")
slice_copy = _define_copy(
    "slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor", "slice")
split_copy = _define_copy("split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", "split.Tensor",
                          out="any")  # PyTorch's split_copy copies into outs of any dtype
split_with_sizes_copy = _define_copy(
    "split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]", "split_with_sizes")
squeeze_copy = _define_copy("squeeze_copy(Tensor self) -> Tensor", "squeeze", samples=_squeeze_samples("all"))
squeeze_copy_dim = _define_copy("squeeze_copy.dim(Tensor self, int dim) -> Tensor", "squeeze",
                                adapt=lambda self, dim: (self, [dim]), samples=_squeeze_samples("dim"))
squeeze_copy_dims = _define_copy("squeeze_copy.dims(Tensor self, int[] dim) -> Tensor", "squeeze",
                                 samples=_squeeze_samples("dims"))
t_copy = _define_copy("t_copy(Tensor self) -> Tensor", "t")
transpose_copy = _define_copy("transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor", "transpose.int")
unbind_copy = _define_copy("unbind_copy.int(Tensor self, int dim=0) -> Tensor[]", "unbind.int")
unfold_copy = _define_copy("unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor", "unfold")
unsqueeze_copy = _define_copy("unsqueeze_copy(Tensor self, int dim) -> Tensor", "unsqueeze")
as_strided_copy = _define_copy(
    "as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor", "as_strided")
view_copy = _define_copy("view_copy(Tensor self, SymInt[] size) -> Tensor", "view")
view_copy_dtype = _define_copy("view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor", "view.dtype",
                               differentiable=False)
