"""Triangular, Cholesky and LU solves on the device, the ``_ex`` variants, LU factors and Householder products.

As :mod:`.linalg`, one thread per matrix (per matrix and right-hand-side
column for the triangular solves) works on contiguous ``(B, m, n)`` copies in
the input's dtype:

- the triangular solves substitute forwards or backwards reading only the
  triangle (a unit diagonal when asked); ``X A = B`` is solved as
  ``A^T X^T = B^T``; ``cholesky_solve`` is two of them, ``cholesky_inverse``
  the solve of the identity;
- ``lu_factor`` is LAPACK's getrf for any (m, n): the first largest pivot of
  each column, 1-based int32 pivots, ``info`` the first zero pivot;
  ``lu``/``lu_unpack`` spread the compact factors out, and ``lu_solve`` solves
  with ``P L U`` rebuilt, as the CPU op does;
- ``inv_ex``, ``cholesky_ex`` and ``solve_ex`` run :mod:`.linalg`'s kernels and
  report each matrix's ``info`` instead of raising (unless ``check_errors``);
- ``householder_product`` applies the reflectors to the identity's columns
  last to first, as LAPACK's org2r (:mod:`.linalg_factor`'s reflection).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from . import runtime
from .array import CudaArray, copy_strided, fill, full
from .codegen import run_map, typed_scalar
from .gemm import matmul
from .linalg import _cholesky, _expand, _inv, _kernels, batched, identity, linalg_solve, swap_last
from .linalg_factor import _reflect
from .registration import meta_of, register_table


@functools.cache
def _k():

    @cuda.jit
    def trsm(a, x, nb, n, k, upper, unit):
        """``x <- T^-1 x`` per matrix and column: T the (upper or lower) triangle of ``a`` (B, n, n), x (B, n, k)."""
        for t in range(cuda.grid(1), nb * k, cuda.gridsize(1)):
            b = t // k
            c = t % k
            ao = b * n * n
            xo = b * n * k + c
            for s in range(n):
                i = n - 1 - s if upper else s
                v = x[xo + i * k]
                if upper:
                    for j in range(i + 1, n):
                        v -= a[ao + i * n + j] * x[xo + j * k]
                else:
                    for j in range(i):
                        v -= a[ao + i * n + j] * x[xo + j * k]
                x[xo + i * k] = v if unit else v / a[ao + i * n + i]

    @cuda.jit
    def getrf(a, piv, info, nb, m, n):
        """LAPACK's getrf in place on each (m, n) matrix of ``a``: pivots 1-based, ``info`` the first zero pivot."""
        kk = min(m, n)
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * m * n
            inf = 0
            for j in range(kk):
                p = j
                best = abs(a[o + j * n + j])
                for i in range(j + 1, m):
                    v = abs(a[o + i * n + j])
                    if v > best:
                        best = v
                        p = i
                piv[t * kk + j] = p + 1
                if p != j:
                    for c in range(n):
                        tmp = a[o + j * n + c]
                        a[o + j * n + c] = a[o + p * n + c]
                        a[o + p * n + c] = tmp
                d = a[o + j * n + j]
                if d == 0:
                    if inf == 0:
                        inf = j + 1
                    continue
                for i in range(j + 1, m):
                    f = a[o + i * n + j] / d
                    a[o + i * n + j] = f
                    for c in range(j + 1, n):
                        a[o + i * n + c] -= f * a[o + j * n + c]
            info[t] = inf

    @cuda.jit
    def unpack(lu, piv, p, low, up, perm, nb, m, n, want_p, want_lu):
        """P (B, m, m), L (B, m, k) and U (B, k, n) from compact factors (B, m, n) and pivots (B, k)."""
        kk = min(m, n)
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * m * n
            if want_lu:
                for i in range(m):
                    for j in range(kk):
                        low[t * m * kk + i * kk + j] = lu[o + i * n + j] if i > j else (1 if i == j else 0)
                for i in range(kk):
                    for j in range(n):
                        up[t * kk * n + i * n + j] = lu[o + i * n + j] if j >= i else 0
            if want_p:
                po = t * m
                for i in range(m):
                    perm[po + i] = i
                for i in range(kk):
                    s = piv[t * kk + i] - 1
                    tmp = perm[po + i]
                    perm[po + i] = perm[po + s]
                    perm[po + s] = tmp
                for i in range(m):
                    for j in range(m):
                        p[t * m * m + i * m + j] = 0
                for j in range(m):
                    p[t * m * m + perm[po + j] * m + j] = 1

    @cuda.jit
    def householder(a, tau, q, nb, m, n, k):
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * m * n
            identity(q, o, m, n)
            for j in range(k - 1, -1, -1):
                tj = tau[t * k + j]
                for c in range(n):
                    _reflect(a, o, n, m, j, tj, q, o, n, c)

    return dict(trsm=trsm, getrf=getrf, unpack=unpack, householder=householder)


