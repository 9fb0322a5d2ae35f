"""Compiled softmax and log_softmax, and their backward formulas: over the last dimension, per row a pass for
the max, one for the exponentials, one for their sum and one to write; over another dimension the same
passes run along the contiguous trailing dims, with a running max and sum per position.

numpy's form (``x - max``, ``exp``, ``sum``, ``log``, ``-``) makes five full-size temporaries; here each row
stays in the cache between passes and only the result is written. The exponential is a polynomial written
in numba (Cephes' ``expf``/``exp``: Cody-Waite reduction, then ``2**n`` built from exponent bits), so LLVM
vectorizes the loop; ``math.exp`` would be a scalar library call per element, slower than numpy's SIMD
``exp``. The max keeps eight running maxima (vectorized without fast-math flags), and sums accumulate in
float64 in a function that alone may reassociate them, so float32 results are at least as accurate as
PyTorch's. A NaN anywhere in a row makes the row's sum NaN, so the whole row comes out NaN, as in PyTorch.

Large inputs are split over the cores by rows (or by outer index) with ``backends.cpu.split.run_slices``, not with
``prange``: numba's thread pools wait for every worker, and lost to the serial loop on a busy two-core
machine (log_softmax 4096x1000 medians 25-27 ms against 17-21 ms while other work ran).

Imported only when softmax first runs on float32/float64, so ``import toolkit`` never loads numba; the
compiled functions are cached on disk.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ..backends.cpu.split import run_slices

WORK_PER_ELEMENT = 10  # a softmax element costs about ten elements of a float32 sum (see ``backends.cpu.split``)


@intrinsic
def _f32_from_bits(typingctx, bits):
    """The float32 whose bit pattern is the int32 ``bits`` (one LLVM bitcast, so the loop stays vectorized)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@intrinsic
def _f64_from_bits(typingctx, bits):
    """The float64 whose bit pattern is the int64 ``bits``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@numba.njit(inline="always")
def _exp32(x):
    # The input is clamped where exp already over- or underflows; 2**n is split into two factors so that
    # n can reach the subnormal range. NaN stays NaN.
    c = x if x >= np.float32(-104.0) else np.float32(-104.0)
    c = c if c <= np.float32(89.0) else np.float32(89.0)
    n = math.floor(c * np.float32(1.44269504088896341) + np.float32(0.5))
    r = c - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    p = p * (r * r) + r + np.float32(1.0)
    k = np.int32(n)
    h = k >> np.int32(1)
    e = p * _f32_from_bits((h + np.int32(127)) << np.int32(23)) * _f32_from_bits(
        (k - h + np.int32(127)) << np.int32(23))
    return e if x == x else x


@numba.njit(inline="always")
def _exp64(x):
    c = x if x >= -746.0 else -746.0
    c = c if c <= 710.0 else 710.0
    n = math.floor(c * 1.4426950408889634073599 + 0.5)
    r = c - n * 6.93145751953125e-1 - n * 1.42860682030941723212e-6
    rr = r * r
    px = r * ((1.26177193074810590878e-4 * rr + 3.02994407707441961300e-2) * rr + 9.99999999999999999910e-1)
    qx = ((3.00198505138664455042e-6 * rr + 2.52448340349684104192e-3) * rr + 2.27265548208155028766e-1) * rr \
        + 2.00000000000000000009e0
    p = 1.0 + 2.0 * (px / (qx - px))
    k = np.int64(n)
    h = k >> np.int64(1)
    e = p * _f64_from_bits((h + np.int64(1023)) << np.int64(52)) * _f64_from_bits(
        (k - h + np.int64(1023)) << np.int64(52))
    return e if x == x else x


def _exp(x):
    """``exp`` in ``x``'s own precision, vectorizable (see ``_exp32``/``_exp64``)."""


