"""Scalar helpers of the Bessel and Airy functions of ``toolkit.special``: J0, J1, Y0, Y1, K0, K1 and Ai.

Plain float functions that numba compiles, copied into the generated kernels like the helpers of
:mod:`toolkit.backends.cpu.scalar` (added to that module's helper table on import). The algorithms need no
tables of fitted coefficients:

- J and Y of orders 0 and 1: Miller's backward recurrence normalized by ``J0 + 2 (J2 + J4 + ...) = 1``, with
  Neumann's series for Y0 (and its derivative for Y1) summed along the way, up to ``|x| = 25``; Hankel's
  asymptotic expansions beyond;
- K of orders 0 and 1: the power series up to ``x = 2``, Steed's continued fraction beyond;
- Ai: its Maclaurin series on ``[-6.8, 2.1]``, ``sqrt(x / 3) K_{1/3}(zeta) / pi`` to the right and the
  oscillating asymptotic expansion to the left.

Edge values follow PyTorch's (``nan`` for J at ``±inf``, for Y and K at negative ``x``, for Ai at ``±inf``).
"""

from __future__ import annotations

import math

from ..backends.cpu.scalar import HELPERS


def bessel_jy_small(x):
    """``(J0, J1, Y0, Y1)`` at ``0 < x <= 25`` by Miller's backward recurrence (rescaled against overflow);
    below ``1e-40`` the series' leading terms are exact in float64."""
    if x < 1e-40:
        return 1.0, 0.5 * x, 0.63661977236758134308 * (math.log(0.5 * x) + 0.57721566490153286061), \
            -0.63661977236758134308 / x
    top = 2 * int(0.6 * x + 20.0 + 2.0 * math.sqrt(x))
    nxt = 0.0  # J_{j+1}, unnormalized
    cur = 1e-30  # J_j
    norm = 0.0  # 2 (J_2 + J_4 + ...) so far
    s0 = 0.0  # sum_k (-1)**k J_2k / k
    s1 = 0.0  # sum_k (-1)**k (J_2k-1 - J_2k+1) / k, gathered per odd index
    j1 = 0.0
    for j in range(top, 0, -1):
        m = j // 2
        if j % 2 == 0:
            sign = 1.0 if m % 2 == 0 else -1.0
            norm += 2.0 * cur
            s0 += sign * cur / m
        else:
            sign = -1.0 if m % 2 == 0 else 1.0  # (-1)**(m + 1)
            s1 += sign * cur * (1.0 / (m + 1.0) + (1.0 / m if m >= 1 else 0.0))
            if j == 1:
                j1 = cur
        prev = 2.0 * j / x * cur - nxt
        nxt, cur = cur, prev
        if abs(cur) > 1e200:
            cur *= 1e-200
            nxt *= 1e-200
            norm *= 1e-200
            s0 *= 1e-200
            s1 *= 1e-200
            j1 *= 1e-200
    total = norm + cur
    a0 = cur / total
    a1 = j1 / total
    lg = math.log(0.5 * x) + 0.57721566490153286061
    y0 = 0.63661977236758134308 * (lg * a0 - 2.0 * s0 / total)
    y1 = -0.63661977236758134308 * (a0 / x - lg * a1) + 0.63661977236758134308 * s1 / total
    return a0, a1, y0, y1


def bessel_jy_large(nu, x):
    """``(J_nu, Y_nu)`` at ``x > 25`` (``nu`` 0 or 1) by Hankel's asymptotic expansions."""
    mu = 4.0 * nu * nu
    p = 1.0
    q = 0.0
    term = 1.0
    for k in range(1, 60):
        term *= (mu - (2.0 * k - 1.0) ** 2) / (k * 8.0 * x)
        if k % 4 == 1:
            q += term
        elif k % 4 == 2:
            p -= term
        elif k % 4 == 3:
            q -= term
        else:
            p += term
        if abs(term) < 1e-17:
            break
    c, s = math.cos(x), math.sin(x)
    if nu == 0:
        cc, ss = (c + s) * 0.70710678118654752440, (s - c) * 0.70710678118654752440  # cos, sin of x - pi/4
    else:
        cc, ss = (s - c) * 0.70710678118654752440, -(c + s) * 0.70710678118654752440  # of x - 3 pi/4
    scale = math.sqrt(0.63661977236758134308 / x)
    return scale * (p * cc - q * ss), scale * (p * ss + q * cc)


