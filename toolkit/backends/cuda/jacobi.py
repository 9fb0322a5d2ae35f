"""Jacobi rotations on the device: symmetric eigenproblems and the one-sided (Hestenes) SVD.

One thread per matrix of the batch, each working in place on its own part
of contiguous row-major ``(B, rows, cols)`` arrays:

- ``eigh``: cyclic two-sided Jacobi on the symmetric part; the rotations
  accumulate into the eigenvectors, and the diagonal left is the eigenvalues.
- ``svd``: one-sided Jacobi on the columns of a tall ``(p, k)`` matrix ``G``
  (``p >= k``): rotating column pairs until every pair is orthogonal to
  working precision makes ``G = U diag(S)``, the rotations accumulate into
  ``V``, and the singular values are the column norms. ``U``'s columns are
  ``G``'s normalized; where a singular value is zero, and for the extra
  columns of a full ``U`` (``p x p``), ``U`` is completed to an orthonormal
  basis by Gram-Schmidt against the identity's columns.

Both sort their values (eigenvalues ascending, singular values descending)
and move the vectors along. Values are unique and match LAPACK's; vectors
are unique only up to sign (and a rotation within repeated values).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from . import runtime
from .array import CudaArray
from .linalg import batched, identity, swap_last, swap_lines

_SWEEPS = 64


@cuda.jit(device=True)
def _rotate(x, o, count, step, p, q, c, s):
    """The ``count`` pairs ``(x[o + i*step + p], x[o + i*step + q])`` rotated by (c, s): two columns of a
    row-major matrix (``step`` its row length, p and q the column numbers) or two rows (``step`` 1, p and q
    the rows' offsets)."""
    for i in range(count):
        xp = x[o + i * step + p]
        xq = x[o + i * step + q]
        x[o + i * step + p] = c * xp - s * xq
        x[o + i * step + q] = s * xp + c * xq


@cuda.jit(device=True)
def _tangent(theta):
    """``tan`` of the Jacobi rotation angle for ``theta = cot(2 angle)``: the smaller root of
    ``t^2 + 2 theta t - 1 = 0``, ``1 / (2 theta)`` where ``theta^2`` would overflow."""
    at = abs(theta)
    t = 1.0 / (at + math.sqrt(at * at + 1.0)) if at < 1e18 else 0.5 / at  # (float32 squares overflow past 1e19)
    return -t if theta < 0 else t


@cuda.jit(device=True)
def _sort(vals, vo, n, descending, a, ao, arows, ald, b, bo, brows, bld, with_b):
    """Selection sort of ``vals[vo:vo + n]``, moving the columns of matrix ``a`` (and of ``b``) along."""
    for i in range(n):
        best = i
        for j in range(i + 1, n):
            if (vals[vo + j] > vals[vo + best]) if descending else (vals[vo + j] < vals[vo + best]):
                best = j
        if best != i:
            t = vals[vo + i]
            vals[vo + i] = vals[vo + best]
            vals[vo + best] = t
            swap_lines(a, ao, arows, ald, i, best)
            if with_b:
                swap_lines(b, bo, brows, bld, i, best)


@cuda.jit(device=True)
def _one_sided(g, o, m, n, v, vo, want_v, eps):
    """Hestenes sweeps over the columns of the (m, n) matrix at ``g[o:]`` until each pair is orthogonal to
    ``eps`` relative to the columns' norms; the rotations applied to ``V`` too when ``want_v``."""
    for _sweep in range(_SWEEPS):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                al = 0.0
                be = 0.0
                ga = 0.0
                for i in range(m):
                    xp = g[o + i * n + p]
                    xq = g[o + i * n + q]
                    al += xp * xp
                    be += xq * xq
                    ga += xp * xq
                if ga == 0 or abs(ga) <= eps * math.sqrt(al * be):
                    continue
                rotated = True
                t = _tangent((be - al) / (2.0 * ga))
                c = 1.0 / math.sqrt(1.0 + t * t)
                _rotate(g, o, m, n, p, q, c, c * t)
                if want_v:
                    _rotate(v, vo, n, n, p, q, c, c * t)
        if not rotated:
            break


@cuda.jit(device=True)
def _complete(q, o, rows, cols, have):
    """Columns ``have..cols-1`` of the (rows, cols) matrix at ``q[o:]``, whose first ``have`` columns are
    orthonormal, filled with further orthonormal columns: identity columns in turn, orthogonalized against
    every column so far (twice, for accuracy) and kept when enough of them is left. Some identity column
    always keeps more than ``1/(4 rows)`` of its squared norm, so ``cols <= rows`` columns are always found."""
    j = have
    cand = 0
    while j < cols and cand < rows:
        for i in range(rows):
            q[o + i * cols + j] = 1 if i == cand else 0
        for _twice in range(2):
            for c in range(j):
                d = 0.0
                for i in range(rows):
                    d += q[o + i * cols + c] * q[o + i * cols + j]
                for i in range(rows):
                    q[o + i * cols + j] -= d * q[o + i * cols + c]
        nrm = 0.0
        for i in range(rows):
            nrm += q[o + i * cols + j] * q[o + i * cols + j]
        cand += 1
        if nrm * 4 * rows > 1:
            nrm = math.sqrt(nrm)
            for i in range(rows):
                q[o + i * cols + j] /= nrm
            j += 1


@functools.cache
def _kernels():
    @cuda.jit
    def eigh(a, w, v, nb, n, eps):
        """Cyclic Jacobi on the symmetric part of each matrix; eigenvalues ascending, eigenvectors in columns."""
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * n * n
            for i in range(n):
                for j in range(i, n):
                    s = (a[o + i * n + j] + a[o + j * n + i]) * 0.5
                    a[o + i * n + j] = s
                    a[o + j * n + i] = s
            identity(v, o, n, n)
            for _sweep in range(_SWEEPS):
                off = 0.0
                tot = 0.0
                for i in range(n):
                    for j in range(n):
                        x = a[o + i * n + j] * a[o + i * n + j]
                        tot += x
                        if i != j:
                            off += x
                if off <= eps * eps * tot:
                    break
                for p in range(n - 1):
                    for q in range(p + 1, n):
                        apq = a[o + p * n + q]
                        if apq == 0:
                            continue
                        tt = _tangent((a[o + q * n + q] - a[o + p * n + p]) / (2.0 * apq))
                        c = 1.0 / math.sqrt(tt * tt + 1.0)
                        _rotate(a, o, n, n, p, q, c, tt * c)  # columns p, q
                        _rotate(a, o, n, 1, p * n, q * n, c, tt * c)  # rows p, q
                        _rotate(v, o, n, n, p, q, c, tt * c)
            for i in range(n):
                w[t * n + i] = a[o + i * n + i]
            _sort(w, t * n, n, False, v, o, n, n, v, o, n, n, False)

    @cuda.jit
    def svd(g, s, v, u, nb, p, k, uc, eps, want_v, want_u):
        """One-sided Jacobi per tall (p, k) matrix ``g``: S descending into ``s``, V (k, k) into ``v`` when
        ``want_v``, and U (p, uc) into ``u`` when ``want_u`` (``uc`` is k, or p for a full U)."""
        for t in range(cuda.grid(1), nb, cuda.gridsize(1)):
            o = t * p * k
            vo = t * k * k
            so = t * k
            if want_v:
                identity(v, vo, k, k)
            _one_sided(g, o, p, k, v, vo, want_v, eps)
            for j in range(k):
                acc = 0.0
                for i in range(p):
                    acc += g[o + i * k + j] * g[o + i * k + j]
                s[so + j] = math.sqrt(acc)
            _sort(s, so, k, True, g, o, p, k, v, vo, k, k, want_v)
            if want_u:
                uo = t * p * uc
                have = 0
                while have < k and s[so + have] > eps * s[so]:  # columns of a zero singular value: completed
                    for i in range(p):
                        u[uo + i * uc + have] = g[o + i * k + have] / s[so + have]
                    have += 1
                _complete(u, uo, p, uc, have)

    return eigh, svd


def _eps(dtype) -> float:
    return float(np.finfo(dtype).eps)


def eigh_parts(A: CudaArray) -> tuple:
    """(eigenvalues ``(..., n)`` ascending, eigenvectors ``(..., n, n)``) of the symmetric part of ``A``."""
    n = A.shape[-1]
    a, nb = batched(A)
    w = CudaArray.empty((nb, n), A.dtype)
    v = CudaArray.empty((nb, n, n), A.dtype)
    if n:
        runtime.launch(_kernels()[0], nb, a.buf, w.buf, v.buf, nb, n, _eps(A.dtype))
    return w.reshape(A.shape[:-1]), v.reshape(A.shape)


def svd_parts(A: CudaArray, want_v: bool, full: bool | None) -> tuple:
    """(Q, S, V, wide) for ``A`` (``(..., m, n)``), worked on as is when tall and as ``A^T`` when wide
    (``wide`` says which), so that ``A = Q diag(S) V^T`` (or ``A^T`` = that): S ``(..., k)`` descending,
    V ``(..., k, k)`` (None unless ``want_v``), Q ``(..., p, k)``, or ``(..., p, p)`` when ``full`` (None
    when ``full`` is None); ``p = max(m, n)`` and ``k = min(m, n)``."""
    *batch, m, n = A.shape
    wide = m < n
    g, nb = batched(swap_last(A) if wide else A)
    p, k = g.shape[-2:]
    uc = p if full else k
    s = CudaArray.empty((nb, k), A.dtype)
    v = CudaArray.empty((nb, k, k) if want_v else (1,), A.dtype)
    u = CudaArray.empty((nb, p, uc) if full is not None else (1,), A.dtype)
    runtime.launch(_kernels()[1], nb, g.buf, s.buf, v.buf, u.buf, nb, p, k, uc, _eps(A.dtype), bool(want_v),
                   full is not None)
    batch = tuple(batch)
    q = u.reshape(batch + (p, uc)) if full is not None else None
    return q, s.reshape(batch + (k,)), v.reshape(batch + (k, k)) if want_v else None, wide
