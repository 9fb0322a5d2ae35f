"""Matrix functions: inverse, det, slogdet, logdet, solve, cholesky (qr, svd, eigh are in factorization.py).

All take batches ``(..., n, n)`` (or ``(..., m, n)``) and run numpy's LAPACK
routines, which keep float32 as float32. Failures raise ``LinAlgError`` (a
``RuntimeError``) worded as PyTorch's. Derivatives use registered ops only
(matmul, solve, tril, ...), so they differentiate again.

Eigenvectors and singular vectors are unique only up to sign; the signs are
LAPACK's, as in PyTorch, though another LAPACK build may choose differently.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype, scalar_name
from .registry import LINALG, op


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (singular or not positive-definite), as torch.linalg's."""


# ---------------------------------------------------------------------------------------------
# Checks shared by kernels and meta rules
# ---------------------------------------------------------------------------------------------
def check_float(name: str, a) -> None:
    if not (_dtype(a).is_floating_point or _dtype(a).is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_name(a)}")


def check_matrix(name: str, a, square: bool = False) -> None:
    if len(a.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by {a.shape[-1]} matrices"
        )
    check_float(name, a)


def hermitian_part(a: np.ndarray) -> np.ndarray:
    """``(A + A^H) / 2``: the input cholesky and eigh factor (``A`` itself for the Hermitian inputs they are for)."""
    return (a + np.conj(np.swapaxes(a, -1, -2))) * a.real.dtype.type(0.5)