def bessel_j0(x):
    """The Bessel function of the first kind of order 0 (even; ``nan`` at ``±inf``, as PyTorch's)."""
    a = abs(x * 1.0)
    if a != a or a == math.inf:
        return math.nan
    if a == 0.0:
        return 1.0
    if a <= 25.0:
        return bessel_jy_small(a)[0]
    return bessel_jy_large(0, a)[0]


def bessel_j1(x):
    """The Bessel function of the first kind of order 1 (odd; ``nan`` at ``±inf``)."""
    y = (x * 1.0)
    a = abs(y)
    if a != a or a == math.inf:
        return math.nan
    if a == 0.0:
        return y
    v = bessel_jy_small(a)[1] if a <= 25.0 else bessel_jy_large(1, a)[0]
    return v if y > 0.0 else -v


def bessel_y0(x):
    """The Bessel function of the second kind of order 0: ``-inf`` at 0, ``nan`` below 0 and at ``inf``."""
    y = (x * 1.0)
    if y != y or y < 0.0 or y == math.inf:
        return math.nan
    if y == 0.0:
        return -math.inf
    if y <= 25.0:
        return bessel_jy_small(y)[2]
    return bessel_jy_large(0, y)[1]


def bessel_y1(x):
    """The Bessel function of the second kind of order 1: ``-inf`` at 0, ``nan`` below 0 and at ``inf``."""
    y = (x * 1.0)
    if y != y or y < 0.0 or y == math.inf:
        return math.nan
    if y == 0.0:
        return -math.inf
    if y <= 25.0:
        return bessel_jy_small(y)[3]
    return bessel_jy_large(1, y)[1]


def bessel_k_fraction(nu, x):
    """``(K_nu(x) e**x, K_nu+1(x) e**x)`` for ``x >= 2`` and ``|nu| <= 1/2``: Steed's continued fraction."""
    nu2 = nu * nu
    b = 2.0 * (1.0 + x)
    d = 1.0 / b
    h = d
    delh = d
    q1 = 0.0
    q2 = 1.0
    a1 = 0.25 - nu2
    q = a1
    c = a1
    a = -a1
    s = 1.0 + q * delh
    for i in range(2, 10000):
        a -= 2.0 * (i - 1)
        c = -a * c / i
        qnew = (q1 - b * q2) / a
        q1 = q2
        q2 = qnew
        q += c * qnew
        b += 2.0
        d = 1.0 / (b + a * d)
        delh = (b * d - 1.0) * delh
        h += delh
        dels = q * delh
        s += dels
        if abs(dels) < 1e-17 * abs(s):
            break
    h = a1 * h
    k0 = math.sqrt(math.pi / (2.0 * x)) / s
    return k0, k0 * (nu + x + 0.5 - h) / x


def bessel_k_series(x):
    """``(K0(x), K1(x))`` for ``0 < x <= 2`` from their power series (with I0 and I1 alongside)."""
    t = 0.25 * x * x
    lg = math.log(0.5 * x)
    gamma = 0.57721566490153286061
    term = 1.0  # t**k / k!**2
    harmonic = 0.0  # H_k
    i0 = 1.0
    k0 = 0.0
    term1 = 1.0  # t**k / (k! (k+1)!)
    i1 = 1.0
    k1 = 1.0 - 2.0 * gamma  # the k = 0 term of sum (H_k + H_k+1 - 2 gamma) t**k / (k! (k+1)!)
    for k in range(1, 60):
        term *= t / (k * k)
        term1 *= t / (k * (k + 1.0))
        harmonic += 1.0 / k
        i0 += term
        k0 += term * harmonic
        i1 += term1
        k1 += term1 * (2.0 * harmonic + 1.0 / (k + 1.0) - 2.0 * gamma)
        if term < 1e-17 * i0 and term1 < 1e-17 * i1:
            break
    k0 -= (lg + gamma) * i0
    return k0, 1.0 / x + lg * 0.5 * x * i1 - 0.25 * x * k1


