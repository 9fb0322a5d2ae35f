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


# ----------------------------------------------------------------------------- special functions
# Each takes its arguments as float64 first, so an eager map kernel and a fused loop of any float dtype
# compute the same float64 value and round it once.
_MACHEP = 1.1102230246251565e-16
_MAXLOG = 709.782712893384
_BIG = 4503599627370496.0
_BIGINV = 2.220446049250313e-16
_PSI_10 = 2.25175258906672110764
_PSI_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
          -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
          8.33333333333333333333e-2)
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def sinc(x):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    y = float(x)
    if y == 0.0:
        return 1.0
    y = math.pi * y
    return math.sin(y) / y


def logaddexp(a, b):
    """``log(e**a + e**b)`` from the larger argument: ``m + log1p(e**-|a - b|)``; equal infinities give themselves."""
    x = float(a)
    y = float(b)
    if x == y and (x == math.inf or x == -math.inf):
        return x
    m = x if x > y else y
    return m + math.log1p(math.exp(-abs(x - y)))


def logaddexp2(a, b):
    """``log2(2**a + 2**b)``, as :func:`logaddexp` in base 2."""
    x = float(a)
    y = float(b)
    if x == y and (x == math.inf or x == -math.inf):
        return x
    m = x if x > y else y
    return m + math.log1p(2.0 ** -abs(x - y)) * 1.4426950408889634


def lgamma(x):
    """``log|gamma(x)|``: ``inf`` at the poles (0 and the negative integers) and at ``±inf``."""
    y = float(x)
    if y <= 0.0 and y == trunc(y):
        return math.inf
    return math.lgamma(y)


def digamma(x):
    """The logarithmic derivative of gamma, PyTorch's algorithm: reflection below 0, the recurrence up to 10,
    then the asymptotic series (Cephes' ``psi``). ``-inf``/``inf`` at ``±0``, nan at the negative integers."""
    y = float(x)
    if y == 0.0:
        return math.copysign(math.inf, -y)
    result = 0.0
    if y < 0.0:
        if y == trunc(y):
            return math.nan
        result = -math.pi / math.tan(math.pi * (y - trunc(y)))
        y = 1.0 - y
    while y < 10.0:
        result -= 1.0 / y
        y += 1.0
    if y == 10.0:
        return result + _PSI_10
    p = 0.0
    if y < 1.0e17:
        z = 1.0 / (y * y)
        acc = _PSI_A[0]
        for k in range(1, 7):
            acc = acc * z + _PSI_A[k]
        p = z * acc
    return result + math.log(y) - 0.5 / y - p


