"""Small dense linear algebra on the device: inverse, det, slogdet, logdet, solve, cholesky.

One thread per matrix of the batch, each working in place on its own matrix
of a contiguous ``(B, n, n)`` copy: LU with partial pivoting (LAPACK getf2's
order: the first largest pivot, row swaps recorded as in ``ipiv``) and
Cholesky of the symmetric part, as the CPU kernels factor. Arithmetic runs in
the input's dtype, so float64 accumulates in float64. Failures (a zero pivot,
a non-positive leading minor) are flagged per matrix; the first failing
batch element is found with an atomic min and read back only to raise the
CPU kernels' ``LinAlgError``, as PyTorch checks LAPACK's ``info``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from ...ops.decomposition import LinAlgError
from . import runtime
from .array import CudaArray, copy_strided, fill
from .registration import checked, meta_of, register_table


@cuda.jit(device=True)
def swap_lines(x, o, count, step, p, q):
    """The ``count`` pairs ``x[o + i*step + p]``, ``x[o + i*step + q]`` swapped: two columns of a row-major
    matrix (``step`` its row length, p and q the column numbers) or two rows (``step`` 1, p and q the rows'
    offsets)."""
    for i in range(count):
        t = x[o + i * step + p]
        x[o + i * step + p] = x[o + i * step + q]
        x[o + i * step + q] = t


@cuda.jit(device=True)
def identity(x, o, rows, cols):
    """The (rows, cols) row-major matrix at ``x[o:]`` set to the identity's first rows and columns."""
    for i in range(rows):
        for c in range(cols):
            x[o + i * cols + c] = 1 if i == c else 0


@cuda.jit(device=True)
def _lu(a, o, n, piv, po):
    """LU of the n x n matrix at ``a[o:]`` in place; returns (first zero pivot, 1-based, or 0; row swaps)."""
    info = 0
    swaps = 0
    for j in range(n):
        p = j
        best = abs(a[o + j * n + j])
        for i in range(j + 1, n):
            v = abs(a[o + i * n + j])
            if v > best:
                best = v
                p = i
        piv[po + j] = p
        if best == 0:
            if info == 0:
                info = j + 1
            continue
        if p != j:
            swaps += 1
            swap_lines(a, o, n, 1, j * n, p * n)
        d = a[o + j * n + j]
        for i in range(j + 1, n):
            f = a[o + i * n + j] / d
            a[o + i * n + j] = f
            for c in range(j + 1, n):
                a[o + i * n + c] -= f * a[o + j * n + c]
    return info, swaps


@cuda.jit(device=True)
def _lu_solve(a, o, n, piv, po, b, bo, k):
    """Solve with the factors of :func:`_lu` for the n x k right-hand side at ``b[bo:]``, in place."""
    for j in range(n):
        p = piv[po + j]
        if p != j:
            swap_lines(b, bo, k, 1, j * k, p * k)
    for c in range(k):
        for i in range(n):
            s = b[bo + i * k + c]
            for t in range(i):
                s -= a[o + i * n + t] * b[bo + t * k + c]
            b[bo + i * k + c] = s
        for i in range(n - 1, -1, -1):
            s = b[bo + i * k + c]
            for t in range(i + 1, n):
                s -= a[o + i * n + t] * b[bo + t * k + c]
            b[bo + i * k + c] = s / a[o + i * n + i]


@functools.cache
def _kernels():
    @cuda.jit
    def solve(info, first, nb, a, b, piv, n, k, eye):
        """``b <- a^-1 b`` per matrix (``b`` set to the identity first when ``eye``)."""
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            bo = t * n * k
            if eye:
                identity(b, bo, n, k)
            inf, _ = _lu(a, t * n * n, n, piv, t * n)
            info[t] = inf
            if inf:
                cuda.atomic.min(first, 0, t)
            else:
                _lu_solve(a, t * n * n, n, piv, t * n, b, bo, k)

    @cuda.jit
    def det(a, piv, out0, out1, nb, n, kind):
        """kind 0: det; 1: (sign, log|det|); 2: logdet (nan for a negative determinant)."""
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * n * n
            _, swaps = _lu(a, o, n, piv, t * n)
            sign = -1.0 if swaps % 2 else 1.0
            if kind == 0:
                d = sign
                for i in range(n):
                    d *= a[o + i * n + i]
                out0[t] = d
            else:
                logabs = 0.0
                for i in range(n):
                    d = a[o + i * n + i]
                    if d == 0:
                        sign = 0.0
                        logabs = -math.inf
                        break
                    if d < 0:
                        sign = -sign
                    logabs += math.log(abs(d))
                if kind == 1:
                    out0[t] = sign
                    out1[t] = logabs
                else:
                    out0[t] = math.nan if sign < 0 else logabs

    @cuda.jit
    def cholesky(info, first, nb, a, out, n, upper):
        """Lower factor of the symmetric part (transposed when ``upper``); ``info``: the failing minor's order."""
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * n * n
            inf = 0
            for j in range(n):
                s = (a[o + j * n + j] + a[o + j * n + j]) * 0.5
                for q in range(j):
                    s -= out[o + j * n + q] * out[o + j * n + q]
                if not s > 0:
                    inf = j + 1
                    break
                d = math.sqrt(s)
                out[o + j * n + j] = d
                for i in range(j + 1, n):
                    s = (a[o + i * n + j] + a[o + j * n + i]) * 0.5
                    for q in range(j):
                        s -= out[o + i * n + q] * out[o + j * n + q]
                    out[o + i * n + j] = s / d
            info[t] = inf
            if inf:
                cuda.atomic.min(first, 0, t)
            for i in range(n):
                for j in range(i + 1, n):
                    if upper:
                        out[o + i * n + j] = out[o + j * n + i]
                        out[o + j * n + i] = 0
                    else:
                        out[o + i * n + j] = 0

    return solve, det, cholesky


