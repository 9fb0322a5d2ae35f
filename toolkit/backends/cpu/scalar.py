"""Scalar helper functions that op formulas may call, besides ``math.*`` and ``min``/``max``/``abs``.

Each helper is plain Python over ``math`` (so it runs, and is tested, in
CPython) and numba-compilable: the code generator copies its source into a
generated kernel module, so kernels never import toolkit. Helpers may call
one another; the generator includes what a formula needs, transitively.

``floor``/``ceil``/``trunc``/``rint`` keep the float type (``math.floor``
returns an int, which overflows for huge values and loses ``-0.0``, ``inf``
and ``nan``); ``rint`` rounds half to even as PyTorch's ``round`` does.
"""

from __future__ import annotations

import math

_EXACT = 4503599627370496.0  # 2**52: every float64 at or above it is an integer


def floor(x):
    """Largest integer <= x, as a float (keeps -0.0, inf and nan)."""
    if not abs(x) < _EXACT:
        return x
    return math.copysign(float(math.floor(x)), x)


def ceil(x):
    """Smallest integer >= x, as a float (ceil(-0.5) is -0.0)."""
    if not abs(x) < _EXACT:
        return x
    return math.copysign(float(math.ceil(x)), x)


def trunc(x):
    """x rounded toward zero, as a float."""
    if not abs(x) < _EXACT:
        return x
    return math.copysign(float(math.trunc(x)), x)


def rint(x):
    """x rounded to the nearest integer, halves to even (rint(2.5) == 2.0, rint(-0.5) == -0.0)."""
    if not abs(x) < _EXACT:
        return x
    f = math.floor(x)
    d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 != 0):
        f += 1
    return math.copysign(float(f), x)


def erfinv(y):
    """Inverse error function: a rational first guess, then Newton steps to full double precision.

    The first guess is the classic rational approximation PyTorch's kernel
    starts from. Near the centre Newton steps solve ``erf(x) = y``; in the
    tails (``|y| > 0.5``) they solve ``erfc(x) = 1 - |y|`` instead, whose
    right-hand side is exact there, so ``erfinv(1 - 1e-15)`` keeps its
    precision where ``erf(x) - y`` would cancel to nothing.
    """
    a = abs(y)
    if a > 1.0 or y != y:
        return math.nan
    if a == 1.0:
        return math.copysign(math.inf, y)
    if a <= 0.7:
        z = a * a
        num = ((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899
        dem = (((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1.0
        x = a * num / dem
    else:
        z = math.sqrt(-math.log((1.0 - a) / 2.0))
        num = ((1.641345311 * z + 3.429567803) * z - 1.624906493) * z - 1.970840454
        dem = (1.637067800 * z + 3.543889200) * z + 1.0
        x = num / dem
    two_over_sqrt_pi = 1.1283791670955126
    if a <= 0.5:
        for _ in range(2):
            x -= (math.erf(x) - a) / (two_over_sqrt_pi * math.exp(-x * x))
    else:
        tail = 1.0 - a  # exact for a >= 0.5
        for _ in range(3):
            x += (math.erfc(x) - tail) / (two_over_sqrt_pi * math.exp(-x * x))
    return math.copysign(x, y)


def pow2(k):
    """2.0 ** k for an integer-valued float |k| <= 255, from the bits of |k|: selects, no branch or call."""
    a = abs(k)
    p = 3.402823669209385e38 if a >= 128.0 else 1.0
    a = a - 128.0 if a >= 128.0 else a
    p = p * (1.8446744073709552e19 if a >= 64.0 else 1.0)
    a = a - 64.0 if a >= 64.0 else a
    p = p * (4294967296.0 if a >= 32.0 else 1.0)
    a = a - 32.0 if a >= 32.0 else a
    p = p * (65536.0 if a >= 16.0 else 1.0)
    a = a - 16.0 if a >= 16.0 else a
    p = p * (256.0 if a >= 8.0 else 1.0)
    a = a - 8.0 if a >= 8.0 else a
    p = p * (16.0 if a >= 4.0 else 1.0)
    a = a - 4.0 if a >= 4.0 else a
    p = p * (4.0 if a >= 2.0 else 1.0)
    p = p * (2.0 if a - (2.0 if a >= 2.0 else 0.0) >= 1.0 else 1.0)
    return p if k >= 0.0 else 1.0 / p


def exp_parts(y):
    """(p, q) with ``e**y = p * (1 + q)``: ``p = 2**k`` and ``q = e**r - 1`` for ``y = k ln2 + r``,
    ``|r| <= ln2 / 2``, by the Taylor series to ``r**12`` (relative error below 1e-14): plain float64
    arithmetic, no libm call, so a fused loop vectorizes. Valid for |y| <= 170."""
    k = float(math.floor(y * 1.4426950408889634 + 0.5))
    r = y - k * 0.6931471805599453
    q = r * (1.0 + r * (0.5 + r * (0.16666666666666666 + r * (0.041666666666666664 + r * (
        0.008333333333333333 + r * (0.001388888888888889 + r * (1.984126984126984e-04 + r * (
            2.48015873015873e-05 + r * (2.7557319223985893e-06 + r * (2.755731922398589e-07 + r * (
                2.505210838544172e-08 + r * 2.08767569878681e-09)))))))))))
    return pow2(k), q


def exp_f32(x):
    """``math.exp`` for float32 arguments, computed in float64 by :func:`exp_parts` (so rounding to
    float32 is within an ulp), where libm's ``expf`` is a call per element that keeps loops scalar."""
    y = float(x)
    y = 89.0 if y > 89.0 else (-105.0 if y < -105.0 else y)  # e**89 is inf in float32, e**-105 is 0
    p, q = exp_parts(y)
    return p + p * q


def tanh_f32(x):
    """``math.tanh`` for float32 arguments, as :func:`exp_f32`: ``(e**2a - 1) / (e**2a + 1)`` in float64;
    beyond |x| = 9.1 tanh rounds to +-1 in float32."""
    y = float(x)
    a = abs(y)
    a = 9.1 if a > 9.1 else a
    p, q = exp_parts(2.0 * a)
    e = p * q + (p - 1.0)  # e**2a - 1, without cancelling for small a
    return math.copysign(e / (e + 2.0), y)


HELPERS = {f.__name__: f for f in (floor, ceil, trunc, rint, erfinv, pow2, exp_parts, exp_f32, tanh_f32)}
