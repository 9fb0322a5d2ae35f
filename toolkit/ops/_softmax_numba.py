"""Compiled softmax and log_softmax, and their backward formulas: over the last dimension, per row a pass for
the exponentials and their sum and one to write, which also takes the next row's max; over another dimension
the same passes run along the contiguous trailing dims, with a running max and sum per position.

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
def _exp32_parts(c):
    """``(p, n)`` with ``exp(c) == p * 2**n``: Cody-Waite reduction, then the polynomial on the remainder."""
    n = np.floor(c * np.float32(1.44269504088896341) + np.float32(0.5))  # float32 (math.floor gives int64)
    r = c - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    return p * (r * r) + r + np.float32(1.0), np.int32(n)


@numba.njit(inline="always")
def _exp32(x):
    # The input is clamped where exp already over- or underflows; 2**n is split into two factors so that
    # n can reach the subnormal range. NaN stays NaN.
    c = x if x >= np.float32(-104.0) else np.float32(-104.0)
    c = c if c <= np.float32(89.0) else np.float32(89.0)
    p, k = _exp32_parts(c)
    h = k >> np.int32(1)
    e = p * _f32_from_bits((h + np.int32(127)) << np.int32(23)) * _f32_from_bits(
        (k - h + np.int32(127)) << np.int32(23))
    return e if x == x else x


@numba.njit(inline="always")
def _exp32_term(x):
    # exp of x <= 0 as a term of a sum that holds exp(0) = 1 (log_softmax's sum(exp(x - max))): clamped at -87,
    # where 2**n is still a normal float, so one exponent factor does. A term it lifts from below 1.6e-38 to
    # that is lost in a sum of at least 1; the sum pass takes 25% less time than with ``_exp32``.
    p, k = _exp32_parts(x if x >= np.float32(-87.0) else np.float32(-87.0))
    e = p * _f32_from_bits((k + np.int32(127)) << np.int32(23))
    return e if x == x else x


@numba.njit(inline="always")
def _exp64(x):
    c = x if x >= -746.0 else -746.0
    c = c if c <= 710.0 else 710.0
    n = np.floor(c * 1.4426950408889634073599 + 0.5)
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


def _exp_term(x):
    """``exp(x)`` for ``x <= 0`` as a term of a sum of at least 1 (``_exp32_term``; float64 takes ``_exp64``)."""


@overload(_exp_term, inline="always")
def _exp_term_overload(x):
    return (lambda x: _exp32_term(x)) if x == types.float32 else (lambda x: _exp(x))


def _like(x, v):
    """``v`` converted to ``x``'s float type, so a float64 row total does not turn a float32 loop into a
    float64 one with a conversion per element."""


@overload(_like, inline="always")
def _like_overload(x, v):
    if x == types.float32:
        return lambda x, v: np.float32(v)
    return lambda x, v: np.float64(v)


def _ordered(row, i):
    """The bits ``i`` of a float in ``row`` (int32 for float32, int64 for float64) as an integer of that width
    that orders like the float: the magnitude bits of negative floats flipped. Its own inverse."""


@overload(_ordered, inline="always")
def _ordered_overload(row, i):
    if row.dtype == types.float32:  # numba widens int32 arithmetic to int64: narrow it back
        return lambda row, i: np.int32(i ^ ((i >> np.int32(31)) & np.int32(0x7FFFFFFF)))
    return lambda row, i: np.int64(i ^ ((i >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF)))


def _bits(row):
    """A float32 (float64) row's bits as int32 (int64), a view."""


@overload(_bits, inline="always")
def _bits_overload(row):
    if row.dtype == types.float32:
        return lambda row: row.view(np.int32)
    return lambda row: row.view(np.int64)


def _float_from_bits(row, i):
    """The float of ``row``'s dtype whose bits are ``i``."""


@overload(_float_from_bits, inline="always")
def _float_from_bits_overload(row, i):
    if row.dtype == types.float32:
        return lambda row, i: _f32_from_bits(np.int32(i))
    return lambda row, i: _f64_from_bits(np.int64(i))


