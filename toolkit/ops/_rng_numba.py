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


# --------------------------------------------------------------------------------------------
# Rejection samplers: each element draws as many uniforms as it needs, straight from the stream.
# --------------------------------------------------------------------------------------------
_MASK53_U = np.uint64((1 << 53) - 1)
_SHIFT32 = np.uint64(32)


@numba.njit(cache=True)
def _uniform53(mt, pos):
    """One ``uniform_real_distribution<double>(0, 1)`` draw: 53 bits of a 64-bit value."""
    hi = np.uint64(_next(mt, pos))
    lo = np.uint64(_next(mt, pos))
    return np.float64(((hi << _SHIFT32) | lo) & _MASK53_U) * (2.0 ** -53)


@numba.njit(cache=True)
def _poisson_one(mt, pos, lam):
    """ATen's ``sample_poisson``: Hörmann's transformed rejection for rates of 10 or more, products of
    uniforms below."""
    if lam >= 10.0:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2.0)
        while True:
            u = _uniform53(mt, pos) - 0.5
            v = _uniform53(mt, pos)
            us = 0.5 - abs(u)
            k = np.int64(math.floor((2.0 * a / us + b) * u + lam + 0.43))
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)) <= (
                    -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0.0:
        return np.int64(0)
    enlam = math.exp(-lam)
    x = np.int64(0)
    prod = 1.0
    while True:
        prod *= _uniform53(mt, pos)
        if prod > enlam:
            x += 1
        else:
            return x


@numba.njit(cache=True)
def poisson_fill(mt, pos, rates, out):
    """One Poisson sample per rate (float64 rates, in output order)."""
    for i in range(rates.size):
        out[i] = _poisson_one(mt, pos, rates[i])


_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                           0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                           0.00925546218271273, 0.00833056343336287])


@numba.njit(cache=True)
def _stirling_tail(k):
    if k <= 9:
        return _STIRLING_TAIL[np.int64(k)]
    kp1sq = (k + 1.0) * (k + 1.0)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0)


@numba.njit(cache=True)
def _binomial_inversion(mt, pos, count, prob):
    geom_sum = 0.0
    num_geom = 0.0
    logprob = math.log1p(-prob)
    while True:
        geom = math.ceil(math.log(_uniform53(mt, pos)) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1.0


@numba.njit(cache=True)
def _btrs(mt, pos, count, prob):
    """Hörmann's BTRS transformed rejection, as ATen writes it."""
    stddev = math.sqrt(count * prob * (1.0 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1.0 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1.0) * prob)
    while True:
        u = _uniform53(mt, pos) - 0.5
        v = _uniform53(mt, pos)
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1.0) / (r * (count - m + 1.0)))
                 + (count + 1.0) * math.log((count - m + 1.0) / (count - k + 1.0))
                 + (k + 0.5) * math.log(r * (count - k + 1.0) / (k + 1.0))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upper:
            return k


@numba.njit(cache=True)
def binomial_fill(mt, pos, count, prob, out):
    """ATen's ``sample_binomial`` per element: inversion for small means, BTRS beyond."""
    for i in range(count.size):
        n = count[i]
        p = prob[i]
        if n <= 0.0 or p <= 0.0:
            out[i] = 0.0
        elif p >= 1.0:
            out[i] = n
        elif p <= 0.5:
            out[i] = _btrs(mt, pos, n, p) if n * p >= 10.0 else _binomial_inversion(mt, pos, n, p)
        elif p > 0.5:
            q = 1.0 - p
            out[i] = n - (_btrs(mt, pos, n, q) if n * q >= 10.0 else _binomial_inversion(mt, pos, n, q))
        else:
            out[i] = np.nan


@numba.njit(cache=True)
def exp_inplace(x):
    """``exp`` of each element with the C library's exp (numpy's vectorized one can differ in the last bit)."""
    for i in range(x.size):
        x[i] = math.exp(x[i])


@numba.njit(cache=True)
def cauchy_from(u, median, sigma, out):
    """``median + sigma * tan(pi * (u - 0.5))`` with the C library's tan."""
    for i in range(u.size):
        out[i] = median + sigma * math.tan(math.pi * (u[i] - 0.5))
