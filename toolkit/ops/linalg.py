"""Linear algebra products: mm, bmm, matmul (and ``@``), dot, vdot, mv, outer/ger; einsum registers first.

Kernels call numpy's BLAS-backed ``matmul``/``einsum`` directly on the input
arrays (no copies). Shape checks live in ``_linalg_checks``, shared by kernels
and meta rules, so eager errors and the JIT's type propagation agree; they
phrase errors as PyTorch does. The fused ``beta * self + alpha * product`` ops
(addmm, baddbmm, addmv) are in ``linalg_addmm``, imported at the end of this
module, which registers them after these and keeps their names importable here.
"""

from __future__ import annotations

import numpy as np

from .._core import blas_threads as _blas
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.names import MATMUL
from . import (
    _einsum,  # noqa: F401  (registers einsum)
    _flops,
)
from ._linalg_checks import (
    _check_bmm,
    _check_dot,
    _check_matmul,
    _check_mm,
    _check_mv,
    _dtype,
    _meta,
)
from .registry import LINALG, op


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------
@op("mm(Tensor self, Tensor mat2) -> Tensor", kind=LINALG, name_rule=MATMUL, autocast="lower",
    flops=_flops.mm)
def mm(self, mat2):
    """Matrix product of two 2-D tensors (no broadcasting; see ``matmul``)."""
    _check_mm(self, mat2)
    return _blas.matmul(self, mat2)


@mm.meta_rule
def _(self, mat2):
    return _meta(_check_mm(self, mat2), self)


@mm.grad
def _(grad, self, mat2, needs_input_grad):
    return (grad.mm(mat2.t()) if needs_input_grad[0] else None), (self.t().mm(grad) if needs_input_grad[1] else None)


@mm.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), rng.standard_normal((3, 4))), {}
    yield (rng.standard_normal((3, 2)).T, rng.standard_normal((4, 3)).T), {}
    yield (rng.standard_normal((1, 5)), rng.standard_normal((5, 1))), {}
    yield (rng.standard_normal((0, 3)), rng.standard_normal((3, 2))), {}
    yield (rng.standard_normal((2, 0)), rng.standard_normal((0, 3))), {}


@op("bmm(Tensor self, Tensor mat2) -> Tensor", kind=LINALG, name_rule=MATMUL, autocast="lower",
    flops=_flops.bmm)
def bmm(self, mat2):
    """Batched matrix product of two 3-D tensors with equal batch sizes (no broadcasting)."""
    _check_bmm(self, mat2)
    return _blas.matmul(self, mat2)


@bmm.meta_rule
def _(self, mat2):
    return _meta(_check_bmm(self, mat2), self)


@bmm.grad
def _(grad, self, mat2, needs_input_grad):
    return (grad.bmm(mat2.mT) if needs_input_grad[0] else None), (self.mT.bmm(grad) if needs_input_grad[1] else None)


@bmm.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3, 4))), {}
    yield (rng.standard_normal((2, 3, 2)).transpose(0, 2, 1), rng.standard_normal((2, 4, 3)).transpose(0, 2, 1)), {}
    yield (rng.standard_normal((0, 2, 3)), rng.standard_normal((0, 3, 1))), {}


