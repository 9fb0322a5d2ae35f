"""Scalar helpers of ``toolkit.special``'s formulas: the error-function family, exponentially scaled Bessel
functions and the orthogonal polynomials.

Each helper is a plain float function that numba compiles: the map kernel generator and the fusion code
generator copy its source into their modules, as they do the helpers of :mod:`toolkit.backends.cpu.scalar`.
So eager and fused results come from the same text. They compute in float64; a float32 result is rounded
once at the end. They are added to that module's helper table on import, and read only ``math``, builtins
and other helpers. They widen their argument with ``x * 1.0``, not ``float(x)``: numba keeps a float32 through
``float()``, and ``x + 0.0`` would lose the sign of ``-0.0``.
"""

from __future__ import annotations

import math

from ..backends.cpu.scalar import HELPERS, bessel_i0, bessel_i1, bessel_tail, erfinv


def erfcx_positive(x):
    """``e**(x*x) erfc(x)`` for ``x >= 0``: the direct product up to 20, then the continued fraction of erfc."""
    if x < 20.0:
        return math.exp(x * x) * math.erfc(x)
    f = x
    for k in range(60, 0, -1):
        f = x + 0.5 * k / f
    return 1.0 / (1.7724538509055160273 * f)


def erfcx(x):
    """The scaled complementary error function ``e**(x*x) erfc(x)``: finite where ``erfc`` underflows."""
    y = (x * 1.0)
    if y != y:
        return y
    if y >= 0.0:
        return erfcx_positive(y)
    if y < -26.7:
        return math.inf
    return 2.0 * math.exp(y * y) - erfcx_positive(-y)


def ndtr(x):
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2``."""
    return 0.5 * math.erfc((x * 1.0) * -0.70710678118654752440)


def log_ndtr(x):
    """``log`` of the standard normal CDF, accurate in the far left tail (through ``erfcx``)."""
    t = (x * 1.0) * 0.70710678118654752440
    if t == -math.inf:
        return t
    if t < -0.70710678118654752440:
        return math.log(erfcx(-t) * 0.5) - t * t
    return math.log1p(-0.5 * math.erfc(t))


def ndtri(p):
    """The standard normal quantile: an ``erfinv`` start, or the tail's asymptote for tiny ``p``, then Newton
    steps on ``log_ndtr`` (the upper half by symmetry, where ``1 - p`` is exact)."""
    q = (p * 1.0)
    if q != q or q < 0.0 or q > 1.0:
        return math.nan
    if q == 0.0:
        return -math.inf
    if q == 1.0:
        return math.inf
    sign = 1.0
    if q > 0.5:
        q = 1.0 - q
        sign = -1.0
    if q > 1e-10:
        x = -1.4142135623730950488 * erfinv(1.0 - 2.0 * q)
    else:
        t = -2.0 * math.log(q)
        x = -math.sqrt(t - math.log(t) - 1.8378770664093454836)
    target = math.log(q)
    for _ in range(50):
        ln = log_ndtr(x)
        step = (ln - target) * 2.5066282746310002 * math.exp(ln + 0.5 * x * x)
        x -= step
        if abs(step) <= 1e-16 * abs(x):
            break
    return sign * x


def bessel_i0e(x):
    """``i0(x) e**-|x|``: finite for every ``x`` (the asymptotic series alone past ``|x| = 25``)."""
    a = abs(x * 1.0)
    if a != a:
        return a
    if a <= 25.0:
        return bessel_i0(a) * math.exp(-a)
    return bessel_tail(0.0, a) / math.sqrt(2.0 * math.pi * a)


def bessel_i1e(x):
    """``i1(x) e**-|x|`` (odd), as :func:`bessel_i0e`."""
    y = (x * 1.0)
    a = abs(y)
    if a != a:
        return y
    if a <= 25.0:
        return bessel_i1(y) * math.exp(-a)
    return math.copysign(bessel_tail(4.0, a) / math.sqrt(2.0 * math.pi * a), y)


def spherical_j0(x):
    """``sin(x) / x``, by its Taylor polynomial below ``|x| = 0.5``; 0 at ``±inf``."""
    y = (x * 1.0)
    if abs(y) == math.inf:
        return 0.0
    if abs(y) < 0.5:
        s = y * y
        return 1.0 + s * (-1.0 / 6.0 + s * (1.0 / 120.0 + s * (-1.0 / 5040.0 + s * (
            1.0 / 362880.0 + s * (-1.0 / 39916800.0 + s * (1.0 / 6227020800.0))))))
    return math.sin(y) / y


def poly_degree(n):
    """The degree a polynomial function reads from ``n``: truncated toward zero; -1 (the zero polynomial) for
    negative or nan ``n``."""
    m = (n * 1.0)
    if m != m or m < 0.0:
        return -1
    return int(m)


def chebyshev_three_term(x, k, p0, p1):
    """``p_k`` of the Chebyshev recurrence ``p_{j+1} = 2x p_j - p_{j-1}`` from ``p_0``, ``p_1``."""
    if k == 0:
        return p0
    p, q = p0, p1
    for _ in range(1, k):
        p, q = q, (x + x) * q - p
    return q


def chebyshev_at_one(y, k, kind):
    """The Chebyshev polynomial of ``kind`` (1 to 4: T, U, V, W) of degree ``k >= 0`` at ``y = ±1``."""
    odd = k % 2 == 1
    if kind == 1:
        return -1.0 if (y < 0.0 and odd) else 1.0
    if kind == 2:
        return -(k + 1.0) if (y < 0.0 and odd) else k + 1.0
    if kind == 3:
        if y > 0.0:
            return 1.0
        return -(2.0 * k + 1.0) if odd else 2.0 * k + 1.0
    if y > 0.0:
        return 2.0 * k + 1.0
    return -1.0 if odd else 1.0


def chebyshev(x, n, kind):
    """The Chebyshev polynomial of the first (``kind`` 1, ``T_n``), second (2, ``U_n``), third (3, ``V_n``) or
    fourth (4, ``W_n``) kind: they share the recurrence and differ in ``p_1`` (``x``, ``2x``, ``2x - 1``,
    ``2x + 1``) and in their values at ``±1``."""
    k = poly_degree(n)
    y = x * 1.0
    if k < 0:
        return 0.0
    if abs(y) == 1.0:
        return chebyshev_at_one(y, k, kind)
    if kind == 1:
        first = y
    elif kind == 2:
        first = y + y
    else:
        first = y + y + (1.0 if kind == 4 else -1.0)
    return chebyshev_three_term(y, k, 1.0, first)


def hermite_h(x, n):
    """The physicists' Hermite polynomial ``H_n(x)``: ``H_{j+1} = 2x H_j - 2j H_{j-1}``."""
    k = poly_degree(n)
    y = (x * 1.0)
    if k < 0:
        return 0.0
    if k == 0:
        return 1.0
    p, q = 1.0, y + y
    for j in range(1, k):
        p, q = q, (y + y) * q - 2.0 * j * p
    return q


