"""Compiled loops of the gamma family's samplers and of their reparametrized gradients.

The samplers are ATen's CPU gamma sampler (Marsaglia and Tsang's squeeze method, with the
``alpha < 1`` boost) drawing straight from the mt19937 stream: 53-bit uniforms and the
double-precision Box-Muller normals whose second value the generator caches. Each element
draws as many words as its rejection loop needs, so the generator advances exactly as
PyTorch's does. The gradients are ATen's approximations of ``-(dCDF/dalpha) / pdf`` (a Taylor
series, a saddle-point expansion and rational fits, chosen by region), computed in double.

Imported only when a gamma op first runs, so ``import toolkit`` never loads numba.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ._rng_numba import mt_fill

_THIRD_F32 = np.float32(1.0) / np.float32(3.0)  # the sampler's 1/3 is a single-precision constant
_THIRD = float(_THIRD_F32)
_SQUEEZE = float(np.float32(0.0331))
_TWO_PI = 2.0 * math.pi
_BLOCK = 4096  # uniforms made ahead at a time
_MASK53 = np.uint64((1 << 53) - 1)
_SHIFT32 = np.uint64(32)
# single-precision literals of ATen's formulas, compared and multiplied in double
_F08, _F09, _F11, _F1E17 = (float(np.float32(v)) for v in (0.8, 0.9, 1.1, 1e17))


@numba.njit(cache=True)
def _fill_uniforms(mt, pos, words, ub, start):
    """``ub[start:]`` = the next 53-bit uniforms of the stream (``words`` is scratch of twice that length)."""
    m = ub.size - start
    mt_fill(mt, pos, words[:2 * m])
    for j in range(m):
        hi = np.uint64(words[2 * j])
        lo = np.uint64(words[2 * j + 1])
        ub[start + j] = np.float64(((hi << _SHIFT32) | lo) & _MASK53) * (2.0 ** -53)


@numba.njit(cache=True)
def _gamma_one(ub, k, n, cv, cval, alpha, single):
    """One standard gamma draw in double from the uniforms ``ub[k:n]``, with the spare normal ``cval`` valid
    when ``cv``; ``single`` does the steps ATen does in float for float32 input. Returns the draw, the next
    ``k``, whether ``ub`` held enough uniforms (else nothing was decided: retry with more) and the spare."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0, k, True, cv, cval
        if single:
            exponent = np.float64(np.float32(1.0) / np.float32(alpha))
            boosted = np.float64(np.float32(alpha) + np.float32(1.0))
        else:
            exponent = 1.0 / alpha
            boosted = alpha + 1.0
        if k >= n:
            return 0.0, k, False, cv, cval
        scale *= math.pow(1.0 - ub[k], exponent)
        k += 1
        alpha = boosted
    if single:
        d = np.float64(np.float32(alpha) - _THIRD_F32)
    else:
        d = alpha - _THIRD
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        y = 0.0
        x = 0.0
        while y <= 0:  # at::normal_distribution<double>: the spare value, else a Box-Muller pair
            if cv:
                cv = False
                x = cval
            else:
                if k + 2 > n:
                    return 0.0, k, False, cv, cval
                r = math.sqrt(-2.0 * math.log1p(-ub[k + 1]))
                theta = _TWO_PI * ub[k]
                k += 2
                cv = True
                cval = r * math.sin(theta)
                x = r * math.cos(theta)
            y = 1.0 + c * x
        v = y * y * y
        if k >= n:
            return 0.0, k, False, cv, cval
        u = 1.0 - ub[k]
        k += 1
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx:
            return scale * d * v, k, True, cv, cval
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v, k, True, cv, cval


@numba.njit(cache=True)
def standard_gamma_fill(mt, pos, cache, alpha, single, out):
    """One draw per element of ``alpha`` (float64, in output order) into ``out`` (float64); ``cache`` holds
    the generator's spare normal (``cache[0]`` is 1 when it is valid, ``cache[1]`` its value).

    Uniforms are made ahead in blocks from a copy of the generator (one word at a time costs many times
    more); at the end the generator itself advances by exactly the words the draws used."""
    ahead_mt = mt.copy()
    ahead_pos = pos.copy()
    ub = np.empty(_BLOCK)
    words = np.empty(2 * _BLOCK, np.uint32)
    _fill_uniforms(ahead_mt, ahead_pos, words, ub, 0)
    k = 0
    used = 0  # uniforms consumed before ub[0]
    cv = cache[0] != 0.0
    cval = cache[1]
    for i in range(alpha.size):
        while True:
            value, k2, ok, cv2, cval2 = _gamma_one(ub, k, ub.size, cv, cval, alpha[i], single)
            if ok:
                break
            rest = ub.size - k  # too few uniforms left for this element: keep the rest, draw more
            if k == 0:
                grown = np.empty(2 * ub.size)
                grown[:rest] = ub
                ub = grown
                words = np.empty(2 * ub.size, np.uint32)
            else:
                ub[:rest] = ub[k:].copy()
                used += k
                k = 0
            _fill_uniforms(ahead_mt, ahead_pos, words, ub, rest)
        out[i] = value
        k, cv, cval = k2, cv2, cval2
    used += k
    while used > 0:  # advance the generator itself past the words used
        m = min(used, _BLOCK)
        mt_fill(mt, pos, words[:2 * m])
        used -= m
    cache[0] = 1.0 if cv else 0.0
    cache[1] = cval


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = np.array([8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                       -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                       8.33333333333333333333E-2])