@numba.njit(cache=True)
def _row_max(row):
    """The max of a contiguous float row, as an integer max over order-preserving bit patterns: LLVM
    vectorizes an integer max reduction, and no float max without fast-math. A NaN may or may not win,
    which is fine here: it reaches the row's sum either way."""
    bits = _bits(row)
    top = _ordered(row, bits[0])
    for j in range(1, bits.shape[0]):
        k = _ordered(row, bits[j])
        top = k if k > top else top
    return _float_from_bits(row, _ordered(row, top))


BLOCK = 512  # elements summed in the input's precision before the block's sum joins the float64 total


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


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract"})
def _block_sum_exp(x, top):
    part = _like(top, 0.0)
    for j in range(x.shape[0]):
        part += _exp_term(x[j] - top)
    return part


@numba.njit(cache=True, error_model="numpy")
def _row_sum_exp(x, top):
    """sum(exp(x - top)) without storing the exponentials: blocks of ``BLOCK`` sum in x's precision (many
    vector lanes, each adding a few dozen terms), their sums in float64."""
    total = 0.0
    for start in range(0, x.shape[0], BLOCK):
        total += np.float64(_block_sum_exp(x[start:start + BLOCK], top))
    return total


@numba.njit(cache=True, error_model="numpy", fastmath={"contract"})
def _exp_store(x, top, out):
    for j in range(x.shape[0]):
        out[j] = _exp(x[j] - top)


@numba.njit(cache=True, error_model="numpy")
def _forward_row(x, out, log, top, following):
    """One row from its max ``top``; returns the max of the ``following`` row (a row of the same length),
    taken in the pass that writes this one, so that reading it from memory overlaps the stores instead of
    stalling a max pass of its own (4096x1000 log_softmax on one thread: 13% less time)."""
    bits = _bits(following)
    nxt = _ordered(following, bits[0])
    if log:  # (x - top) - log(sum(exp(x - top))): two reads of x, one write; top + log(...) would round
        shift = _like(top, math.log(_row_sum_exp(x, top)))  # away the low bits of x - top near large x
        for j in range(x.shape[0]):
            out[j] = (x[j] - top) - shift
            k = _ordered(following, bits[j])
            nxt = k if k > nxt else nxt
    else:
        _exp_store(x, top, out)
        scale = _like(top, 1.0 / _row_sum(out))
        for j in range(x.shape[0]):
            out[j] = out[j] * scale
            k = _ordered(following, bits[j])
            nxt = k if k > nxt else nxt
    return _float_from_bits(following, _ordered(following, nxt))


@numba.njit(cache=True, error_model="numpy", fastmath={"contract"})
def _backward_row(grad, y, out, log):
    if log:  # grad - exp(y) * sum(grad)
        total = _like(grad[0], _row_sum(grad))
        for j in range(grad.shape[0]):
            out[j] = grad[j] - _exp(y[j]) * total
    else:  # y * (grad - sum(grad * y))
        total = _like(grad[0], _row_dot(grad, y))
        for j in range(grad.shape[0]):
            out[j] = y[j] * (grad[j] - total)


@numba.njit(cache=True, nogil=True)
def _forward_rows(x, out, log):
    n = x.shape[0]
    if n == 0 or x.shape[1] == 0:
        return
    top = _row_max(x[0])
    for i in range(n):
        top = _forward_row(x[i], out[i], log, top, x[min(i + 1, n - 1)])


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
    out, = run_slices(kernel, parts.shape[0], parts.size * WORK_PER_ELEMENT, (parts,), (out,), (log,))
    return out.reshape(x.shape)


def softmax_backward_along(grad: np.ndarray, y: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """The gradient of softmax (or log_softmax) along ``dim`` from its output ``y`` and the incoming ``grad``
    (same shape and float dtype, at least 1-d, not empty)."""
    g, r = _split(grad, dim), _split(y, dim)
    out = np.empty_like(g)
    kernel = _backward_rows if g.ndim == 2 else _backward_planes
    out, = run_slices(kernel, g.shape[0], g.size * WORK_PER_ELEMENT, (g, r), (out,), (log,))
    return out.reshape(grad.shape)