def bessel_k(x, order, scaled):
    """``K_order(x)`` (``order`` 0 or 1), times ``e**x`` where ``scaled`` is true: ``inf`` at 0, 0 at ``inf``,
    nan below 0."""
    y = x * 1.0
    if y != y or y < 0.0:
        return math.nan
    if y == 0.0:
        return math.inf
    if y == math.inf:
        return 0.0
    if y <= 2.0:
        k0, k1 = bessel_k_series(y)
        v = k0 if order == 0 else k1
        return v * math.exp(y) if scaled else v
    k0, k1 = bessel_k_fraction(0.0, y)
    v = k0 if order == 0 else k1
    return v if scaled else v * math.exp(-y)


def airy_ai_series(x):
    """Ai(x) from its Maclaurin series (``Ai(0) f(x) + Ai'(0) g(x)``), for moderate ``|x|``."""
    x3 = x * x * x
    f = 1.0
    g = x
    tf = 1.0
    tg = x
    for k in range(1, 200):
        tf *= x3 / ((3.0 * k - 1.0) * (3.0 * k))
        tg *= x3 / ((3.0 * k) * (3.0 * k + 1.0))
        f += tf
        g += tg
        if abs(tf) < 1e-17 * abs(f) and abs(tg) < 1e-17 * (abs(g) + 1e-300):
            break
    return 0.35502805388781723926 * f - 0.25881940379280679840 * g


def airy_ai_oscillating(x):
    """Ai(x) for ``x <= -6.8``: the asymptotic expansion in ``zeta = (2/3) |x|**1.5``."""
    a = -x
    zeta = 2.0 / 3.0 * a * math.sqrt(a)
    p = 1.0
    q = 0.0
    u = 1.0
    last = 1.0
    for k in range(1, 60):
        u *= (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) / ((2.0 * k - 1.0) * 216.0 * k)
        term = u / zeta ** k
        if term > last:  # past the smallest term the asymptotic series diverges
            break
        last = term
        if k % 4 == 1:
            q += term
        elif k % 4 == 2:
            p -= term
        elif k % 4 == 3:
            q -= term
        else:
            p += term
        if term < 1e-17:
            break
    angle = zeta + 0.25 * math.pi
    return (math.sin(angle) * p - math.cos(angle) * q) / (math.sqrt(math.pi) * math.sqrt(math.sqrt(a)))


def airy_ai(x):
    """The Airy function Ai: ``nan`` at ``±inf``, 0 past ``x = 103.892`` (where it underflows), as PyTorch's."""
    y = (x * 1.0)
    if y != y or abs(y) == math.inf:
        return math.nan
    if y > 103.892:
        return 0.0
    if y <= -6.8:
        return airy_ai_oscillating(y)
    if y <= 2.1:
        return airy_ai_series(y)
    zeta = 2.0 / 3.0 * y * math.sqrt(y)
    k13 = bessel_k_fraction(1.0 / 3.0, zeta)[0]
    return math.sqrt(y / 3.0) * k13 * math.exp(-zeta) / math.pi


BESSEL_HELPERS = {f.__name__: f for f in (
    bessel_jy_small, bessel_jy_large, bessel_j0, bessel_j1, bessel_y0, bessel_y1, bessel_k_fraction,
    bessel_k_series, bessel_k, airy_ai_series, airy_ai_oscillating, airy_ai)}
HELPERS.update(BESSEL_HELPERS)
