"""Triangular and Cholesky-based solves and the ``_ex`` variants: triangular_solve, linalg.solve_triangular,
cholesky_solve, cholesky_inverse, linalg.inv_ex, linalg.cholesky_ex, linalg.solve_ex.

Triangular systems are solved with the triangle of ``A`` taken explicitly (``tril``/``triu``, a unit
diagonal when ``unitriangular``), so entries outside it never matter, as in LAPACK's trtrs. Derivatives
are PyTorch's formulas written with registered ops.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype, scalar_name
from .decomposition import (
    _cholesky,
    _cholesky_grad,
    _first_zero_pivot,
    _inv,
    _inv_grad,
    _solve_shapes,
    check_matrix,
    linalg_solve,
)
from .products import _broadcast_or_raise
from .registry import LINALG, op


def _meta(shape, like, dtype=None):
    return TensorMeta(tuple(shape), dtype or _dtype(like), like.device)


def _triangle(a, upper, unitriangular):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        t = t * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    return t


def _mask(g, upper, unitriangular):
    if upper:
        return g.triu(1 if unitriangular else 0)
    return g.tril(-1 if unitriangular else 0)


def _batched(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])


# ---------------------------------------------------------------------------------------------
# linalg.solve_triangular
# ---------------------------------------------------------------------------------------------
def _solve_triangular_check(A, B, left, name="linalg.solve_triangular"):
    check_matrix(name, A, square=True)
    if len(B.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if _dtype(A) is not _dtype(B):
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type {scalar_name(A)} and B of type "
            f"{scalar_name(B)} instead"
        )
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    batch = _broadcast_or_raise(A.shape[:-2], B.shape[:-2])
    return tuple(batch) + tuple(B.shape[-2:])


def _solve_triangular(A, B, upper, left, unitriangular):
    t = _triangle(A, upper, unitriangular)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return np.swapaxes(_solve_triangular(np.swapaxes(t, -1, -2), np.swapaxes(B, -1, -2), not upper, True,
                                             False), -1, -2)
    t, b = _batched(t, B)
    if b.size == 0 or t.size == 0:
        return np.zeros(b.shape, A.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return np.linalg.solve(t, b).astype(A.dtype, copy=False)
        except np.linalg.LinAlgError:
            return np.full(b.shape, np.nan, A.dtype)


@op("linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) "
    "-> Tensor", kind=LINALG, namespace="linalg", function="solve_triangular", method=False)
def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    """Solve ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``; only its triangle is read."""
    _solve_triangular_check(self, B, left)
    return _solve_triangular(self, B, upper, left, unitriangular)


@linalg_solve_triangular.meta_rule
def _(self, B, upper, left=True, unitriangular=False):
    return _meta(_solve_triangular_check(self, B, left), self)


def _solve_triangular_grad(grad, A, upper, left, unitriangular, X, needs_input_grad):
    gB = api.linalg_solve_triangular(A.mT, grad, upper=not upper, left=left, unitriangular=unitriangular)
    gA = None
    if needs_input_grad[0]:
        gA = -gB.matmul(X.mT) if left else -X.mT.matmul(gB)
        gA = _mask(gA, upper, unitriangular).sum_to_size(tuple(A.shape))
    return gA, gB


@linalg_solve_triangular.grad
def _(grad, self, B_shape, upper, left, unitriangular, result, needs_input_grad):
    gA, gB = _solve_triangular_grad(grad, self, upper, left, unitriangular, result, needs_input_grad)
    return gA, gB.sum_to_size(tuple(B_shape))


def _tri_samples(rng):
    r = rng.standard_normal
    a = r((3, 3)) + 3 * np.eye(3)
    yield (a, r((3, 2))), {"upper": True}
    yield (a, r((2, 3))), {"upper": False, "left": False}
    yield (r((2, 3, 3)) + 3 * np.eye(3), r((3, 1))), {"upper": False, "unitriangular": True}


linalg_solve_triangular.sample_inputs(_tri_samples)


# ---------------------------------------------------------------------------------------------
# triangular_solve (old API)
# ---------------------------------------------------------------------------------------------
def _triangular_solve_check(self, A):
    if len(self.shape) < 2:
        raise RuntimeError(
            f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {len(self.shape)} "
            "dimensions instead")
    if len(A.shape) < 2:
        raise RuntimeError(
            f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {len(A.shape)} "
            "dimensions instead")
    shape = _solve_triangular_check(A, self, True, "torch.triangular_solve")
    return shape, tuple(shape[:-2]) + tuple(A.shape[-2:])


@op("triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False) "
    "-> (Tensor solution, Tensor cloned_coefficient)", kind=LINALG, autocast="fp32")
def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    """Solve ``A X = b`` (``A^T X = b`` with ``transpose``) for triangular ``A``; also returns a copy of ``A``
    (broadcast to the batch), as the old PyTorch API does."""
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
        "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
        "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=4)
    _, a_shape = _triangular_solve_check(self, A)
    a = np.swapaxes(A, -1, -2) if transpose else A
    x = _solve_triangular(a, self, upper != transpose, True, unitriangular)
    return x, np.broadcast_to(A, a_shape).copy()


triangular_solve.return_type = structseq("triangular_solve", ("solution", "cloned_coefficient"))


@triangular_solve.meta_rule
def _(self, A, upper=True, transpose=False, unitriangular=False):
    x, a = _triangular_solve_check(self, A)
    return _meta(x, self), _meta(a, A)


@triangular_solve.grad
def _(grad, self_shape, A, upper, transpose, unitriangular, result, needs_input_grad):
    gX, gM = grad
    X = result[0]
    gA = gB = None
    if gX is not None:
        gB = api.triangular_solve(gX, A, upper, not transpose, unitriangular)[0]
        if needs_input_grad[1]:
            gA = -X.matmul(gB.mT) if transpose else -gB.matmul(X.mT)
            gA = _mask(gA, upper, unitriangular)
        gB = gB.sum_to_size(tuple(self_shape))
    if gM is not None and needs_input_grad[1]:
        gA = gM if gA is None else gA + gM
    if gA is not None:
        gA = gA.sum_to_size(tuple(A.shape))
    return gB, gA


@triangular_solve.sample_inputs
def _(rng):
    r = rng.standard_normal
    a = r((3, 3)) + 3 * np.eye(3)
    yield (r((3, 2)), a), {}
    yield (r((3, 2)), a, False, True), {}
    yield (r((2, 3, 1)), a), {"unitriangular": True}


# ---------------------------------------------------------------------------------------------
# cholesky_solve, cholesky_inverse
# ---------------------------------------------------------------------------------------------
def _cholesky_solve_check(self, L):
    if len(self.shape) < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {len(self.shape)} dimensions instead")
    if len(L.shape) < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {len(L.shape)} dimensions instead")
    if _dtype(self) is not _dtype(L):
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {scalar_name(self)} and A of type "
            f"{scalar_name(L)} instead.")
    check_matrix("cholesky_solve", L, square=True)
    if self.shape[-2] != L.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-1]} by {L.shape[-1]} but "
            f"each b matrix is {self.shape[-2]} by {self.shape[-1]}")
    return tuple(_broadcast_or_raise(self.shape[:-2], L.shape[:-2])) + tuple(self.shape[-2:])


def _cholesky_solve(b, L, upper):
    """``(L L^H)^-1 b`` (``(U^H U)^-1 b`` with ``upper``): two triangular solves, with adjoints for complex."""
    low = np.conjugate(np.swapaxes(L, -1, -2)) if upper else L
    y = _solve_triangular(low, b, False, True, False)
    return _solve_triangular(np.conjugate(np.swapaxes(low, -1, -2)), y, True, True, False)


@op("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor", kind=LINALG, out="cast", autocast="fp32")
def cholesky_solve(self, input2, upper=False):
    """Solve ``A X = b`` given the Cholesky factor of ``A`` (``input2``: lower L, or upper U with ``upper``)."""
    _cholesky_solve_check(self, input2)
    return _cholesky_solve(self, input2, upper)


cholesky_solve.meta_rule(lambda self, input2, upper=False: _meta(_cholesky_solve_check(self, input2), self))


@cholesky_solve.wirtinger_grad  # written with adjoints: the conjugate-Wirtinger gradient for complex inputs too
def _(grad, self_shape, input2, upper, result, needs_input_grad):
    g_self = api.cholesky_solve(grad, input2, upper)
    g_l = None
    if needs_input_grad[1]:
        common = g_self.matmul(result.mH)
        common = common + common.mH
        g_l = (-input2.matmul(common)).triu() if upper else (-common.matmul(input2)).tril()
        g_l = g_l.sum_to_size(tuple(input2.shape))
    return g_self.sum_to_size(tuple(self_shape)), g_l


@cholesky_solve.sample_inputs
def _(rng):
    r = rng.standard_normal
    low = np.tril(r((3, 3))) + 3 * np.eye(3)
    yield (r((3, 2)), low), {}
    yield (r((2, 3, 1)), low.T, True), {}


def _cholesky_inverse_check(self):
    check_matrix("cholesky_inverse", self, square=True)
    return _meta(self.shape, self)


@op("cholesky_inverse(Tensor self, bool upper=False) -> Tensor", kind=LINALG, out="cast", autocast="fp32")
def cholesky_inverse(self, upper=False):
    """Inverse of ``A = L L^T`` (``U^T U`` with ``upper``) given its Cholesky factor."""
    _cholesky_inverse_check(self)
    n = self.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=self.dtype), self.shape)
    return _cholesky_solve(eye, self, upper)


cholesky_inverse.meta_rule(lambda self, upper=False: _cholesky_inverse_check(self))


@cholesky_inverse.wirtinger_grad  # written with adjoints: the conjugate-Wirtinger gradient for complex inputs too
def _(grad, self, upper, result):
    common = result.matmul((grad + grad.mH).matmul(result))
    # only the factor's triangle is read, so only it gets a gradient
    return (-self.matmul(common)).triu() if upper else (-common.matmul(self)).tril()


@cholesky_inverse.sample_inputs
def _(rng):
    r = rng.standard_normal
    low = np.tril(r((3, 3))) + 3 * np.eye(3)
    yield (low,), {}
    yield (low.T, True), {}
    yield (np.tril(r((2, 2, 2))) + 2 * np.eye(2),), {}


# ---------------------------------------------------------------------------------------------
# inv_ex, cholesky_ex, solve_ex
# ---------------------------------------------------------------------------------------------
def _info_meta(like, batch):
    return TensorMeta(tuple(batch), _dt.int32, like.device)


@op("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)", kind=LINALG, autocast="fp32",
    namespace="linalg", function="inv_ex", method=False)
def linalg_inv_ex(A, check_errors=False):
    """Inverse and LAPACK's ``info`` (0, or the 1-based index of a zero pivot of a singular matrix)."""
    check_matrix("linalg.inv_ex", A, square=True)
    flat = A.reshape((-1,) + A.shape[-2:])
    inv = np.empty_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        try:
            inv[i] = np.linalg.inv(m)
        except np.linalg.LinAlgError:
            if check_errors:
                _inv("linalg.inv_ex", A)
            info[i] = _first_zero_pivot(m)
            inv[i] = np.nan
    return inv.reshape(A.shape), info.reshape(A.shape[:-2])