# PyTorch's matmul runs another op by the operands' dims, and records that op's node (the last one where it
# folds batch dims into a matrix product and views the result back).
_MATMUL_NODES = {
    (1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4", (2, 2): "MmBackward0"}


def _matmul_node(bound, outputs) -> str:
    dims = (bound[0].dim(), bound[1].dim())
    return _MATMUL_NODES.get(dims, "CloneBackward0" if dims[0] == 2 else "UnsafeViewBackward0")


@op("matmul(Tensor self, Tensor other) -> Tensor", kind=LINALG, name_rule=MATMUL, autocast="lower",
    dunders=("matmul", "rmatmul"),
    flops=_flops.matmul, grad_fn=_matmul_node)
def matmul(self, other):
    """Matrix product with torch.matmul's rules: 1-D operands act as vectors, batch dims broadcast."""
    if self.ndim == 2 and other.ndim == 2 and self.shape[1] == other.shape[0] and self.dtype == other.dtype \
            and self.dtype != np.bool_:
        return _blas.matmul(self, other)
    _check_matmul(self, other)
    return _blas.matmul(self, other)


@matmul.meta_rule
def _(self, other):
    return _meta(_check_matmul(self, other), self)


@matmul.specialize
def _(self, other):
    """Operands of one non-bool dtype: numpy's matmul has torch.matmul's rules (1-D operands, batch broadcast)."""
    if self.dtype == other.dtype and self.dtype.np != np.bool_:
        return _blas.matmul
    return None


@matmul.grad
def _(grad, self, other, needs_input_grad):
    da, db = self.ndim, other.ndim
    if da == 1 and db == 1:
        return (grad * other if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)
    g = grad.unsqueeze(-2) if da == 1 else grad
    g = g.unsqueeze(-1) if db == 1 else g
    ga = gb = None
    if needs_input_grad[0]:
        ga = g.matmul((other.unsqueeze(-1) if db == 1 else other).mT)
        ga = ga.squeeze(-2) if da == 1 else ga
    if needs_input_grad[1]:
        gb = (self.unsqueeze(0) if da == 1 else self).mT.matmul(g)
        gb = gb.squeeze(-1) if db == 1 else gb
    return ga, gb


@matmul.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(3), r(3)), {}
    yield (r((2, 3)), r(3)), {}
    yield (r(3), r((3, 2))), {}
    yield (r((2, 3)), r((3, 4))), {}
    yield (r((4, 2)).T, r((4, 3))), {}
    yield (r((2, 2, 3)), r(3)), {}
    yield (r(3), r((2, 3, 2))), {}
    yield (r((2, 2, 3)), r((3, 2))), {}
    yield (r((2, 3)), r((2, 3, 2))), {}
    yield (r((2, 1, 2, 3)), r((3, 3, 2))), {}
    yield (r((3, 2, 2)).transpose(0, 2, 1), r((1, 2, 3))), {}
    yield (r((0, 3)), r((3, 2))), {}


@op("dot(Tensor self, Tensor tensor) -> Tensor", kind=LINALG, name_rule=MATMUL)
def dot(self, tensor):
    """Inner product of two 1-D tensors of the same size and dtype (a 0-d result)."""
    _check_dot(self, tensor)
    return np.asarray(np.dot(self, tensor))


@dot.meta_rule
def _(self, tensor):
    return _meta(_check_dot(self, tensor), self)


@dot.grad
def _(grad, self, tensor, needs_input_grad):
    return (grad * tensor if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)


@dot.sample_inputs
def _(rng):
    yield (rng.standard_normal(4), rng.standard_normal(4)), {}
    yield (rng.standard_normal((3, 2))[:, 0], rng.standard_normal(3)), {}
    yield (rng.standard_normal(0), rng.standard_normal(0)), {}


@op("vdot(Tensor self, Tensor other) -> Tensor", kind=LINALG)
def vdot(self, other):
    """Inner product of two 1-D tensors, conjugating the first (the same as ``dot`` for real tensors)."""
    _check_dot(self, other, "vdot")
    return np.asarray(np.vdot(self, other))


@vdot.meta_rule
def _(self, other):
    return _meta(_check_dot(self, other, "vdot"), self)


@vdot.wirtinger_grad
def _(grad, self, other, needs_input_grad):
    # conj(self) . other: antilinear in self, linear in other
    return (grad.conj() * other if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)


@vdot.sample_inputs
def _(rng):
    yield (rng.standard_normal(3), rng.standard_normal(3)), {}


@op("mv(Tensor self, Tensor vec) -> Tensor", kind=LINALG, name_rule=MATMUL)
def mv(self, vec):
    """Matrix-vector product of a 2-D and a 1-D tensor."""
    _check_mv(self, vec)
    return np.matmul(self, vec)


@mv.meta_rule
def _(self, vec):
    return _meta(_check_mv(self, vec), self)


@mv.grad
def _(grad, self, vec, needs_input_grad):
    ga = grad.unsqueeze(-1) * vec if needs_input_grad[0] else None
    return ga, (self.t().mv(grad) if needs_input_grad[1] else None)


@mv.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), rng.standard_normal(3)), {}
    yield (rng.standard_normal((3, 2)).T, rng.standard_normal(3)), {}
    yield (rng.standard_normal((0, 3)), rng.standard_normal(3)), {}


def _check_outer(self, vec2, name="outer"):
    for arg, t in (("self", self), ("vec2", vec2)):
        if len(t.shape) != 1:
            raise RuntimeError(f"{name}: Expected 1-D argument {arg}, but got {len(t.shape)}-D")
    return (self.shape[0], vec2.shape[0]), _dt.promote_types(_dtype(self), _dtype(vec2))


def _outer_kernel(self, vec2, name):
    _, dtype = _check_outer(self, vec2, name)
    return np.multiply.outer(self.astype(dtype.np, copy=False), vec2.astype(dtype.np, copy=False))


def _outer_grad(grad, self, vec2, needs_input_grad):
    ga = grad.mv(vec2.to(grad.dtype)) if needs_input_grad[0] else None
    gb = grad.t().mv(self.to(grad.dtype)) if needs_input_grad[1] else None
    return ga, gb


def _outer_samples(rng):
    yield (rng.standard_normal(3), rng.standard_normal(2)), {}
    yield (rng.standard_normal((2, 4))[1], rng.standard_normal(1)), {}
    yield (rng.standard_normal(0), rng.standard_normal(2)), {}


@op("outer(Tensor self, Tensor vec2) -> Tensor", kind=LINALG, grad_fn="MulBackward0", out="cast")
def outer(self, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = self[i] * vec2[j]`` (dtypes promote)."""
    return _outer_kernel(self, vec2, "outer")


@op("ger(Tensor self, Tensor vec2) -> Tensor", kind=LINALG, grad_fn="MulBackward0", out="cast")
def ger(self, vec2):
    """Alias of ``outer``, kept for code written against older PyTorch."""
    return _outer_kernel(self, vec2, "outer")


for _o in (outer, ger):
    _o.meta_rule(lambda self, vec2: TensorMeta(*_check_outer(self, vec2), self.device))
    _o.grad(_outer_grad)
    _o.sample_inputs(_outer_samples)


from .linalg_addmm import addmm, addmv, baddbmm  # noqa: E402, F401  (the rest of the family registers here)


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
@mm.symbolic
def _(g, self, mat2):
    return g.op("MatMul", self, mat2)


@matmul.symbolic
def _(g, self, other):
    return g.op("MatMul", self, other)


bmm.symbolic(mm.onnx_lowering)  # the same MatMul: ONNX's takes batch dims