def batched(a: CudaArray) -> tuple:
    """A contiguous ``(B, m, n)`` copy of ``a`` (``(..., m, n)``) and ``B``."""
    nb = math.prod(a.shape[:-2])
    return copy_strided(a).reshape((nb,) + a.shape[-2:]), nb


def swap_last(x: CudaArray) -> CudaArray:
    """The view of ``x`` with its last two dims swapped (``x.mT``)."""
    nd = x.ndim
    return x.transpose(list(range(nd - 2)) + [nd - 1, nd - 2])


def _first_failure(kernel, nb: int, *args):
    """Runs ``kernel(info, first, nb, *args)``, one thread per matrix, which flags a failing matrix's ``info``
    and finds the first failing one with an atomic min into ``first``; (batch index, info) of that matrix, or
    None. One scalar is read back, two when a matrix failed."""
    info = CudaArray.empty((nb,), np.int64)
    first = fill(CudaArray.empty((1,), np.int64), nb)
    runtime.launch(kernel, nb, info.buf, first.buf, nb, *args)
    i = int(first.item())
    if i >= nb:
        return None
    return i, int(info.view_of((1,), (8,), info.offset + i).item())


def _prefix(ndim: int, i: int) -> str:
    return f"(Batch element {i}): " if ndim > 2 else ""


def _inv(A: CudaArray, name: str) -> CudaArray:
    n = A.shape[-1]
    a, nb = batched(A)
    out = CudaArray.empty(a.shape, A.dtype)
    if nb and n:
        piv = CudaArray.empty((nb, n), np.int64)
        bad = _first_failure(_kernels()[0], nb, a.buf, out.buf, piv.buf, n, n, True)
        if bad is not None:
            raise LinAlgError(
                f"{name}: {_prefix(A.ndim, bad[0])}The diagonal element {bad[1]} is zero, the inversion could not be "
                "completed because the input matrix is singular.")
    return out.reshape(A.shape)


def _det(A: CudaArray, kind: int):
    """kind 0: det; 1: (sign, log|det|); 2: logdet."""
    n = A.shape[-1]
    a, nb = batched(A)
    out0 = CudaArray.empty((nb,), A.dtype)
    out1 = CudaArray.empty((nb,), A.dtype)
    piv = CudaArray.empty((nb, max(n, 1)), np.int64)
    runtime.launch(_kernels()[1], nb, a.buf, piv.buf, out0.buf, out1.buf, nb, n, kind)
    shape = A.shape[:-2]
    return (out0.reshape(shape), out1.reshape(shape)) if kind == 1 else out0.reshape(shape)


def _expand(x: CudaArray, batch: tuple) -> CudaArray:
    """``x`` (``(..., r, c)``) broadcast to ``batch + (r, c)`` as a view (zero strides)."""
    shape = batch + x.shape[-2:]
    lead = len(shape) - x.ndim
    strides = (0,) * lead + tuple(0 if s != t else st for s, t, st in zip(x.shape, shape[lead:], x.strides))
    return x.view_of(shape, strides, x.offset)


def linalg_solve(A, B, left=True):
    meta = meta_of(R.get("linalg_solve"), [A, B, left])
    sa, sb = A.shape, B.shape
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    a = A if left else swap_last(A)
    b = B.view_of(sb + (1,), B.strides + (B.itemsize,), B.offset) if vector else (B if left else swap_last(B))
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    a, nb = batched(_expand(a, batch))
    x, _ = batched(_expand(b, batch))
    n, k = x.shape[-2:]
    if nb and n and k:
        piv = CudaArray.empty((nb, n), np.int64)
        bad = _first_failure(_kernels()[0], nb, a.buf, x.buf, piv.buf, n, k, False)
        if bad is not None:
            raise LinAlgError(f"torch.linalg.solve: {_prefix(len(batch) + 2, bad[0])}The solver failed because the "
                              "input matrix is singular.")
    x = x.reshape(batch + (n, k))
    if not vector and not left:
        x = copy_strided(swap_last(x))
    return x.reshape(tuple(meta.shape))


def _cholesky(A: CudaArray, upper: bool, name: str) -> CudaArray:
    n = A.shape[-1]
    a, nb = batched(A)
    out = CudaArray.empty(a.shape, A.dtype)
    if nb and n:
        bad = _first_failure(_kernels()[2], nb, a.buf, out.buf, n, bool(upper))
        if bad is not None:
            raise LinAlgError(
                f"{name}: {_prefix(A.ndim, bad[0])}The factorization could not be completed because the input is not "
                f"positive-definite (the leading minor of order {bad[1]} is not positive-definite).")
    return out.reshape(A.shape)


def register() -> list:
    table = {"linalg_inv": checked("linalg_inv", _inv, "linalg.inv"), "inverse": checked("inverse", _inv, "linalg.inv"),
             "linalg_det": checked("linalg_det", _det, 0), "det": checked("det", _det, 0),
             "linalg_slogdet": checked("linalg_slogdet", _det, 1), "slogdet": checked("slogdet", _det, 1),
             "logdet": checked("logdet", _det, 2), "linalg_solve": linalg_solve,
             "linalg_cholesky": checked("linalg_cholesky", _cholesky, "linalg.cholesky"),
             "cholesky": checked("cholesky", _cholesky, "cholesky")}
    return register_table(table)
