"""Fused products ``beta * self + alpha * product``: addmm, baddbmm, addmv (and their in-place forms).

One BLAS call for the product, then a scaled add in the product's dtype; ``self``
broadcasts to the product's shape and is ignored when ``beta`` is 0, as in
PyTorch. ``linalg`` imports this module, so these ops register right after the
plain products.
"""

from __future__ import annotations

import numpy as np

from .._core import blas_threads as _blas
from .._core import names as _names
from .._core.shape import broadcast_shapes_or_none
from . import _flops
from ._linalg_checks import _check_bmm, _check_mv, _dtype, _meta, _mm_dims, _no_bool, scalar_name
from .registry import LINALG, op


def maybe_multiply(t, s):
    """PyTorch's ``maybe_multiply`` in derivative formulas: ``t`` itself for a factor of 1, else ``t * s`` (the
    gradient of the added term of ``addmm`` and its kind, where ``beta`` is almost always 1)."""
    return t if s == 1 else t * s


def _check_add_term(name, self_shape, out_shape, dtypes):
    """``self`` of addmm/baddbmm/addmv must broadcast to the product's shape and share its dtype."""
    if broadcast_shapes_or_none(tuple(self_shape), out_shape) != out_shape:
        raise RuntimeError(
            f"The expanded size of the tensor ({out_shape[-1]}) must match the existing size "
            f"({self_shape[-1] if self_shape else 1}) at non-singleton dimension {len(out_shape) - 1}.  "
            f"Target sizes: {list(out_shape)}.  Tensor sizes: {list(self_shape)}"
        )
    if len({_dtype(x) for x in dtypes}) != 1:
        if name == "addmv":
            names = ", ".join(scalar_name(x) for x in dtypes[:-1]) + f", and {scalar_name(dtypes[-1])}"
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names}")
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {scalar_name(dtypes[0])} and {scalar_name(dtypes[2])}"
        )


def _scaled_sum(self, prod, beta, alpha):
    """``beta * self + alpha * prod`` in prod's dtype; ``self`` is ignored when beta is 0 (as PyTorch does)."""
    dtype = prod.dtype
    if alpha != 1:
        prod = np.multiply(prod, alpha).astype(dtype, copy=False)
    if beta == 0:
        return prod
    term = self if beta == 1 else np.multiply(self, beta)
    return np.add(prod, term).astype(dtype, copy=False)


def _addmm_check(self, mat1, mat2):
    if len(mat1.shape) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {len(mat1.shape)}-D tensor")
    if len(mat2.shape) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(mat2.shape)}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mm_dims(mat1.shape, mat2.shape)})")
    shape = (mat1.shape[0], mat2.shape[1])
    _check_add_term("addmm", tuple(self.shape), shape, (self, mat1, mat2))
    _no_bool("addmm_impl_cpu_", mat1)
    return shape


@op("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG,
    name_rule=_names.addmm, autocast="lower",
    inplace=True, flops=_flops.addmm)
def addmm(self, mat1, mat2, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``, with ``self`` broadcast to the product's shape."""
    _addmm_check(self, mat1, mat2)
    return _scaled_sum(self, _blas.matmul(mat1, mat2), beta, alpha)


@addmm.meta_rule
def _(self, mat1, mat2, beta=1, alpha=1):
    return _meta(_addmm_check(self, mat1, mat2), mat1)


@addmm.grad
def _(grad, mat1, mat2, beta, alpha, needs_input_grad):
    g_self = maybe_multiply(grad, beta) if needs_input_grad[0] else None
    g1 = grad.mm(mat2.t()) if needs_input_grad[1] else None
    g2 = mat1.t().mm(grad) if needs_input_grad[2] else None
    if alpha != 1:
        g1 = g1 * alpha if g1 is not None else None
        g2 = g2 * alpha if g2 is not None else None
    return g_self, g1, g2


@addmm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 4)), r((2, 3)), r((3, 4))), {}
    yield (r(4), r((2, 3)), r((4, 3)).T), {"beta": 0.5, "alpha": 2.0}
    yield (r((2, 1)), r((3, 2)).T, r((3, 4))), {"alpha": -1.5}
    yield (r(()), r((2, 3)), r((3, 2))), {"beta": 0}


def _baddbmm_check(self, batch1, batch2):
    shape = _check_bmm(batch1, batch2)
    _check_add_term("baddbmm", tuple(self.shape), shape, (self, batch1, batch2))
    return shape


@op("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG, autocast="lower",
    inplace=True)
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    """``beta * self + alpha * bmm(batch1, batch2)``, with ``self`` broadcast to the product's shape."""
    _baddbmm_check(self, batch1, batch2)
    return _scaled_sum(self, _blas.matmul(batch1, batch2), beta, alpha)


@baddbmm.meta_rule
def _(self, batch1, batch2, beta=1, alpha=1):
    return _meta(_baddbmm_check(self, batch1, batch2), batch1)


@baddbmm.grad
def _(grad, batch1, batch2, beta, alpha, needs_input_grad):
    g_self = maybe_multiply(grad, beta) if needs_input_grad[0] else None
    g1 = grad.bmm(batch2.mT) * alpha if needs_input_grad[1] else None
    g2 = batch1.mT.bmm(grad) * alpha if needs_input_grad[2] else None
    return g_self, g1, g2


@baddbmm.symbolic
def _(g, self, batch1, batch2, beta=1, alpha=1):
    prod = g.op("MatMul", batch1, batch2)
    if alpha != 1:
        prod = g.op("Mul", prod, g.constant(alpha, g.dtype(batch1)))
    if beta == 0:  # PyTorch ignores self then (nan and inf in it included)
        return prod
    term = self if beta == 1 else g.op("Mul", self, g.constant(beta, g.dtype(batch1)))
    return g.op("Add", prod, term)


@baddbmm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 2, 3)), r((2, 2, 4)), r((2, 4, 3))), {}
    yield (r(3), r((2, 2, 4)), r((2, 3, 4)).transpose(0, 2, 1)), {"beta": 0.5, "alpha": -2.0}


def _addmv_check(self, mat, vec):
    shape = _check_mv(mat, vec, rows=self.shape[0] if len(self.shape) == 1 else None)
    _check_add_term("addmv", tuple(self.shape), shape, (self, mat, vec))
    return shape


@op("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG,
    name_rule=_names.addmm,
    inplace=True)
def addmv(self, mat, vec, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``, with ``self`` broadcast to the product's shape."""
    _addmv_check(self, mat, vec)
    return _scaled_sum(self, np.matmul(mat, vec), beta, alpha)


@addmv.meta_rule
def _(self, mat, vec, beta=1, alpha=1):
    return _meta(_addmv_check(self, mat, vec), mat)


@addmv.grad
def _(grad, mat, vec, beta, alpha, needs_input_grad):
    g_self = maybe_multiply(grad, beta) if needs_input_grad[0] else None
    g_mat = grad.unsqueeze(-1) * vec * alpha if needs_input_grad[1] else None
    g_vec = mat.t().mv(grad) * alpha if needs_input_grad[2] else None
    return g_self, g_mat, g_vec


@addmv.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(2), r((2, 3)), r(3)), {}
    yield (r(()), r((3, 2)).T, r(3)), {"beta": 2.0, "alpha": 0.5}


@addmm.symbolic
def _(g, self, mat1, mat2, beta=1, alpha=1):
    return g.op("Gemm", mat1, mat2, self, alpha=float(alpha), beta=float(beta))