def _batch_prefix(a: np.ndarray, index) -> str:
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def _first_zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first exactly-zero pivot of LU with partial pivoting (LAPACK getrf's ``info``)."""
    u = np.array(m, dtype=np.float64)
    n = u.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            return j + 1
        u[[j, p]] = u[[p, j]]
        u[j + 1:, j:] -= np.outer(u[j + 1:, j] / u[j, j], u[j, j:])
    return n


def _singular_info(a: np.ndarray):
    """(batch index, zero pivot) of the first singular matrix in a batch."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        try:
            np.linalg.inv(m)
        except np.linalg.LinAlgError:
            return i, _first_zero_pivot(m)
    return 0, a.shape[-1]


def adjoint(x):
    """The conjugate transpose of the last two dims (the transpose of a real tensor), for derivatives."""
    return x.conj().mT if x.is_complex() else x.mT


def _eye_like(a, n: int):
    return api.eye(n, dtype=a.dtype)


def _diag(v):
    """``diag_embed`` of the last dim, written as a product with the identity."""
    return _eye_like(v, v.shape[-1]) * v.unsqueeze(-2)


def _meta(shape, like):
    return TensorMeta(tuple(shape), _dtype(like), like.device)


def _square_samples(rng, batch=True):
    r = rng.standard_normal
    yield (r((3, 3)) + 3 * np.eye(3),), {}
    yield ((r((2, 2)) + 2 * np.eye(2)).T,), {}
    if batch:
        yield (r((2, 2, 2)) + 2 * np.eye(2),), {}


# ---------------------------------------------------------------------------------------------
# inverse
# ---------------------------------------------------------------------------------------------
def _inv(name, a):
    check_matrix(name, a, square=True)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        i, k = _singular_info(a)
        raise LinAlgError(
            f"{name}: {_batch_prefix(a, i)}The diagonal element {k} is zero, the inversion could not be completed "
            "because the input matrix is singular."
        ) from None


def _inv_meta(a):
    check_matrix("linalg.inv", a, square=True)
    return _meta(a.shape, a)


def _inv_grad(grad, result):
    rt = result.mT
    return -rt.matmul(grad).matmul(rt)


@op("linalg_inv(Tensor A) -> Tensor", kind=LINALG, autocast="fp32", namespace="linalg", function="inv", method=False,
    grad_fn="LinalgInvExBackward0")
def linalg_inv(A):
    """Inverse of each square matrix in a batch; singular input raises ``LinAlgError``."""
    return _inv("linalg.inv", A)


@op("inverse(Tensor self) -> Tensor", kind=LINALG, grad_fn="LinalgInvExBackward0", autocast="fp32")
def inverse(self):
    """Inverse of each square matrix in a batch (``torch.linalg.inv``)."""
    return _inv("linalg.inv", self)


for _o in (linalg_inv, inverse):
    _o.meta_rule(_inv_meta)
    _o.grad(_inv_grad)
    _o.sample_inputs(_square_samples)


# ---------------------------------------------------------------------------------------------
# det, slogdet, logdet
# ---------------------------------------------------------------------------------------------
def _det_meta(a):
    check_matrix("linalg.det", a, square=True)
    return _meta(a.shape[:-2], a)


def _inv_t(a):
    return api.linalg_inv(a).mT


def _det_grad(grad, A, result):
    return (grad * result).unsqueeze(-1).unsqueeze(-1) * _inv_t(A)


@op("linalg_det(Tensor A) -> Tensor", kind=LINALG, namespace="linalg", function="det", method=False)
def linalg_det(A):
    """Determinant of each square matrix in a batch."""
    check_matrix("linalg.det", A, square=True)
    return np.linalg.det(A)


@op("det(Tensor self) -> Tensor", kind=LINALG, grad_fn="LinalgDetBackward0", out=False)
def det(self):
    """Determinant of each square matrix in a batch (``torch.linalg.det``)."""
    check_matrix("linalg.det", self, square=True)
    return np.linalg.det(self)


@linalg_det.grad
def _(grad, A, result):
    return _det_grad(grad, A, result)


@det.grad
def _(grad, self, result):
    return _det_grad(grad, self, result)


for _o in (linalg_det, det):
    _o.meta_rule(_det_meta)
    _o.sample_inputs(_square_samples)


def _slogdet(a):
    check_matrix("linalg.slogdet", a, square=True)
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabs)


def _slogdet_meta(a):
    check_matrix("linalg.slogdet", a, square=True)
    m = _meta(a.shape[:-2], a)
    return m, TensorMeta(m.shape, m.dtype.to_real(), m.device)


def _slogdet_grad(grad, A, result):
    """``(g_logabs + i Im(conj(sign) g_sign)) A^{-H}``: with ``log det = logabs + i theta``, the sign moves only
    with the phase ``theta``; for real ``A`` the sign is piecewise constant and only ``g_logabs`` flows."""
    g_sign, g_log = grad
    if g_log is None:
        g_log = api.zeros_like(result[1])
    if not A.is_complex():
        return g_log.unsqueeze(-1).unsqueeze(-1) * _inv_t(A)
    w = g_log.to(A.dtype)
    if g_sign is not None:
        w = w + 1j * api.imag(result[0].conj() * g_sign)
    return w.unsqueeze(-1).unsqueeze(-1) * _inv_t(A).conj()


@op("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", kind=LINALG, namespace="linalg",
    function="slogdet", method=False)
def linalg_slogdet(A):
    """Sign and log of the absolute value of the determinant (stable where ``det`` under/overflows)."""
    return _slogdet(A)


@op("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)", kind=LINALG, grad_fn="LinalgSlogdetBackward0")
def slogdet(self):
    """Sign and log absolute determinant (``torch.linalg.slogdet``)."""
    return _slogdet(self)


linalg_slogdet.return_type = structseq("linalg_slogdet", ("sign", "logabsdet"))
slogdet.return_type = structseq("slogdet", ("sign", "logabsdet"))


@linalg_slogdet.wirtinger_grad
def _(grad, A, result):
    return _slogdet_grad(grad, A, result)


@slogdet.wirtinger_grad
def _(grad, self, result):
    return _slogdet_grad(grad, self, result)


for _o in (linalg_slogdet, slogdet):
    _o.meta_rule(_slogdet_meta)
    _o.sample_inputs(_square_samples)


@op("logdet(Tensor self) -> Tensor", kind=LINALG, grad_fn="WhereBackward0", out=False)
def logdet(self):
    """Log determinant: nan for a negative determinant, -inf for a singular matrix."""
    sign, logabs = _slogdet(self)
    if sign.dtype.kind == "c":  # the principal log of a complex determinant
        return (np.log(sign) + logabs).astype(sign.dtype)
    return np.where(sign < 0, np.nan, logabs).astype(logabs.dtype)


@logdet.meta_rule
def _(self):
    return _slogdet_meta(self)[0]


@logdet.grad
def _(grad, self):
    return grad.unsqueeze(-1).unsqueeze(-1) * _inv_t(self)


@logdet.sample_inputs
def _(rng):
    a = rng.standard_normal((3, 3))
    yield (a @ a.T + np.eye(3),), {}
    b = rng.standard_normal((2, 2, 2))
    yield (b @ b.transpose(0, 2, 1) + np.eye(2),), {}


# ---------------------------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------------------------
def _solve_shapes(A, B, left):
    """(vector_case, result shape) of linalg.solve, with its errors."""
    check_matrix("linalg.solve", A, square=True)
    if _dtype(A) is not _dtype(B):
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {scalar_name(A)} and B of "
            f"type {scalar_name(B)} instead"
        )
    sa, sb = tuple(A.shape), tuple(B.shape)
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    if vector and not left:
        raise RuntimeError(
            "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
            "linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    mat = sb + (1,) if vector else sb
    n = sa[-1]
    if len(mat) < 2 or (mat[-2] if left else mat[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {mat[-2]}x{mat[-1]})"
        )

    batch = broadcast_shapes_or_none(sa[:-2], mat[:-2])
    if batch is None:
        pa, pb = sa[:-2], mat[:-2]
        k = max(len(pa), len(pb))
        pa, pb = (1,) * (k - len(pa)) + pa, (1,) * (k - len(pb)) + pb
        i = next(i for i in range(k) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
        raise RuntimeError(
            f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at non-singleton dimension {i}"
        )
    return vector, batch + (mat[-2:-1] if vector else mat[-2:])


@op("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", kind=LINALG, autocast="fp32", namespace="linalg",
    function="solve", method=False, grad_fn="LinalgSolveExBackward0")
def linalg_solve(A, B, left=True):
    """Solve ``A X = B`` (or ``X A = B`` with ``left=False``) for batches of square ``A``; B may be a vector."""
    vector, _ = _solve_shapes(A, B, left)
    a = A if left else np.swapaxes(A, -1, -2)
    b = B[..., None] if vector else (B if left else np.swapaxes(B, -1, -2))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        i, _ = _singular_info(a)
        raise LinAlgError(
            f"torch.linalg.solve: {_batch_prefix(a, i)}The solver failed because the input matrix is singular."
        ) from None
    return x[..., 0] if vector else (x if left else np.swapaxes(x, -1, -2))


@linalg_solve.meta_rule
def _(A, B, left=True):
    return _meta(_solve_shapes(A, B, left)[1], A)


@linalg_solve.grad
def _(grad, A, left, result, needs_input_grad):
    gB = api.linalg_solve(A.mT, grad, left=left)
    if not needs_input_grad[0]:
        return None, gB
    if left:
        vector = result.ndim == 1 or (result.ndim == A.ndim - 1 and tuple(result.shape) == tuple(A.shape[:-1]))
        gA = -(gB.unsqueeze(-1) * result.unsqueeze(-2)) if vector else -gB.matmul(result.mT)
    else:
        gA = -result.mT.matmul(gB)
    return gA, gB


@linalg_solve.sample_inputs
def _(rng):
    r = rng.standard_normal
    a = r((3, 3)) + 3 * np.eye(3)
    yield (a, r(3)), {}
    yield (a.T, r((3, 2))), {}
    yield (r((2, 2, 2)) + 2 * np.eye(2), r((2, 2))), {}
    yield (r((2, 2)) + 2 * np.eye(2), r((3, 2, 1))), {}
    yield (a, r((2, 3))), {"left": False}


# ---------------------------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------------------------
def _cholesky(name, a, upper):
    """Lower factor of the symmetric part of ``a`` (which is ``a`` itself for the symmetric inputs it is for)."""
    check_matrix(name, a, square=True)
    sym = hermitian_part(a)
    try:
        low = np.linalg.cholesky(sym)
    except np.linalg.LinAlgError:
        flat = sym.reshape((-1,) + sym.shape[-2:])
        for i, m in enumerate(flat):
            for k in range(1, m.shape[0] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    raise LinAlgError(
                        f"{name}: {_batch_prefix(sym, i)}The factorization could not be completed because the input "
                        f"is not positive-definite (the leading minor of order {k} is not positive-definite)."
                    ) from None
        raise
    return np.ascontiguousarray(np.conj(np.swapaxes(low, -1, -2))) if upper else low


def _cholesky_meta(a, upper=False):
    check_matrix("linalg.cholesky", a, square=True)
    return _meta(a.shape, a)


def _cholesky_grad(grad, result, upper):
    """Gradient with respect to the Hermitian input (the derivative of L = chol(herm(A))), written in the
    conjugate-Wirtinger convention (a Cholesky factor is not complex-analytic in A)."""
    L, gL = (adjoint(result), adjoint(grad)) if upper else (result, grad)
    m = adjoint(L).matmul(gL).tril()
    p = (m + adjoint(m.tril(-1))) * 0.5
    return api.linalg_solve(L, api.linalg_solve(adjoint(L), p), left=False)


def _spd_samples(rng):
    a = rng.standard_normal((3, 3))
    yield (a @ a.T + np.eye(3),), {}
    b = rng.standard_normal((2, 2, 2))
    yield (b @ b.transpose(0, 2, 1) + np.eye(2),), {}
    c = rng.standard_normal((2, 2))
    yield (c @ c.T + np.eye(2),), {"upper": True}


@op("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor", kind=LINALG, autocast="fp32", namespace="linalg",
    function="cholesky", method=False, grad_fn="LinalgCholeskyExBackward0")
def linalg_cholesky(self, upper=False):
    """Cholesky factor L (or U = L^T with ``upper=True``) of symmetric positive-definite matrices: A = L L^T."""
    return _cholesky("linalg.cholesky", self, upper)


@op("cholesky(Tensor self, bool upper=False) -> Tensor", kind=LINALG, out="cast", autocast="fp32")
def cholesky(self, upper=False):
    """Cholesky factor of symmetric positive-definite matrices (deprecated in PyTorch for ``linalg.cholesky``)."""
    return _cholesky("cholesky", self, upper)


for _o in (linalg_cholesky, cholesky):
    _o.meta_rule(_cholesky_meta)
    _o.wirtinger_grad(_cholesky_grad)
    _o.sample_inputs(_spd_samples)