def hermite_he(x, n):
    """The probabilists' Hermite polynomial ``He_n(x)``: ``He_{j+1} = x He_j - j He_{j-1}``."""
    k = poly_degree(n)
    y = (x * 1.0)
    if k < 0:
        return 0.0
    if k == 0:
        return 1.0
    p, q = 1.0, y
    for j in range(1, k):
        p, q = q, y * q - j * p
    return q


def laguerre_l(x, n):
    """The Laguerre polynomial ``L_n(x)``: ``(j + 1) L_{j+1} = (2j + 1 - x) L_j - j L_{j-1}``."""
    k = poly_degree(n)
    y = (x * 1.0)
    if k < 0:
        return 0.0
    if k == 0 or y == 0.0:
        return 1.0
    p, q = 1.0, 1.0 - y
    for j in range(1, k):
        p, q = q, ((2.0 * j + 1.0 - y) * q - j * p) / (j + 1.0)
    return q


def legendre_p(x, n):
    """The Legendre polynomial ``P_n(x)``: ``(j + 1) P_{j+1} = (2j + 1) x P_j - j P_{j-1}``."""
    k = poly_degree(n)
    y = (x * 1.0)
    if k < 0:
        return 0.0
    if abs(y) == 1.0:
        return 1.0 if (y > 0.0 or k % 2 == 0) else -1.0
    if k == 0:
        return 1.0
    p, q = 1.0, y
    for j in range(1, k):
        p, q = q, ((2.0 * j + 1.0) * y * q - j * p) / (j + 1.0)
    return q


SPECIAL_HELPERS = {f.__name__: f for f in (
    erfcx_positive, erfcx, ndtr, log_ndtr, ndtri, bessel_i0e, bessel_i1e, spherical_j0, poly_degree,
    chebyshev_three_term, chebyshev_at_one, chebyshev, hermite_h, hermite_he, laguerre_l,
    legendre_p)}
HELPERS.update(SPECIAL_HELPERS)