linalg_inv_ex.return_type = structseq("linalg_inv_ex", ("inverse", "info"))


@linalg_inv_ex.meta_rule
def _(A, check_errors=False):
    check_matrix("linalg.inv_ex", A, square=True)
    return _meta(A.shape, A), _info_meta(A, A.shape[:-2])


@linalg_inv_ex.grad
def _(grad, result):
    return _inv_grad(grad[0], result[0])


linalg_inv_ex.sample_inputs(lambda rng: iter([((rng.standard_normal((3, 3)) + 3 * np.eye(3),), {}),
                                              ((rng.standard_normal((2, 2, 2)) + 2 * np.eye(2),), {})]))


@op("linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)",
    kind=LINALG, autocast="fp32", namespace="linalg", function="cholesky_ex", method=False)
def linalg_cholesky_ex(self, upper=False, check_errors=False):
    """Cholesky factor and ``info`` (0, or the order of the first leading minor that is not positive-definite)."""
    check_matrix("linalg.cholesky_ex", self, square=True)
    flat = self.reshape((-1,) + self.shape[-2:])
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        try:
            out[i] = _cholesky("linalg.cholesky_ex", m, upper)
        except RuntimeError:
            if check_errors:
                _cholesky("linalg.cholesky", self, upper)
            sym = (m + m.T) * m.dtype.type(0.5)
            info[i] = next(k for k in range(1, m.shape[0] + 1) if not _is_pd(sym[:k, :k]))
    return out.reshape(self.shape), info.reshape(self.shape[:-2])