@overload(_exp, inline="always")
def _exp_overload(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    return lambda x: _exp64(x)


@numba.njit(cache=True)
def _row_max(row):
    """The row's max with eight running maxima (LLVM vectorizes them); a NaN may or may not win, which is
    fine here: it reaches the row's sum either way."""
    m = row.shape[0]
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = row[0]
    n8 = m - m % 8
    for j in range(0, n8, 8):
        v = row[j]
        a0 = v if v > a0 else a0
        v = row[j + 1]
        a1 = v if v > a1 else a1
        v = row[j + 2]
        a2 = v if v > a2 else a2
        v = row[j + 3]
        a3 = v if v > a3 else a3
        v = row[j + 4]
        a4 = v if v > a4 else a4
        v = row[j + 5]
        a5 = v if v > a5 else a5
        v = row[j + 6]
        a6 = v if v > a6 else a6
        v = row[j + 7]
        a7 = v if v > a7 else a7
    for j in range(n8, m):
        v = row[j]
        a0 = v if v > a0 else a0
    for v in (a1, a2, a3, a4, a5, a6, a7):
        a0 = v if v > a0 else a0
    return a0


@numba.njit(cache=True, fastmath={"reassoc"})
def _row_sum(row):
    total = 0.0
    for j in range(row.shape[0]):
        total += np.float64(row[j])
    return total


@numba.njit(cache=True, fastmath={"reassoc"})
def _row_dot(a, b):
    total = 0.0
    for j in range(a.shape[0]):
        total += np.float64(a[j]) * np.float64(b[j])
    return total


@numba.njit(cache=True, error_model="numpy")
def _forward_row(x, out, log):
    if x.shape[0] == 0:
        return
    top = _row_max(x)
    for j in range(x.shape[0]):
        out[j] = _exp(x[j] - top)
    total = _row_sum(out)
    if log:
        shift = top + math.log(total)
        for j in range(x.shape[0]):
            out[j] = x[j] - shift
    else:
        scale = 1.0 / total
        for j in range(x.shape[0]):
            out[j] = out[j] * scale


@numba.njit(cache=True, error_model="numpy")
def _backward_row(grad, y, out, log):
    if log:  # grad - exp(y) * sum(grad)
        total = _row_sum(grad)
        for j in range(grad.shape[0]):
            out[j] = grad[j] - _exp(y[j]) * total
    else:  # y * (grad - sum(grad * y))
        total = _row_dot(grad, y)
        for j in range(grad.shape[0]):
            out[j] = y[j] * (grad[j] - total)


@numba.njit(cache=True, nogil=True)
def _forward_rows(x, out, log):
    for i in range(x.shape[0]):
        _forward_row(x[i], out[i], log)


@numba.njit(cache=True, nogil=True)
def _backward_rows(grad, y, out, log):
    for i in range(grad.shape[0]):
        _backward_row(grad[i], y[i], out[i], log)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _forward_planes(x, out, log):
    """``x`` is (outer, n, inner), reduced over n: each step runs along a contiguous row of ``inner``, so a
    dim other than the last vectorizes too, with one max and one sum per inner position."""
    outer, n, inner = x.shape
    top = np.empty(inner, x.dtype)
    total = np.empty(inner, np.float64)
    for o in range(outer):
        top[:] = x[o, 0]
        for k in range(1, n):
            for j in range(inner):
                v = x[o, k, j]
                top[j] = v if v > top[j] else top[j]
        total[:] = 0.0
        for k in range(n):
            for j in range(inner):
                e = _exp(x[o, k, j] - top[j])
                out[o, k, j] = e
                total[j] += e
        if log:
            for j in range(inner):
                total[j] = top[j] + math.log(total[j])
            for k in range(n):
                for j in range(inner):
                    out[o, k, j] = x[o, k, j] - total[j]
        else:
            for j in range(inner):
                total[j] = 1.0 / total[j]
            for k in range(n):
                for j in range(inner):
                    out[o, k, j] = out[o, k, j] * total[j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _backward_planes(grad, y, out, log):
    outer, n, inner = grad.shape
    total = np.empty(inner, np.float64)
    for o in range(outer):
        total[:] = 0.0
        for k in range(n):
            for j in range(inner):
                total[j] += grad[o, k, j] if log else np.float64(grad[o, k, j]) * y[o, k, j]
        for k in range(n):
            for j in range(inner):
                if log:
                    out[o, k, j] = grad[o, k, j] - _exp(y[o, k, j]) * total[j]
                else:
                    out[o, k, j] = y[o, k, j] * (grad[o, k, j] - total[j])


def _split(x: np.ndarray, dim: int) -> np.ndarray:
    """``x`` C-contiguous as (rows, n) for the last dim, else (outer, n, inner)."""
    x = np.ascontiguousarray(x)
    if dim == x.ndim - 1:
        return x.reshape(-1, x.shape[-1])
    return x.reshape(math.prod(x.shape[:dim]), x.shape[dim], -1)


def softmax_along(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """softmax (or log_softmax) of a float32/float64 ``x`` (at least 1-d, not empty) along ``dim`` (>= 0),
    in ``x``'s dtype and C-contiguous."""
    parts = _split(x, dim)
    out = np.empty_like(parts)
    kernel = _forward_rows if parts.ndim == 2 else _forward_planes
    run_slices(kernel, parts.shape[0], parts.size * WORK_PER_ELEMENT, (parts,), (out,), (log,))
    return out.reshape(x.shape)


def softmax_backward_along(grad: np.ndarray, y: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """The gradient of softmax (or log_softmax) along ``dim`` from its output ``y`` and the incoming ``grad``
    (same shape and float dtype, at least 1-d, not empty)."""
    g, r = _split(grad, dim), _split(y, dim)
    out = np.empty_like(g)
    kernel = _backward_rows if g.ndim == 2 else _backward_planes
    run_slices(kernel, g.shape[0], g.size * WORK_PER_ELEMENT, (g, r), (out,), (log,))
    return out.reshape(grad.shape)
