"""LU factorization with partial pivoting and what uses it: linalg.lu_factor(_ex), linalg.lu, lu_unpack,
linalg.lu_solve, lu_solve.

The factorization is LAPACK's getrf, written with numpy and vectorized over the batch: pivots are 1-based
int32 row swaps applied in order, ``info`` the 1-based index of the first zero pivot. Derivatives are
PyTorch's (square matrices), written with registered ops.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype, scalar_name
from .decomposition import adjoint as _adj
from .products import _broadcast_or_raise
from .registry import LINALG, op


def _meta(shape, like, dtype=None):
    return TensorMeta(tuple(shape), dtype or _dtype(like), like.device)


def _factor_check(A, pivot, name="torch.linalg.lu_factor"):
    if len(A.shape) < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not (_dtype(A).is_floating_point or _dtype(A).is_complex):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{scalar_name(A)}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    *batch, m, n = A.shape
    return tuple(batch), m, n, min(m, n)


def _pivot_size(x: np.ndarray) -> np.ndarray:
    """The size LAPACK's pivot search compares: ``|x|``, or ``|re| + |im|`` for complex entries."""
    return np.abs(x.real) + np.abs(x.imag) if x.dtype.kind == "c" else np.abs(x)


def getrf(a: np.ndarray):
    """(LU, pivots, info) of a batch (..., m, n), as LAPACK's getrf computes them."""
    *batch, m, n = a.shape
    k = min(m, n)
    lu = np.array(a).reshape((-1, m, n))
    b = lu.shape[0]
    piv = np.zeros((b, k), np.int32)
    info = np.zeros(b, np.int32)
    rows = np.arange(b)
    for j in range(k):
        p = j + np.argmax(_pivot_size(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = top
        pivot = lu[:, j, j]
        zero = pivot == 0
        info[zero & (info == 0)] = j + 1
        lu[:, j + 1:, j] /= np.where(zero, 1, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), piv.reshape(tuple(batch) + (k,)), info.reshape(tuple(batch))


def _permutation(piv: np.ndarray, m: int, dtype) -> np.ndarray:
    """P with ``A = P L U`` from getrf's row swaps."""
    flat = piv.reshape((-1, piv.shape[-1]))
    out = np.zeros((flat.shape[0], m, m), dtype)
    for b, swaps in enumerate(flat):
        perm = np.arange(m)
        for i, s in enumerate(swaps):
            perm[[i, s - 1]] = perm[[s - 1, i]]
        out[b, perm, np.arange(m)] = 1
    return out.reshape(piv.shape[:-1] + (m, m))


def _unpack(lu, piv):
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    up = np.triu(lu[..., :k, :])
    return _permutation(piv, m, lu.dtype), low, up


def _lu_grad(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward for square A = P L U: gA = P L^-T [(L^T gL).tril(-1) + (gU U^T).triu()] U^-T."""
    if L.shape[-1] != U.shape[-1] or L.shape[-2] != L.shape[-1]:
        raise NotImplementedError("the derivative of the LU factorization is implemented for square matrices")
    phi = None
    if gL is not None:
        phi = L.mT.matmul(gL).tril(-1)
    if gU is not None:
        t = gU.matmul(U.mT).triu()
        phi = t if phi is None else phi + t
    x = api.linalg_solve_triangular(U.mT, phi, upper=False, left=False)
    x = api.linalg_solve_triangular(L.mT, x, upper=True, unitriangular=True)
    return P.matmul(x)


def _lu_factor_grad(gLU, LU, pivots):
    P, L, U = api.lu_unpack(LU, pivots)
    return _lu_grad(gLU.tril(-1), gLU.triu(), P, L, U)


def _raise_singular(name, info):
    flat = info.reshape(-1)
    bad = np.nonzero(flat)[0]
    if len(bad):
        i = int(bad[0])
        prefix = f"(Batch element {i}): " if info.ndim else ""
        k = int(flat[i])
        raise RuntimeError(
            f"{name}: {prefix}U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. If "
            "you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)")


def _square_samples(rng):
    r = rng.standard_normal
    yield (r((3, 3)),), {}
    yield (r((2, 2, 2)),), {}


# ---------------------------------------------------------------------------------------------
# lu_factor, lu_factor_ex, lu
# ---------------------------------------------------------------------------------------------
@op("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor pivots, "
    "Tensor info)", kind=LINALG, namespace="linalg", function="lu_factor_ex", method=False)
def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    """Compact LU factors (L below the diagonal, U on and above), pivots and ``info`` (0, or the first zero
    pivot, 1-based)."""
    _factor_check(A, pivot)
    lu, piv, info = getrf(A)
    if check_errors:
        _raise_singular("torch.linalg.lu_factor_ex", info)
    return lu, piv, info


@linalg_lu_factor_ex.meta_rule
def _(A, pivot=True, check_errors=False):
    batch, m, n, k = _factor_check(A, pivot)
    return _meta(A.shape, A), _meta(batch + (k,), A, _dt.int32), _meta(batch, A, _dt.int32)


@linalg_lu_factor_ex.grad
def _(grad, result):
    return _lu_factor_grad(grad[0], result[0], result[1])


linalg_lu_factor_ex.return_type = structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu_factor_ex.sample_inputs(_square_samples)


@op("linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)", kind=LINALG,
    namespace="linalg", function="lu_factor", method=False, grad_fn="LinalgLuFactorExBackward0")
def linalg_lu_factor(A, pivot=True):
    """Compact LU factors and pivots of ``A = P L U``; a zero pivot is an error (``lu_factor_ex`` reports it)."""
    _factor_check(A, pivot)
    lu, piv, info = getrf(A)
    _raise_singular("torch.linalg.lu_factor", info)
    return lu, piv


@linalg_lu_factor.meta_rule
def _(A, pivot=True):
    batch, m, n, k = _factor_check(A, pivot)
    return _meta(A.shape, A), _meta(batch + (k,), A, _dt.int32)


@linalg_lu_factor.grad
def _(grad, result):
    return _lu_factor_grad(grad[0], result[0], result[1])


linalg_lu_factor.return_type = structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor.sample_inputs(_square_samples)


def _lu_shapes(A, pivot):
    batch, m, n, k = _factor_check(A, pivot, "torch.linalg.lu")
    return _meta(batch + (m, m), A), _meta(batch + (m, k), A), _meta(batch + (k, n), A)


@op("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)", kind=LINALG,
    namespace="linalg", function="lu", method=False)
def linalg_lu(A, pivot=True):
    """``A = P L U``: a permutation, unit lower triangular L (m, k) and upper triangular U (k, n)."""
    _lu_shapes(A, pivot)
    lu, piv, _ = getrf(A)
    return _unpack(lu, piv)


linalg_lu.meta_rule(_lu_shapes)
linalg_lu.return_type = structseq("linalg_lu", ("P", "L", "U"))


@linalg_lu.grad
def _(grad, result):
    _, gL, gU = grad
    P, L, U = result
    return _lu_grad(gL, gU, P, L, U)


@linalg_lu.sample_inputs
def _(rng):
    yield from _square_samples(rng)


# ---------------------------------------------------------------------------------------------
# lu_unpack
# ---------------------------------------------------------------------------------------------
def _unpack_check(LU, pivots, unpack_data, unpack_pivots):
    if len(LU.shape) < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU.shape)} instead")
    if _dtype(pivots) is not _dt.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                           "dtype. Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    *batch, m, n = LU.shape
    k = min(m, n)
    batch = tuple(batch)
    p = _meta(batch + (m, m) if unpack_pivots else (0,), LU)
    low = _meta(batch + (m, k) if unpack_data else (0,), LU)
    up = _meta(batch + (k, n) if unpack_data else (0,), LU)
    return p, low, up


@op("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> "
    "(Tensor P, Tensor L, Tensor U)", kind=LINALG, method=False, nondiff_args=("LU_pivots",))
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """P, L, U from ``lu_factor``'s compact factors and pivots; parts not asked for are empty."""
    _unpack_check(LU_data, LU_pivots, unpack_data, unpack_pivots)
    P, L, U = _unpack(LU_data, LU_pivots)
    empty = np.zeros((0,), LU_data.dtype)
    return (P if unpack_pivots else empty), (L if unpack_data else empty), (U if unpack_data else empty)


lu_unpack.meta_rule(_unpack_check)
lu_unpack.return_type = structseq("lu_unpack", ("P", "L", "U"))


@lu_unpack.grad
def _(grad, LU_data_shape, unpack_data):
    _, gL, gU = grad
    m, n = LU_data_shape[-2:]
    k = min(m, n)
    if not unpack_data or (gL is None and gU is None):
        return None
    parts = []
    if gL is not None:
        g = gL.tril(-1)
        if n > k:
            g = api.cat([g, api.zeros(tuple(LU_data_shape[:-1]) + (n - k,), dtype=g.dtype)], -1)
        parts.append(g)
    if gU is not None:
        g = gU.triu()
        if m > k:
            g = api.cat([g, api.zeros(tuple(LU_data_shape[:-2]) + (m - k, n), dtype=g.dtype)], -2)
        parts.append(g)
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


@lu_unpack.sample_inputs
def _(rng):
    r = rng.standard_normal
    for shape in ((3, 3), (3, 2), (2, 3), (2, 2, 2)):
        lu, piv, _ = getrf(r(shape))
        yield (lu, piv), {}
    lu, piv, _ = getrf(r((3, 3)))
    yield (lu, piv, False), {}
    yield (lu, piv), {"unpack_pivots": False}


# ---------------------------------------------------------------------------------------------
# linalg.lu_solve, lu_solve
# ---------------------------------------------------------------------------------------------
def _lu_solve_check(LU, pivots, B, left, name="linalg.lu_solve"):
    if len(LU.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor LU must have at least 2 dimensions.")
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"{name}: LU must be batches of square matrices, but they are {LU.shape[-2]} by "
                           f"{LU.shape[-1]} matrices")
    if len(B.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if _dtype(LU) is not _dtype(B):
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of type "
                           f"{scalar_name(LU)} and B of type {scalar_name(B)} instead")
    batch = _broadcast_or_raise(LU.shape[:-2], B.shape[:-2])
    return _meta(tuple(batch) + tuple(B.shape[-2:]), B)


def _lu_solve(LU, pivots, B, left, adjoint):
    P, L, U = _unpack(LU, pivots)
    A = np.matmul(P, np.matmul(L, U))
    if adjoint:
        A = np.conj(np.swapaxes(A, -1, -2))
    if not left:
        return np.swapaxes(_lu_solve_plain(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)
    return _lu_solve_plain(A, B)


def _lu_solve_plain(A, B):
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    a = np.broadcast_to(A, batch + A.shape[-2:])
    b = np.broadcast_to(B, batch + B.shape[-2:])
    if a.size == 0 or b.size == 0:
        return np.zeros(b.shape, B.dtype)
    return np.linalg.solve(a, b).astype(B.dtype, copy=False)


def _lu_solve_grad(grad, LU, pivots, B_shape, left, adjoint, X, needs_lu, needs_b):
    """The conjugate-Wirtinger gradient (``adjoint`` conjugates A, so the solve is not complex-analytic in LU)."""
    gB = api.linalg_lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)
    gLU = None
    if needs_lu:
        if left:
            gA = -X.matmul(_adj(gB)) if adjoint else -gB.matmul(_adj(X))
        else:
            gA = -_adj(gB).matmul(X) if adjoint else -_adj(X).matmul(gB)
        P, L, U = api.lu_unpack(LU, pivots)
        pga = P.mT.matmul(gA)
        gLU = (pga.matmul(_adj(U)).tril(-1) + _adj(L).matmul(pga).triu()).sum_to_size(tuple(LU.shape))
    return gLU, (gB.sum_to_size(tuple(B_shape)) if needs_b else None)


@op("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor",
    kind=LINALG, namespace="linalg", function="lu_solve", method=False, nondiff_args=("pivots",))
def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    """Solve ``A X = B`` (``X A = B`` with ``left=False``; ``A^H`` with ``adjoint``) from ``lu_factor``'s
    output."""
    _lu_solve_check(LU, pivots, B, left)
    return _lu_solve(LU, pivots, B, left, adjoint)


linalg_lu_solve.meta_rule(lambda LU, pivots, B, left=True, adjoint=False: _lu_solve_check(LU, pivots, B, left))


@linalg_lu_solve.wirtinger_grad
def _(grad, LU, pivots, B_shape, left, adjoint, result, needs_input_grad):
    # needs_input_grad has one flag per differentiable argument: LU and B (pivots are integers)
    return _lu_solve_grad(grad, LU, pivots, B_shape, left, adjoint, result, needs_input_grad[0],
                          needs_input_grad[1])


def _lu_solve_samples(rng):
    r = rng.standard_normal
    lu, piv, _ = getrf(r((3, 3)))
    yield (lu, piv, r((3, 2))), {}
    yield (lu, piv, r((2, 3))), {"left": False}
    yield (lu, piv, r((3, 1))), {"adjoint": True}
    yield (lu, piv, r((2, 3))), {"left": False, "adjoint": True}
    lu2, piv2, _ = getrf(r((2, 2, 2)))
    yield (lu2, piv2, r((2, 1))), {}


linalg_lu_solve.sample_inputs(_lu_solve_samples)


@op("lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor", kind=LINALG, autocast="fp32",
    nondiff_args=("LU_pivots",), grad_fn="LinalgLuSolveBackward0")
def lu_solve(self, LU_data, LU_pivots):
    """Solve ``A X = b`` from ``lu_factor``'s output (deprecated in PyTorch for ``linalg.lu_solve``)."""
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
        "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
        "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=4)
    _lu_solve_check(LU_data, LU_pivots, self, True, "linalg.lu_solve")
    return _lu_solve(LU_data, LU_pivots, self, True, False)


lu_solve.meta_rule(lambda self, LU_data, LU_pivots: _lu_solve_check(LU_data, LU_pivots, self, True))


@lu_solve.wirtinger_grad
def _(grad, self_shape, LU_data, LU_pivots, result, needs_input_grad):
    gLU, gB = _lu_solve_grad(grad, LU_data, LU_pivots, self_shape, True, False, result, needs_input_grad[1],
                             needs_input_grad[0])
    return gB, gLU


@lu_solve.sample_inputs
def _(rng):
    for args, kwargs in _lu_solve_samples(rng):
        if not kwargs:
            lu, piv, b = args
            yield (b, lu, piv), {}