@numba.njit(cache=True)
def _digamma(t, x):
    """Cephes' digamma as ATen's samplers use it, for an argument of type ``t`` (``np.float32`` or
    ``np.float64``): the recurrence up to 10 steps in ``t`` and sums in double, then the asymptotic series."""
    if x == 0:
        return t(math.inf)
    extra = 0.0
    if x < 0:
        if x == np.floor(x):
            return t(math.inf)
        extra = np.float64(-t(math.pi) / math.tan(t(math.pi) * x))
        x = t(1) - x
    result = 0.0
    while x < 10:
        result -= t(1) / x
        x += t(1)
    if x == 10:
        return t(result + _PSI_10 + extra)
    y = 0.0
    if x < _F1E17:
        z = 1.0 / np.float64(x * x)
        poly = _DIGAMMA_A[0]
        for k in range(1, 7):
            poly = poly * z + _DIGAMMA_A[k]
        y = z * poly
    return t(result + math.log(x) - (t(0.5) / x) - y + extra)


_GAMMA_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


@numba.njit(cache=True)
def _gamma_grad_one(alpha, x):
    """``dx/dalpha`` of a standard gamma draw ``x``: a Taylor series below x = 0.8, a saddle-point expansion
    for alpha above 8, a bivariate rational fit in ``log(x / alpha)`` and ``log(alpha)`` between."""
    if x < _F08:
        numer = 1.0
        denom = alpha
        series1 = numer / denom
        series2 = numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            series1 += numer / denom
            series2 += numer / (denom * denom)
        pow_x_alpha = math.pow(x, alpha)
        pdf = math.pow(x, alpha - 1) * math.exp(-x)
        cdf = pow_x_alpha * series1
        cdf_alpha = (math.log(x) - _digamma(np.float64, alpha)) * cdf - pow_x_alpha * series2
        result = -cdf_alpha / pdf
        return 0.0 if math.isnan(result) else result
    if alpha > 8.0:
        if _F09 * alpha <= x <= _F11 * alpha:
            numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
            numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                       + alpha * (107 + 3600 * x))
            denom = 1244160 * (alpha * alpha) * (alpha * alpha)
            return numer_1 * numer_2 / denom
        denom = math.sqrt(8 * alpha)
        term2 = denom / (alpha - x)
        term3 = math.pow(x - alpha - alpha * math.log(x / alpha), -1.5)
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = math.log(x / alpha) * term23 - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        return -stirling * (x * term1) / denom
    u = math.log(x / alpha)
    v = math.log(alpha)
    cv = np.empty(8)
    for i in range(8):
        cv[i] = _GAMMA_UV[0, i] + u * (_GAMMA_UV[1, i] + u * _GAMMA_UV[2, i])
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return math.exp(p / q)


@numba.njit(cache=True)
def standard_gamma_grad_fill(alpha, x, out):
    """``out[i] = dx/dalpha`` at ``(alpha[i], x[i])`` (float64 arrays of one length)."""
    for i in range(out.size):
        out[i] = _gamma_grad_one(alpha[i], x[i])


@numba.njit(cache=True)
def _beta_grad_alpha_small(t, x, alpha, beta):
    """``d x / d alpha`` of ``Beta(alpha, beta)`` near x = 0, divided by ``1 - x``: a Taylor series in x,
    in the input's precision ``t`` (as ATen computes it)."""
    factor = _digamma(t, alpha) - _digamma(t, alpha + beta) - math.log(x)
    numer = t(1)
    series = numer / alpha * (factor + t(1) / alpha)
    for i in range(1, 11):
        ti = t(i)
        numer *= (ti - beta) * x / ti
        denom = alpha + ti
        series += numer / denom * (factor + t(1) / denom)
    result = x * math.pow(t(1) - x, -beta) * series
    return t(0) if math.isnan(result) else result


@numba.njit(cache=True)
def _beta_grad_beta_small(t, x, alpha, beta):
    """``d x / d beta`` of ``Beta(alpha, beta)`` near x = 0 (used mirrored, for x near 1), in precision ``t``."""
    factor = _digamma(t, alpha + beta) - _digamma(t, beta)
    numer = t(1)
    betas = t(1)
    dbetas = t(0)
    series = factor / alpha
    for i in range(1, 9):
        ti = t(i)
        numer *= -x / ti
        dbetas = dbetas * (beta - ti) + betas
        betas = betas * (beta - ti)
        series += numer / (alpha + ti) * (dbetas + factor * betas)
    result = -math.pow(t(1) - x, t(1) - beta) * series
    return t(0) if math.isnan(result) else result


