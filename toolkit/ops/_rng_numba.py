"""Compiled loops of the random ops that cannot be vectorized: the mt19937 stream and shuffles.

Imported only when a random op first needs them, so ``import toolkit``
never loads numba; compiled functions are cached on disk.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

_N = 624
_M = 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UMASK = np.uint32(0x80000000)
_LMASK = np.uint32(0x7FFFFFFF)
_ONE = np.uint32(1)
_ZERO = np.uint32(0)


@numba.njit(cache=True)
def _twist(mt):
    for j in range(_N - _M):
        y = (mt[j] & _UMASK) | (mt[j + 1] & _LMASK)
        mt[j] = mt[j + _M] ^ (y >> _ONE) ^ (_MATRIX_A if (mt[j + 1] & _ONE) else _ZERO)
    for j in range(_N - _M, _N - 1):
        y = (mt[j] & _UMASK) | (mt[j + 1] & _LMASK)
        mt[j] = mt[j + _M - _N] ^ (y >> _ONE) ^ (_MATRIX_A if (mt[j + 1] & _ONE) else _ZERO)
    y = (mt[_N - 1] & _UMASK) | (mt[0] & _LMASK)
    mt[_N - 1] = mt[_M - 1] ^ (y >> _ONE) ^ (_MATRIX_A if (mt[0] & _ONE) else _ZERO)


@numba.njit(cache=True)
def _next(mt, pos):
    left = pos[0] - 1
    if left == 0:
        _twist(mt)
        left = _N
        pos[1] = 0
    pos[0] = left
    y = mt[pos[1]]
    pos[1] += 1
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


@numba.njit(cache=True)
def mt_fill(mt, pos, out):
    """Fill ``out`` (uint32) with the next words of the stream; ``pos`` holds ``left`` and ``next``."""
    n = out.size
    left = pos[0]
    nxt = pos[1]
    i = 0
    while i < n:
        if left == 1:
            _twist(mt)
            left = _N + 1
            nxt = 0
        k = min(left - 1, n - i)
        for j in range(k):
            y = mt[nxt + j]
            y ^= y >> np.uint32(11)
            y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
            y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
            y ^= y >> np.uint32(18)
            out[i + j] = y
        i += k
        nxt += k
        left -= k
    pos[0] = left
    pos[1] = nxt


@numba.njit(cache=True)
def randperm_fill(words, out):
    """PyTorch's shuffle for n < 2**32 / 20: swap position i with i + words[i] % (n - i)."""
    n = out.size
    for i in range(n):
        out[i] = i
    for i in range(n - 1):
        z = np.int64(words[i]) % (n - i)
        t = out[i]
        out[i] = out[z + i]
        out[z + i] = t


@numba.njit(cache=True)
def randperm_fill_large(mt, pos, out):
    """PyTorch's inside-out shuffle for huge n, drawing 64-bit values."""
    for i in range(out.size):
        hi = np.uint64(_next(mt, pos))
        lo = np.uint64(_next(mt, pos))
        z = np.int64(((hi << np.uint64(32)) | lo) % np.uint64(i + 1))
        out[i] = out[z]
        out[z] = i


# --------------------------------------------------------------------------------------------
# Floating point: PyTorch's kernels are compiled with FMA contraction, so the transforms fuse.
# --------------------------------------------------------------------------------------------
@intrinsic
def _fma(typingctx, a, b, c):
    """A correctly rounded fused multiply-add (LLVM's ``llvm.fma``)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


@numba.njit(cache=True)
def affine(x, scale, shift):
    """``x * scale + shift`` in place, fused, in x's own precision."""
    for i in range(x.size):
        x[i] = _fma(x[i], scale, shift)


_F0 = np.float32(0.0)
_F1 = np.float32(1.0)
_FHALF = np.float32(0.5)
_FM2 = np.float32(-2.0)
_SQRTHF = np.float32(0.707106781186547524)
_LOG_P = (np.float32(7.0376836292e-2), np.float32(-1.1514610310e-1), np.float32(1.1676998740e-1),
          np.float32(-1.2420140846e-1), np.float32(1.4249322787e-1), np.float32(-1.6668057665e-1),
          np.float32(2.0000714765e-1), np.float32(-2.4999993993e-1), np.float32(3.3333331174e-1))
_LOG_Q1 = np.float32(-2.12194440e-4)
_LOG_Q2 = np.float32(0.693359375)
_FOPI = np.float32(1.27323954473516)
_DP1 = np.float32(-0.78515625)
_DP2 = np.float32(-2.4187564849853515625e-4)
_DP3 = np.float32(-3.77489497744594108e-8)
_SIN_P = (np.float32(-1.9515295891e-4), np.float32(8.3321608736e-3), np.float32(-1.6666654611e-1))
_COS_P = (np.float32(2.443315711809948e-005), np.float32(-1.388731625493765e-003),
          np.float32(4.166664568298827e-002))