def _is_pd(m) -> bool:
    try:
        np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        return False
    return True


linalg_cholesky_ex.return_type = structseq("linalg_cholesky_ex", ("L", "info"))


@linalg_cholesky_ex.meta_rule
def _(self, upper=False, check_errors=False):
    check_matrix("linalg.cholesky_ex", self, square=True)
    return _meta(self.shape, self), _info_meta(self, self.shape[:-2])


@linalg_cholesky_ex.wirtinger_grad  # as linalg.cholesky's: the rule is written for complex inputs too
def _(grad, upper, result):
    return _cholesky_grad(grad[0], result[0], upper)


@linalg_cholesky_ex.sample_inputs
def _(rng):
    a = rng.standard_normal((3, 3))
    yield (a @ a.T + np.eye(3),), {}
    b = rng.standard_normal((2, 2, 2))
    yield (b @ b.transpose(0, 2, 1) + np.eye(2),), {"upper": True}


@op("linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, "
    "Tensor info)", kind=LINALG, namespace="linalg", function="solve_ex", method=False)
def linalg_solve_ex(A, B, left=True, check_errors=False):
    """``linalg.solve`` and LAPACK's ``info`` (0 where the solve succeeded)."""
    _solve_shapes(A, B, left)
    x = linalg_solve.kernels["cpu"](A, B, left)
    batch = A.shape[:-2] if B.ndim < A.ndim else np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return x, np.zeros(batch, np.int32)


