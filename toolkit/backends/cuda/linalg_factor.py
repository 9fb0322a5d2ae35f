"""Factorizations on the device: qr (Householder), eigh/eigvalsh and svd/svdvals (Jacobi, :mod:`.jacobi`).

One thread per matrix of the batch. QR follows LAPACK's geqr2/org2r step for
step (``beta = -sign(alpha) * ||x||``, no reflection where ``x`` is zero), so
``Q`` and ``R`` carry LAPACK's signs and match the CPU kernel. Eigenvalues
and singular values are unique and match too. Eigenvectors and singular
vectors are unique only up to sign (and, for repeated values, a rotation):
the Jacobi iterations may choose other signs than LAPACK, as PyTorch's own
CPU and CUDA results may differ; ``A = U diag(S) Vh``, ``A V = V diag(w)``
and the orthonormality of the vectors hold as on the CPU.
"""

from __future__ import annotations

import functools
import math

from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from . import runtime
from .array import CudaArray, copy_strided, full
from .jacobi import eigh_parts, svd_parts
from .linalg import batched, identity, swap_last
from .registration import checked, meta_of, register_table


@cuda.jit(device=True)
def _reflect(a, o, n, m, j, tau, x, xo, ld, c):
    """Column ``c`` of the matrix at ``x[xo:]`` (row length ``ld``, ``m`` rows) times ``I - tau v v^T``, where
    ``v`` is reflector ``j`` (1 at row j, then column j of ``a[o:]`` (row length ``n``) below the diagonal)."""
    w = x[xo + j * ld + c]
    for i in range(j + 1, m):
        w += a[o + i * n + j] * x[xo + i * ld + c]
    w *= tau
    x[xo + j * ld + c] -= w
    for i in range(j + 1, m):
        x[xo + i * ld + c] -= w * a[o + i * n + j]


@functools.cache
def _qr_kernel():
    @cuda.jit
    def k(a, q, r, tau, nb, m, n, kq, rows, want_q):
        """``a`` (B, m, n) is overwritten by the reflectors; ``q`` gets (B, m, kq), ``r`` (B, rows, n)."""
        kr = min(m, n)
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * m * n
            to = t * max(kr, 1)
            for j in range(kr):
                alpha = a[o + j * n + j]
                xn = 0.0
                for i in range(j + 1, m):
                    xn += a[o + i * n + j] * a[o + i * n + j]
                tau[to + j] = 0
                if xn == 0:
                    continue
                beta = -math.copysign(math.sqrt(alpha * alpha + xn), alpha)
                tj = (beta - alpha) / beta
                tau[to + j] = tj
                scal = 1.0 / (alpha - beta)
                for i in range(j + 1, m):
                    a[o + i * n + j] *= scal
                a[o + j * n + j] = beta
                for c in range(j + 1, n):
                    _reflect(a, o, n, m, j, tj, a, o, n, c)
            ro = t * rows * n
            for i in range(rows):
                for c in range(n):
                    r[ro + i * n + c] = a[o + i * n + c] if c >= i else 0
            if want_q:
                qo = t * m * kq
                identity(q, qo, m, kq)
                for j in range(kr - 1, -1, -1):
                    tj = tau[to + j]
                    if tj == 0:
                        continue
                    for c in range(kq):
                        _reflect(a, o, n, m, j, tj, q, qo, kq, c)

    return k


def _qr(A: CudaArray, mode: str) -> tuple:
    *batch, m, n = A.shape
    batch = tuple(batch)
    kr = min(m, n)
    kq = m if mode == "complete" else kr
    a, nb = batched(A)
    q = CudaArray.empty((nb, m, kq), A.dtype)
    r = CudaArray.empty((nb, kq, n), A.dtype)
    tau = CudaArray.empty((nb, max(kr, 1)), A.dtype)
    runtime.launch(_qr_kernel(), nb, a.buf, q.buf, r.buf, tau.buf, nb, m, n, kq, kq, mode != "r")
    r = r.reshape(batch + (kq, n))
    return (CudaArray.empty((0,), A.dtype), r) if mode == "r" else (q.reshape(batch + (m, kq)), r)


# ----------------------------------------------------------------------------- eigh, svd (Jacobi)
def _svd_factors(A: CudaArray, full: bool) -> tuple:
    """(U, S, V) of ``A`` as contiguous arrays: ``A = U diag(S) V^T``, U ``(..., m, m or k)`` and V
    ``(..., n, n or k)`` (the square ones when ``full``)."""
    q, s, v, wide = svd_parts(A, True, full)
    return (v, s, q) if wide else (q, s, v)


def linalg_svd(A, full_matrices=True, driver=None):
    meta_of(R.get("linalg_svd"), [A, full_matrices, driver])
    u, s, v = _svd_factors(A, full_matrices)
    return u, s, copy_strided(swap_last(v))


def svd(self, some=True, compute_uv=True):
    """``torch.svd``: V rather than Vh; without ``compute_uv``, U and V are zeros of the full shapes."""
    meta_of(R.get("svd"), [self, some, compute_uv])
    if not compute_uv:
        *batch, m, n = self.shape
        batch = tuple(batch)
        s = svd_parts(self, False, None)[1]
        return full(batch + (m, m), 0, self.dtype), s, full(batch + (n, n), 0, self.dtype)
    return _svd_factors(self, not some)


def register() -> list:
    return register_table({
        "linalg_qr": checked("linalg_qr", _qr),
        "qr": checked("qr", lambda a, some: _qr(a, "reduced" if some else "complete")),
        "linalg_svd": linalg_svd, "svd": svd,
        "linalg_svdvals": checked("linalg_svdvals", lambda a, driver: svd_parts(a, False, None)[1]),
        "linalg_eigh": checked("linalg_eigh", lambda a, uplo: eigh_parts(a)),
        "linalg_eigvalsh": checked("linalg_eigvalsh", lambda a, uplo: eigh_parts(a)[0]),
    })