_TWO_PI_F = np.float32(2.0 * math.pi)


@numba.njit(cache=True)
def _log_f32(x):
    """The cephes-style float32 log of PyTorch's AVX2 normal kernel (x in (0, 1])."""
    m, ex = math.frexp(np.float64(x))
    x = np.float32(m)
    e = np.float32(ex)
    if x < _SQRTHF:
        e = e - _F1
        x = (x - _F1) + x
    else:
        x = x - _F1
    z = x * x
    y = _fma(_LOG_P[0], x, _LOG_P[1])
    y = _fma(y, x, _LOG_P[2])
    y = _fma(y, x, _LOG_P[3])
    y = _fma(y, x, _LOG_P[4])
    y = _fma(y, x, _LOG_P[5])
    y = _fma(y, x, _LOG_P[6])
    y = _fma(y, x, _LOG_P[7])
    y = _fma(y, x, _LOG_P[8])
    y = y * x
    y = _fma(y, z, e * _LOG_Q1)
    y = _fma(-z, _FHALF, y)
    x = x + y
    return _fma(e, _LOG_Q2, x)


@numba.njit(cache=True)
def _sincos_f32(x):
    """The float32 sincos of PyTorch's AVX2 normal kernel (x >= 0)."""
    j = np.int32(x * _FOPI)
    j = (j + 1) & ~1
    y = np.float32(j)
    x = _fma(y, _DP1, x)
    x = _fma(y, _DP2, x)
    x = _fma(y, _DP3, x)
    z = x * x
    c = _fma(_COS_P[0], z, _COS_P[1])
    c = _fma(c, z, _COS_P[2])
    c = c * z
    c = _fma(c, z, -(z * _FHALF))
    c = c + _F1
    s = _fma(_SIN_P[0], z, _SIN_P[1])
    s = _fma(s, z, _SIN_P[2])
    s = s * z
    s = _fma(s, x, x)
    if (j & 2) != 0:
        s, c = c, s
    if (j & 4) != 0:
        s = -s
    if ((j - 2) & 4) == 0:
        c = -c
    return s, c


@numba.njit(cache=True)
def normal_fill_f32(d, mean, std):
    """Uniforms to normals in blocks of 16, as PyTorch's AVX2 ``normal_fill`` (float32)."""
    for b in range(0, d.size - 15, 16):
        for j in range(8):
            u1 = _F1 - d[b + j]
            u2 = d[b + j + 8]
            radius = np.float32(math.sqrt(np.float64(_FM2 * _log_f32(u1))))
            s, c = _sincos_f32(_TWO_PI_F * u2)
            d[b + j] = _fma(radius * c, std, mean)
            d[b + j + 8] = _fma(radius * s, std, mean)


@numba.njit(cache=True)
def normal_fill_f64(d, mean, std):
    """Uniforms to normals in blocks of 16, as PyTorch's scalar ``normal_fill`` (float64)."""
    two_pi = 2.0 * math.pi
    for b in range(0, d.size - 15, 16):
        for j in range(8):
            u1 = 1.0 - d[b + j]
            u2 = d[b + j + 8]
            radius = math.sqrt(-2.0 * math.log(u1))
            theta = two_pi * u2
            d[b + j] = _fma(radius * math.cos(theta), std, mean)
            d[b + j + 8] = _fma(radius * math.sin(theta), std, mean)


@numba.njit(cache=True)
def box_muller_pairs(u, out):
    """PyTorch's scalar normal: from uniform pairs (u1, u2) the values r*cos and r*sin."""
    two_pi = 2.0 * math.pi
    for k in range(u.size // 2):
        r = math.sqrt(-2.0 * math.log1p(-u[2 * k + 1]))
        theta = two_pi * u[2 * k]
        out[2 * k] = r * math.cos(theta)
        out[2 * k + 1] = r * math.sin(theta)


@numba.njit(cache=True)
def exponential_from(u, lambd, out):
    """``-1/lambd * log1p(-u)`` with the C library's log1p."""
    scale = -1.0 / lambd
    for i in range(u.size):
        out[i] = scale * math.log1p(-u[i])


@numba.njit(cache=True)
def fma_arrays(a, b, c, out):
    """``out = a * b + c`` elementwise, rounded once."""
    for i in range(out.size):
        out[i] = _fma(a[i], b[i], c[i])
