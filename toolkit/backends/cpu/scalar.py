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


HELPERS = {f.__name__: f for f in (floor, ceil, trunc, rint, erfinv)}
