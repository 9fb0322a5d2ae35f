"""LDL^T on the device: linalg.ldl_factor(_ex) and linalg.ldl_solve, as the CPU ops compute them.

One thread per matrix runs LAPACK's unblocked Bunch-Kaufman (``sytf2``, lower
triangle) step for step in float64 on a full symmetric copy, so ``LD``, the
pivots and ``info`` match the CPU's. ``ldl_solve`` rebuilds the symmetric
matrix the factors stand for (``P1 L1 ... D ... L1^T P1^T``) and solves it
with :mod:`.linalg`'s LU solve, as the CPU op does with numpy.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from . import runtime
from .array import CudaArray, broadcast_to, copy_strided
from .linalg import _expand, batched, linalg_solve
from .registration import meta_of, register_table

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


@cuda.jit(device=True)
def _swap_rows_cols(a, o, n, lo, p, q):
    """The symmetric interchange of rows and columns ``p`` and ``q`` of ``a[o:]`` (from row/column ``lo`` on)."""
    for j in range(lo, n):
        t = a[o + p * n + j]
        a[o + p * n + j] = a[o + q * n + j]
        a[o + q * n + j] = t
    for i in range(lo, n):
        t = a[o + i * n + p]
        a[o + i * n + p] = a[o + i * n + q]
        a[o + i * n + q] = t


@functools.cache
def _k():

    @cuda.jit
    def sytf2(x, a, w, ld, piv, info, nb, n, alpha):
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * n * n
            wo = t * 2 * n
            for i in range(n):
                for j in range(n):
                    a[o + i * n + j] = x[o + max(i, j) * n + min(i, j)]
            inf = 0
            k = 0
            while k < n:
                kstep = 1
                absakk = abs(a[o + k * n + k])
                imax = k
                colmax = 0.0
                if k < n - 1:
                    imax = k + 1
                    colmax = abs(a[o + (k + 1) * n + k])
                    for i in range(k + 2, n):
                        v = abs(a[o + i * n + k])
                        if v > colmax:
                            colmax = v
                            imax = i
                kp = k
                if max(absakk, colmax) == 0 or absakk != absakk:
                    if inf == 0:
                        inf = k + 1
                else:
                    if absakk < alpha * colmax:
                        rowmax = 0.0
                        for j in range(k, imax):
                            rowmax = max(rowmax, abs(a[o + imax * n + j]))
                        for i in range(imax + 1, n):
                            rowmax = max(rowmax, abs(a[o + i * n + imax]))
                        if absakk >= alpha * colmax * (colmax / rowmax):
                            kp = k
                        elif abs(a[o + imax * n + imax]) >= alpha * rowmax:
                            kp = imax
                        else:
                            kp = imax
                            kstep = 2
                    kk = k + kstep - 1
                    if kp != kk:
                        _swap_rows_cols(a, o, n, k, kk, kp)
                    if kstep == 1:
                        if k < n - 1:
                            d11 = 1.0 / a[o + k * n + k]
                            for i in range(k + 1, n):
                                for j in range(k + 1, n):
                                    a[o + i * n + j] -= d11 * a[o + i * n + k] * a[o + j * n + k]
                            for i in range(k + 1, n):
                                a[o + i * n + k] *= d11
                                a[o + k * n + i] = a[o + i * n + k]
                    elif k < n - 2:
                        d21 = a[o + (k + 1) * n + k]
                        d11 = a[o + (k + 1) * n + k + 1] / d21
                        d22 = a[o + k * n + k] / d21
                        tt = 1.0 / (d11 * d22 - 1.0)
                        d21 = tt / d21
                        for i in range(k + 2, n):
                            w[wo + i] = d21 * (d11 * a[o + i * n + k] - a[o + i * n + k + 1])
                            w[wo + n + i] = d21 * (d22 * a[o + i * n + k + 1] - a[o + i * n + k])
                        for i in range(k + 2, n):
                            for j in range(k + 2, n):
                                a[o + i * n + j] -= a[o + i * n + k] * w[wo + j] + a[o + i * n + k + 1] * w[wo + n + j]
                        for i in range(k + 2, n):
                            a[o + i * n + k] = w[wo + i]
                            a[o + i * n + k + 1] = w[wo + n + i]
                            a[o + k * n + i] = w[wo + i]
                            a[o + (k + 1) * n + i] = w[wo + n + i]
                if kstep == 1:
                    piv[t * n + k] = kp + 1
                else:
                    piv[t * n + k] = -(kp + 1)
                    piv[t * n + k + 1] = -(kp + 1)
                k += kstep
            info[t] = inf
            for i in range(n):
                for j in range(n):
                    ld[o + i * n + j] = a[o + i * n + j] if j <= i else 0

    @cuda.jit
    def rebuild(ld, piv, m, starts, nb, n):
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * n * n
            po = t * n
            blocks = 0
            k = 0
            while k < n:
                starts[po + blocks] = k
                blocks += 1
                k += 2 if piv[po + k] < 0 else 1
            for i in range(n * n):
                m[o + i] = 0
            for b in range(blocks):
                k = starts[po + b]
                step = 2 if piv[po + k] < 0 else 1
                for i in range(k, k + step):
                    for j in range(k, k + step):
                        m[o + i * n + j] = ld[o + i * n + j]
                if step == 2:
                    m[o + k * n + k + 1] = ld[o + (k + 1) * n + k]
            for b in range(blocks - 1, -1, -1):
                k = starts[po + b]
                step = 2 if piv[po + k] < 0 else 1
                for i in range(k + step, n):
                    for j in range(n):
                        s = 0.0
                        for c in range(k, k + step):
                            s += ld[o + i * n + c] * m[o + c * n + j]
                        m[o + i * n + j] += s
                for j in range(k + step, n):
                    for i in range(n):
                        s = 0.0
                        for c in range(k, k + step):
                            s += m[o + i * n + c] * ld[o + j * n + c]
                        m[o + i * n + j] += s
                kk = k + step - 1
                kp = abs(piv[po + k]) - 1
                if kp != kk:
                    _swap_rows_cols(m, o, n, 0, kk, kp)

    return dict(sytf2=sytf2, rebuild=rebuild)


def _factor(A: CudaArray) -> tuple:
    n = A.shape[-1]
    x, nb = batched(copy_strided(A, np.float64))
    a = CudaArray.empty(x.shape, np.float64)
    w = CudaArray.empty((nb, 2, max(n, 1)), np.float64)
    ld = CudaArray.empty(x.shape, np.float64)
    piv = CudaArray.empty((nb, n), np.int32)
    info = CudaArray.empty((nb,), np.int32)
    if nb:
        runtime.launch(_k()["sytf2"], nb, x.buf, a.buf, w.buf, ld.buf, piv.buf, info.buf, nb, n, _ALPHA)
    return (copy_strided(ld, A.dtype).reshape(A.shape), piv.reshape(A.shape[:-1]), info.reshape(A.shape[:-2]))


def _raise_failed(info: CudaArray, name: str) -> None:
    host = info.get().reshape(-1)
    bad = np.nonzero(host)[0]
    if len(bad):
        raise RuntimeError(f"{name}: the block diagonal matrix D is exactly singular (info = {int(host[bad[0]])})")


def linalg_ldl_factor_ex(self, hermitian=False, check_errors=False):
    meta_of(R.get("linalg_ldl_factor_ex"), [self, hermitian, check_errors])
    ld, piv, info = _factor(self)
    if check_errors:
        _raise_failed(info, "torch.linalg.ldl_factor_ex")
    return ld, piv, info


def linalg_ldl_factor(self, hermitian=False):
    meta_of(R.get("linalg_ldl_factor"), [self, hermitian])
    ld, piv, info = _factor(self)
    _raise_failed(info, "torch.linalg.ldl_factor")
    return ld, piv


def linalg_ldl_solve(LD, pivots, B, hermitian=False):
    meta = meta_of(R.get("linalg_ldl_solve"), [LD, pivots, B, hermitian])
    batch = tuple(meta.shape[:-2])
    n = LD.shape[-1]
    ld, nb = batched(copy_strided(_expand(LD, batch), np.float64))
    piv = copy_strided(broadcast_to(pivots, batch + (n,))).reshape((nb, n))
    m = CudaArray.empty(ld.shape, np.float64)
    starts = CudaArray.empty((nb, max(n, 1)), np.int64)
    if nb and n:
        runtime.launch(_k()["rebuild"], nb, ld.buf, piv.buf, m.buf, starts.buf, nb, n)
    x = linalg_solve(m.reshape(batch + (n, n)), copy_strided(B, np.float64))
    return copy_strided(x, B.dtype).reshape(tuple(meta.shape))


def register() -> list:
    return register_table({"linalg_ldl_factor_ex": linalg_ldl_factor_ex, "linalg_ldl_factor": linalg_ldl_factor,
                           "linalg_ldl_solve": linalg_ldl_solve})