linalg_solve_ex.return_type = structseq("linalg_solve_ex", ("result", "info"))


@linalg_solve_ex.meta_rule
def _(A, B, left=True, check_errors=False):
    _, shape = _solve_shapes(A, B, left)
    batch = A.shape[:-2] if len(B.shape) < len(A.shape) else _broadcast_or_raise(A.shape[:-2], B.shape[:-2])
    return _meta(shape, A), _info_meta(A, batch)


@linalg_solve_ex.grad
def _(grad, A, left, result, needs_input_grad):
    g, X = grad[0], result[0]
    gB = api.linalg_solve(A.mT, g, left=left)
    if not needs_input_grad[0]:
        return None, gB
    if left:
        vector = X.ndim == 1 or (X.ndim == A.ndim - 1 and tuple(X.shape) == tuple(A.shape[:-1]))
        gA = -(gB.unsqueeze(-1) * X.unsqueeze(-2)) if vector else -gB.matmul(X.mT)
    else:
        gA = -X.mT.matmul(gB)
    return gA, gB


@linalg_solve_ex.sample_inputs
def _(rng):
    r = rng.standard_normal
    a = r((3, 3)) + 3 * np.eye(3)
    yield (a, r((3, 2))), {}
    yield (r((2, 2, 2)) + 2 * np.eye(2), r((2, 2, 1))), {}