def trigamma(x):
    """The derivative of digamma, PyTorch's algorithm: reflection below 0.5, six recurrence steps, then the
    asymptotic series."""
    y = float(x)
    sign = 1.0
    result = 0.0
    if y < 0.5:
        sign = -1.0
        s = math.sin(math.pi * y)
        result -= (math.pi * math.pi) / (s * s)
        y = 1.0 - y
    for _ in range(6):
        result += 1.0 / (y * y)
        y += 1.0
    ixx = 1.0 / (y * y)
    result += (1.0 + 1.0 / (2.0 * y) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / y
    return sign * result


def zeta(s, q):
    """The Hurwitz zeta function ``sum_k (k + q) ** -s`` (Cephes' algorithm: a direct sum, then Euler-Maclaurin)."""
    x = float(s)
    a = float(q)
    if x == 1.0:
        return math.inf
    if x < 1.0:
        return math.nan
    if a <= 0.0:
        if a == floor(a):
            return math.inf
        if x != floor(x):
            return math.nan
    total = a ** -x
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        total += b
        if -_MACHEP * total < b < _MACHEP * total:
            return total
    w = a
    total += b * w / (x - 1.0)
    total -= 0.5 * b
    c = 1.0
    k = 0.0
    for j in range(12):
        c *= x + k
        b /= w
        t = c * b / _ZETA_A[j]
        total = total + t
        if abs(t / total) < _MACHEP:
            return total
        k += 1.0
        c *= x + k
        b /= w
        k += 1.0
    return total


def polygamma(n, x):
    """The ``n``-th derivative of digamma: digamma, trigamma, then ``(-1)**(n+1) n! zeta(n + 1, x)``."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * zeta(n + 1.0, x)


def mvlgamma(x, p):
    """The log of the multivariate gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_i lgamma(x - i / 2)``."""
    y = float(x)
    total = p * (p - 1) * 0.28618247146235004  # log(pi) / 4
    for i in range(int(p)):
        total += lgamma(y - 0.5 * i)
    return total


def bessel_tail(mu, x):
    """The asymptotic series of ``I_nu(x) sqrt(2 pi x) / e**x`` for large ``x``, ``mu = 4 nu**2``."""
    total = 1.0
    term = 1.0
    for k in range(1, 60):
        term *= -(mu - (2.0 * k - 1.0) ** 2) / (8.0 * k * x)
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
    return total


def bessel_i0(x):
    """The modified Bessel function of the first kind of order 0: its power series up to ``|x| = 25``, then the
    asymptotic series (``inf`` where ``e**|x|`` overflows and ``nan`` at ``±inf``, as PyTorch's)."""
    a = abs(float(x))
    if a == math.inf:
        return math.nan
    if a <= 25.0:
        t = 0.25 * a * a
        term = 1.0
        total = 1.0
        k = 1.0
        while term > 1e-17 * total:
            term *= t / (k * k)
            total += term
            k += 1.0
        return total
    return math.exp(a) / math.sqrt(2.0 * math.pi * a) * bessel_tail(0.0, a)


def bessel_i1(x):
    """The modified Bessel function of the first kind of order 1 (odd), as :func:`bessel_i0`."""
    y = float(x)
    a = abs(y)
    if a == math.inf:
        return math.nan
    if a <= 25.0:
        t = 0.25 * a * a
        term = 0.5 * a
        total = term
        k = 1.0
        while term > 1e-17 * total:
            term *= t / (k * (k + 1.0))
            total += term
            k += 1.0
        return math.copysign(total, y)
    return math.copysign(math.exp(a) / math.sqrt(2.0 * math.pi * a) * bessel_tail(4.0, a), y)


def igamma_series(a, x):
    """The power series of the regularized lower incomplete gamma ``P(a, x)`` (``a, x > 0``; Cephes' ``igam``)."""
    ax = a * math.log(x) - x - math.lgamma(a)
    if ax < -_MAXLOG:
        return 0.0
    ax = math.exp(ax)
    r = a
    c = 1.0
    ans = 1.0
    while c > _MACHEP * ans:
        r += 1.0
        c *= x / r
        ans += c
    return ans * ax / a


def igammac_fraction(a, x):
    """The continued fraction of the regularized upper incomplete gamma ``Q(a, x)`` (Cephes' ``igamc``)."""
    ax = a * math.log(x) - x - math.lgamma(a)
    if ax < -_MAXLOG:
        return 0.0
    ax = math.exp(ax)
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2 = 1.0
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    for _ in range(2000):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        t = 1.0
        if qk != 0.0:
            r = pk / qk
            t = abs((ans - r) / r)
            ans = r
        pkm2 = pkm1
        pkm1 = pk
        qkm2 = qkm1
        qkm1 = qk
        if abs(pk) > _BIG:
            pkm2 *= _BIGINV
            pkm1 *= _BIGINV
            qkm2 *= _BIGINV
            qkm1 *= _BIGINV
        if t <= _MACHEP:
            break
    return ans * ax


def igamma(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``, with PyTorch's values at the edges."""
    s = float(a)
    y = float(x)
    if s < 0.0 or y < 0.0 or s != s or y != y:
        return math.nan
    if s == 0.0:
        return math.nan if y == 0.0 else 1.0
    if y == 0.0:
        return 0.0
    if s == math.inf:
        return math.nan if y == math.inf else 0.0
    if y == math.inf:
        return 1.0
    if y > 1.0 and y > s:
        return 1.0 - igammac_fraction(s, y)
    return igamma_series(s, y)


def igammac(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, with PyTorch's edge values."""
    s = float(a)
    y = float(x)
    if s < 0.0 or y < 0.0 or s != s or y != y:
        return math.nan
    if s == 0.0:
        return math.nan if y == 0.0 else 0.0
    if y == 0.0:
        return 1.0
    if s == math.inf:
        return math.nan if y == math.inf else 1.0
    if y == math.inf:
        return 0.0
    if y < 1.0 or y < s:
        return 1.0 - igamma_series(s, y)
    return igammac_fraction(s, y)


def gcd(a, b):
    """The greatest common divisor of two integers, non-negative (Euclid's algorithm)."""
    x = abs(a)
    y = abs(b)
    while y != 0:
        x, y = y, x % y
    return x


def lcm(a, b):
    """The least common multiple of two integers, non-negative; 0 if either is 0."""
    g = gcd(a, b)
    if g == 0:
        return g
    return abs(a // g * b)


HELPERS = {f.__name__: f for f in (
    floor, ceil, trunc, rint, erfinv, pow2, exp_parts, exp_f32, tanh_f32, sinc, logaddexp, logaddexp2, lgamma,
    digamma, trigamma, zeta, polygamma, mvlgamma, bessel_tail, bessel_i0, bessel_i1, igamma_series,
    igammac_fraction, igamma, igammac, gcd, lcm)}