@numba.njit(cache=True)
def _beta_grad_alpha_mid(x, alpha, beta):
    """The same derivative for large alpha and beta: a saddle-point expansion (a polynomial near the mean,
    where the expansion is singular)."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        b2 = beta * beta
        poly = 47 * x * b2 * b2 + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                        8 * (1 - x) * (135 * beta - 11)))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = math.sqrt(2 * alpha / beta) * math.pow(total, 1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x))
    term4 = math.pow(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + (term4 if x < mean else -term4))
    return stirling * prefactor * term1234


# Rational correction to the analytic approximation: [numerator, denominator][power of u][power of a][power of b].
_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


@numba.njit(cache=True)
def _dirichlet_grad_one(t, x, alpha, total):
    """``-(dCDF/dalpha) / pdf / (1 - x)`` for ``x ~ Beta(alpha, total - alpha)``, by region; the inputs are of
    type ``t``, and the near-0 and near-1 series run in it, the rest in double (as in ATen)."""
    beta = total - alpha
    boundary = total * x * (t(1) - x)
    if x <= 0.5 and boundary < 2.5:
        return np.float64(_beta_grad_alpha_small(t, x, alpha, beta))
    if x >= 0.5 and boundary < 0.75:
        return -np.float64(_beta_grad_beta_small(t, t(1) - x, beta, alpha))
    xd = np.float64(x)
    ad = np.float64(alpha)
    td = np.float64(total)
    if alpha > 6 and beta > 6:
        return _beta_grad_alpha_mid(xd, ad, td - ad)
    u = math.log(xd)
    a = math.log(ad) - u
    b = math.log(td) - a
    p = 0.0
    q = 0.0
    pow_u = 1.0
    for i in range(3):
        pow_a = 1.0
        for j in range(3):
            ua = pow_u * pow_a
            cp = _DIRICHLET_C[0, i, j]
            cq = _DIRICHLET_C[1, i, j]
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
            pow_a = a if j == 0 else a * a
        pow_u = u if i == 0 else u * u
    approx = xd * np.float64(_digamma(t, t(td)) - _digamma(t, t(ad))) / (td - ad)
    return p / q * approx


@numba.njit(cache=True)
def dirichlet_grad_fill(t, x, alpha, total, out):
    """``out[i]`` = the scaled Beta gradient at ``(x[i], alpha[i], total[i])`` (arrays of one length and of
    dtype ``t``; ``out`` is float64)."""
    for i in range(out.size):
        out[i] = _dirichlet_grad_one(t, x[i], alpha[i], total[i])


# --------------------------------------------------------------------------------------------
# The Dirichlet's normalizing sums, added in the order of ATen's CPU sum over a contiguous last dim.
# --------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _ilp_sum(row, start, w, n):
    """ATen's ``row_sum`` over ``n`` units of ``w`` consecutive values (one value, or one SIMD vector) from
    ``row[start]``: four interleaved accumulators, cascaded in levels of 16 steps, folded into the first."""
    size = n // 4
    ceil_log2 = 1 if size <= 2 else _bit_length(size - 1)
    level_power = max(4, ceil_log2 // 4)
    level_step = 1 << level_power
    level_mask = level_step - 1
    acc = np.zeros((4, 4, w))
    i = 0
    while i + level_step <= size:
        for _ in range(level_step):
            _add_group(acc, row, start + i * 4 * w, w)
            i += 1
        for j in range(1, 4):
            for k in range(4):
                for lane in range(w):
                    acc[j, k, lane] += acc[j - 1, k, lane]
                    acc[j - 1, k, lane] = 0.0
            if (i & (level_mask << (j * level_power))) != 0:
                break
    while i < size:
        _add_group(acc, row, start + i * 4 * w, w)
        i += 1
    for j in range(1, 4):
        for k in range(4):
            for lane in range(w):
                acc[0, k, lane] += acc[j, k, lane]
    for u in range(size * 4, n):
        for lane in range(w):
            acc[0, 0, lane] += row[start + u * w + lane]
    for k in range(1, 4):
        for lane in range(w):
            acc[0, 0, lane] += acc[0, k, lane]
    return acc[0, 0]


@numba.njit(cache=True)
def _add_group(acc, row, base, w):
    """Add the next four units (one per accumulator) into the first level."""
    for k in range(4):
        for lane in range(w):
            acc[0, k, lane] += row[base + k * w + lane]


@numba.njit(cache=True)
def _bit_length(v):
    n = 0
    while v:
        v >>= 1
        n += 1
    return n


@numba.njit(cache=True)
def aten_row_sums(g, k, out):
    """Sums of the rows of length ``k`` of ``g`` (C order, float64) as ATen's CPU sum adds them: rows of at
    least 4 values in vectors of 4 (its sum kernels stay with AVX2's width even where AVX512 runs): the
    leftover values first, then the vector's lanes; shorter rows one value at a time."""
    lanes = 4
    for r in range(out.size):
        start = r * k
        if k >= lanes:
            n_vec = k // lanes
            vec = _ilp_sum(g, start, lanes, n_vec)
            total = 0.0
            for t in range(n_vec * lanes, k):
                total += g[start + t]
            for lane in range(lanes):
                total += vec[lane]
        else:
            total = _ilp_sum(g, start, 1, k)[0]
        out[r] = total