# ----------------------------------------------------------------------------- triangular solves
def _solve_tri(A: CudaArray, B: CudaArray, upper: bool, left: bool, unit: bool) -> CudaArray:
    """``A X = B`` (``X A = B`` when not ``left``) for the triangle of ``A``, batches broadcast; contiguous."""
    if not left:
        return copy_strided(swap_last(_solve_tri(swap_last(A), swap_last(B), not upper, True, unit)))
    batch = tuple(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]))
    a, nb = batched(_expand(A, batch))
    x, _ = batched(_expand(B, batch))
    n, k = x.shape[-2:]
    if nb and n and k:
        runtime.launch(_k()["trsm"], nb * k, a.buf, x.buf, nb, n, k, bool(upper), bool(unit))
    return x.reshape(batch + (n, k))


def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    meta_of(R.get("linalg_solve_triangular"), [self, B, upper, left, unitriangular])
    return _solve_tri(self, B, upper, left, unitriangular)


def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    _, a_meta = meta_of(R.get("triangular_solve"), [self, A, upper, transpose, unitriangular])
    a = swap_last(A) if transpose else A
    x = _solve_tri(a, self, upper != transpose, True, unitriangular)
    return x, copy_strided(_expand(A, tuple(a_meta.shape[:-2])))


def _cholesky_solve(b: CudaArray, factor: CudaArray, upper: bool) -> CudaArray:
    low = swap_last(factor) if upper else factor
    y = _solve_tri(low, b, False, True, False)
    return _solve_tri(swap_last(low), y, True, True, False)


def cholesky_solve(self, input2, upper=False):
    meta_of(R.get("cholesky_solve"), [self, input2, upper])
    return _cholesky_solve(self, input2, upper)


def cholesky_inverse(self, upper=False):
    meta_of(R.get("cholesky_inverse"), [self, upper])
    n = self.shape[-1]
    eye = CudaArray.empty((n, n), self.dtype)
    fill(eye, 0)
    fill(eye.view_of((n,), ((n + 1) * eye.itemsize,), 0), 1)
    return _cholesky_solve(_expand(eye, self.shape[:-2]), self, upper).reshape(self.shape)


# ----------------------------------------------------------------------------- the _ex variants
def _flag_failed(out: CudaArray, info: CudaArray, value) -> None:
    """Every matrix of ``out`` (B, n, n) whose ``info`` (B,) is non-zero set to ``value``."""
    run_map("v if f == 0 else q", out, {"v": out, "f": info.reshape((info.size, 1, 1))},
            {"q": typed_scalar(value, out.dtype)})


def linalg_inv_ex(A, check_errors=False):
    meta_of(R.get("linalg_inv_ex"), [A, check_errors])
    if check_errors:
        _inv(A, "linalg.inv_ex")
    n = A.shape[-1]
    a, nb = batched(A)
    out = CudaArray.empty(a.shape, A.dtype)
    info = full((nb,), 0, np.int64)
    if nb and n:
        piv = CudaArray.empty((nb, n), np.int64)
        first = full((1,), nb, np.int64)
        runtime.launch(_kernels()[0], nb, info.buf, first.buf, nb, a.buf, out.buf, piv.buf, n, n, True)
        _flag_failed(out, info, np.nan)
    return out.reshape(A.shape), copy_strided(info, np.int32).reshape(A.shape[:-2])


def linalg_cholesky_ex(self, upper=False, check_errors=False):
    meta_of(R.get("linalg_cholesky_ex"), [self, upper, check_errors])
    if check_errors:
        _cholesky(self, upper, "linalg.cholesky")
    n = self.shape[-1]
    a, nb = batched(self)
    out = full(a.shape, 0, self.dtype)
    info = full((nb,), 0, np.int64)
    if nb and n:
        first = full((1,), nb, np.int64)
        runtime.launch(_kernels()[2], nb, info.buf, first.buf, nb, a.buf, out.buf, n, bool(upper))
        _flag_failed(out, info, 0)
    return out.reshape(self.shape), copy_strided(info, np.int32).reshape(self.shape[:-2])


def linalg_solve_ex(A, B, left=True, check_errors=False):
    meta = meta_of(R.get("linalg_solve_ex"), [A, B, left, check_errors])
    x = linalg_solve(A, B, left)
    return x, full(tuple(meta[1].shape), 0, np.int32)


