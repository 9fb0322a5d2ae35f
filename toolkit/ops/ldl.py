"""LDL^T factorization of symmetric matrices: linalg.ldl_factor, ldl_factor_ex, ldl_solve.

The factorization is LAPACK's unblocked Bunch-Kaufman (``sytf2``, lower triangle), so ``LD`` and the
pivots read as PyTorch's: ``LD`` holds L's multipliers below the diagonal and the 1x1 and 2x2 blocks of
D; a pivot ``k > 0`` is a 1x1 block with rows k swapped, two equal negative pivots ``-p`` a 2x2 block with
row p swapped. As in PyTorch, none of them is differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from ..return_types import structseq
from ._linalg_checks import _dtype, scalar_name
from .decomposition import check_float
from .products import _broadcast_or_raise
from .registry import LINALG, op

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _factor_check(A, name="torch.linalg.ldl_factor_ex"):
    if len(A.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    check_float(name, A)
    if _dtype(A).is_complex:  # the Bunch-Kaufman kernel below is written for real symmetric matrices
        raise NotImplementedError(f"{name}: complex input is not supported")
    batch = tuple(A.shape[:-2])
    return (TensorMeta(tuple(A.shape), _dtype(A), A.device),
            TensorMeta(batch + (A.shape[-1],), _dt.int32, A.device), TensorMeta(batch, _dt.int32, A.device))


def sytf2_lower(a: np.ndarray):
    """(LD, 1-based pivots, info) of one symmetric matrix, as LAPACK's dsytf2 with uplo='L'."""
    a = np.tril(np.array(a, dtype=np.float64))
    a = a + np.tril(a, -1).T  # work on the full symmetric matrix; only the lower triangle is kept
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(a[k + 1:, k])))
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            info = info or k + 1
            kp = k
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                rowmax = np.max(np.abs(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = max(rowmax, np.max(np.abs(a[imax + 1:, imax])))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # symmetric interchange of rows and columns kk and kp of the trailing matrix
                idx = np.arange(n)
                idx[[kk, kp]] = idx[[kp, kk]]
                sub = np.ix_(idx[k:], idx[k:])
                a[k:, k:] = a[sub]
            if kstep == 1:
                if k < n - 1:
                    d11 = 1.0 / a[k, k]
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= d11 * np.outer(x, x)
                    a[k + 1:, k] *= d11
                    a[k, k + 1:] = a[k + 1:, k]
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11 = a[k + 1, k + 1] / d21
                d22 = a[k, k] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                a[k + 2:, k + 2:] -= np.outer(a[k + 2:, k], wk) + np.outer(a[k + 2:, k + 1], wkp1)
                a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
                a[k, k + 2:], a[k + 1, k + 2:] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _factor(A):
    flat = A.reshape((-1,) + A.shape[-2:])
    ld = np.zeros(flat.shape, A.dtype)
    piv = np.zeros(flat.shape[:-1], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        out, p, inf = sytf2_lower(m)
        ld[i], piv[i], info[i] = out, p, inf
    return ld.reshape(A.shape), piv.reshape(A.shape[:-1]), info.reshape(A.shape[:-2])


@op("linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD, "
    "Tensor pivots, Tensor info)", kind=LINALG, namespace="linalg", function="ldl_factor_ex", method=False,
    differentiable=False)
def linalg_ldl_factor_ex(self, hermitian=False, check_errors=False):
    """Compact LDL^T factors (Bunch-Kaufman pivoting) of symmetric matrices, their pivots and ``info``."""
    _factor_check(self)
    ld, piv, info = _factor(self)
    if check_errors:
        _raise_failed(info, "torch.linalg.ldl_factor_ex")
    return ld, piv, info


def _raise_failed(info, name):
    if np.any(info):
        raise RuntimeError(f"{name}: the block diagonal matrix D is exactly singular (info = "
                           f"{int(info.reshape(-1)[np.nonzero(info.reshape(-1))[0][0]])})")


linalg_ldl_factor_ex.meta_rule(lambda self, hermitian=False, check_errors=False: _factor_check(self))
linalg_ldl_factor_ex.return_type = structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


@op("linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)", kind=LINALG,
    namespace="linalg", function="ldl_factor", method=False, differentiable=False)
def linalg_ldl_factor(self, hermitian=False):
    """Compact LDL^T factors (Bunch-Kaufman pivoting) of symmetric matrices and their pivots."""
    _factor_check(self, "torch.linalg.ldl_factor")
    ld, piv, info = _factor(self)
    _raise_failed(info, "torch.linalg.ldl_factor")
    return ld, piv


linalg_ldl_factor.meta_rule(lambda self, hermitian=False: _factor_check(self, "torch.linalg.ldl_factor")[:2])
linalg_ldl_factor.return_type = structseq("linalg_ldl_factor", ("LD", "pivots"))


def _sym_samples(rng):
    r = rng.standard_normal
    a = r((4, 4))
    yield (a + a.T,), {}
    yield (np.array([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]]),), {}
    b = r((2, 3, 3))
    yield (b + b.transpose(0, 2, 1),), {}
    c = r((3, 3))
    yield (c @ c.T + np.eye(3),), {"hermitian": True}


linalg_ldl_factor_ex.sample_inputs(_sym_samples)
linalg_ldl_factor.sample_inputs(_sym_samples)


# ---------------------------------------------------------------------------------------------
# ldl_solve
# ---------------------------------------------------------------------------------------------
def _rebuild(ld: np.ndarray, piv: np.ndarray) -> np.ndarray:
    """The symmetric matrix ``P1 L1 P2 L2 ... D ... L2^T P2^T L1^T P1^T`` that one factorization stands for."""
    n = ld.shape[0]
    blocks = []
    k = 0
    while k < n:
        step = 2 if piv[k] < 0 else 1
        blocks.append((k, step))
        k += step
    m = np.zeros((n, n))
    for k, step in blocks:
        m[k:k + step, k:k + step] = ld[k:k + step, k:k + step]
        if step == 2:
            m[k, k + 1] = ld[k + 1, k]
    for k, step in reversed(blocks):
        low = np.eye(n)
        low[k + step:, k:k + step] = ld[k + step:, k:k + step]
        m = low @ m @ low.T
        kk, kp = k + step - 1, abs(int(piv[k])) - 1
        if kp != kk:
            idx = np.arange(n)
            idx[[kk, kp]] = idx[[kp, kk]]
            m = m[np.ix_(idx, idx)]
    return m


def _solve_check(LD, pivots, B):
    name = "torch.linalg.ldl_solve"
    if len(LD.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor LD must have at least 2 dimensions.")
    if LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(f"{name}: LD must be batches of square matrices, but they are {LD.shape[-2]} by "
                           f"{LD.shape[-1]} matrices")
    if len(B.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if _dtype(B) is not _dtype(LD):
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {scalar_name(B)} and A of "
                           f"type {scalar_name(LD)} instead.")
    if _dtype(pivots) is not _dt.int32:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {scalar_name(pivots)}")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({LD.shape[-1]}x{LD.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    batch = _broadcast_or_raise(LD.shape[:-2], B.shape[:-2])
    return TensorMeta(tuple(batch) + tuple(B.shape[-2:]), _dtype(B), B.device)


@op("linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor", kind=LINALG,
    namespace="linalg", function="ldl_solve", method=False, differentiable=False)
def linalg_ldl_solve(LD, pivots, B, hermitian=False):
    """Solve ``A X = B`` given ``ldl_factor``'s LD and pivots of the symmetric ``A``."""
    meta = _solve_check(LD, pivots, B)
    batch = meta.shape[:-2]
    ld = np.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape((-1, pivots.shape[-1]))
    b = np.broadcast_to(B, meta.shape).reshape((-1,) + B.shape[-2:])
    out = np.empty(b.shape, B.dtype)
    for i in range(b.shape[0]):
        out[i] = np.linalg.solve(_rebuild(ld[i], piv[i]), b[i])
    return out.reshape(meta.shape)


linalg_ldl_solve.meta_rule(lambda LD, pivots, B, hermitian=False: _solve_check(LD, pivots, B))


@linalg_ldl_solve.sample_inputs
def _(rng):
    r = rng.standard_normal
    for (a,), _ in _sym_samples(rng):
        flat = a.reshape((-1,) + a.shape[-2:])
        lds, pivs = zip(*[sytf2_lower(m)[:2] for m in flat])
        ld = np.stack(lds).reshape(a.shape)
        piv = np.stack(pivs).reshape(a.shape[:-1])
        yield (ld, piv, r(a.shape[:-1] + (2,))), {}