# ----------------------------------------------------------------------------- LU
def _getrf(A: CudaArray) -> tuple:
    *batch, m, n = A.shape
    batch = tuple(batch)
    k = min(m, n)
    a, nb = batched(A)
    piv = full((nb, k), 0, np.int32)
    info = full((nb,), 0, np.int32)
    if nb and m and n:
        runtime.launch(_k()["getrf"], nb, a.buf, piv.buf, info.buf, nb, m, n)
    return a.reshape(A.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _raise_singular(name: str, info: CudaArray) -> None:
    host = info.get().reshape(-1)
    bad = np.nonzero(host)[0]
    if len(bad):
        i = int(bad[0])
        k = int(host[i])
        prefix = f"(Batch element {i}): " if info.ndim else ""
        raise RuntimeError(
            f"{name}: {prefix}U[{k},{k}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    meta_of(R.get("linalg_lu_factor_ex"), [A, pivot, check_errors])
    lu, piv, info = _getrf(A)
    if check_errors:
        _raise_singular("torch.linalg.lu_factor_ex", info)
    return lu, piv, info


def linalg_lu_factor(A, pivot=True):
    meta_of(R.get("linalg_lu_factor"), [A, pivot])
    lu, piv, info = _getrf(A)
    _raise_singular("torch.linalg.lu_factor", info)
    return lu, piv


def _unpack(lu: CudaArray, piv: CudaArray, want_p: bool = True, want_lu: bool = True) -> tuple:
    *batch, m, n = lu.shape
    batch = tuple(batch)
    k = min(m, n)
    a, nb = batched(lu)
    pv = copy_strided(piv).reshape((nb, k))
    p = CudaArray.empty((nb, m, m), lu.dtype)
    low = CudaArray.empty((nb, m, k), lu.dtype)
    up = CudaArray.empty((nb, k, n), lu.dtype)
    perm = CudaArray.empty((nb, max(m, 1)), np.int64)
    if nb:
        runtime.launch(_k()["unpack"], nb, a.buf, pv.buf, p.buf, low.buf, up.buf, perm.buf, nb, m, n, want_p,
                       want_lu)
    return p.reshape(batch + (m, m)), low.reshape(batch + (m, k)), up.reshape(batch + (k, n))


def linalg_lu(A, pivot=True):
    meta_of(R.get("linalg_lu"), [A, pivot])
    lu, piv, _ = _getrf(A)
    return _unpack(lu, piv)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    meta_of(R.get("lu_unpack"), [LU_data, LU_pivots, unpack_data, unpack_pivots])
    p, low, up = _unpack(LU_data, LU_pivots, unpack_pivots, unpack_data)
    empty = CudaArray.empty((0,), LU_data.dtype)
    return (p if unpack_pivots else empty), (low if unpack_data else empty), (up if unpack_data else empty)


def _lu_solve(LU, pivots, B, left, adjoint) -> CudaArray:
    p, low, up = _unpack(LU, pivots)
    a = matmul(p, matmul(low, up))
    if adjoint:
        a = swap_last(a)
    return linalg_solve(a, B, left)


def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    meta_of(R.get("linalg_lu_solve"), [LU, pivots, B, left, adjoint])
    return _lu_solve(LU, pivots, B, left, adjoint)


def lu_solve(self, LU_data, LU_pivots):
    meta_of(R.get("lu_solve"), [self, LU_data, LU_pivots])
    return _lu_solve(LU_data, LU_pivots, self, True, False)


# ----------------------------------------------------------------------------- householder_product
def _householder(name: str):
    def kernel(input, tau):
        meta_of(R.get(name), [input, tau])
        *batch, m, n = input.shape
        k = tau.shape[-1]
        a, nb = batched(input)
        t = copy_strided(tau).reshape((nb, k)) if k else full((nb, 1), 0, input.dtype)
        q = CudaArray.empty((nb, m, n), input.dtype)
        if nb and m and n:
            runtime.launch(_k()["householder"], nb, a.buf, t.buf, q.buf, nb, m, n, k)
        return q.reshape(input.shape)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    return register_table({
        "linalg_solve_triangular": linalg_solve_triangular, "triangular_solve": triangular_solve,
        "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse, "linalg_inv_ex": linalg_inv_ex,
        "linalg_cholesky_ex": linalg_cholesky_ex, "linalg_solve_ex": linalg_solve_ex,
        "linalg_lu_factor_ex": linalg_lu_factor_ex, "linalg_lu_factor": linalg_lu_factor, "linalg_lu": linalg_lu,
        "lu_unpack": lu_unpack, "linalg_lu_solve": linalg_lu_solve, "lu_solve": lu_solve,
        "linalg_householder_product": _householder("linalg_householder_product"),
        "orgqr": _householder("orgqr"),
    })
