"""PyTorch's CPU sampling algorithms over a ``Generator``, producing numpy arrays.

Each function reproduces one ATen CPU kernel: which words it draws (32- or
64-bit), how it turns them into values, and in which order, so the results
equal PyTorch's for the same seed bit for bit. They return ``n`` values in the
order PyTorch writes them (memory order of the output).
"""

from __future__ import annotations

import math

import numpy as np

from ._fma import fma_scalar
from ._generator import Generator

_MASK24 = np.uint32((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_NUMBA_SCALAR_MIN = 16  # scalar-path draws this long use the compiled loop


def _kernels():
    from . import _rng_numba  # optional: numba, never loaded by import toolkit

    return _rng_numba


def uniform01_f64(gen: Generator, n: int) -> np.ndarray:
    """53-bit uniforms in [0, 1) from 64-bit draws (``uniform_real_distribution<double>``)."""
    x = (gen.random64(n) & _MASK53).astype(np.float64)
    x *= 2.0 ** -53
    return x


def uniform01_f32(gen: Generator, n: int) -> np.ndarray:
    """24-bit uniforms in [0, 1) from 32-bit draws (``uniform_real_distribution<float>``)."""
    u = gen.random32(n)
    np.bitwise_and(u, _MASK24, out=u)
    x = u.astype(np.float32)
    x *= np.float32(2.0 ** -24)
    return x


def uniform(gen: Generator, n: int, dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """``uniform_(low, high)``: ``x * (high - low) + low`` fused, in the tensor's precision."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        x, scale, shift = uniform01_f64(gen, n), float(high) - float(low), float(low)
    else:  # float32, and float16 computed in float32
        x = uniform01_f32(gen, n)
        scale, shift = np.float32(high) - np.float32(low), np.float32(low)
    if n and (scale != 1 or shift != 0):
        _kernels().affine(x, x.dtype.type(scale), x.dtype.type(shift))
    return x.astype(dtype, copy=False)


def normal(gen: Generator, n: int, dtype: np.dtype, mean: float, std: float, contiguous: bool = True) -> np.ndarray:
    """``normal_(mean, std)``: PyTorch's vectorized Box-Muller for contiguous tensors of 16 or more
    elements, its scalar Box-Muller (with the generator's cached second sample) otherwise."""
    dtype = np.dtype(dtype)
    if n >= 16 and contiguous:
        k = _kernels()
        if dtype == np.float64:
            draw, fill, m, s = uniform01_f64, k.normal_fill_f64, float(mean), float(std)
        else:
            draw, fill, m, s = uniform01_f32, k.normal_fill_f32, np.float32(mean), np.float32(std)
        d = draw(gen, n)
        fill(d, m, s)
        if n % 16:
            tail = draw(gen, 16)
            fill(tail, m, s)
            d[n - 16:] = tail
        return d.astype(dtype, copy=False)
    return _normal_scalar(gen, n, float(mean), float(std)).astype(dtype)


def _normal_scalar(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``at::normal_distribution<double>`` called once per element, in double."""
    out = np.empty(n, dtype=np.float64)
    i = 0
    if n and gen._next_double is not None:
        out[0] = gen._next_double
        gen._next_double = None
        i = 1
    m = n - i
    pairs = (m + 1) // 2
    if pairs:
        u = uniform01_f64(gen, 2 * pairs)
        raw = np.empty(2 * pairs, dtype=np.float64)
        if m >= _NUMBA_SCALAR_MIN:
            _kernels().box_muller_pairs(u, raw)
        else:
            for k in range(pairs):
                r = math.sqrt(-2.0 * math.log1p(-u[2 * k + 1]))
                theta = 2.0 * math.pi * u[2 * k]
                raw[2 * k] = r * math.cos(theta)
                raw[2 * k + 1] = r * math.sin(theta)
        out[i:] = raw[:m]
        if m % 2:
            gen._next_double = float(raw[-1])
    if std != 1.0 or mean != 0.0:
        if n >= _NUMBA_SCALAR_MIN:
            _kernels().affine(out, std, mean)
        else:
            out = np.array([fma_scalar(float(v), std, mean) for v in out], dtype=np.float64)
    return out


def exponential(gen: Generator, n: int, dtype: np.dtype, lambd: float) -> np.ndarray:
    """``exponential_(lambd)``: ``-1/lambd * log1p(-u)`` over 53-bit uniforms."""
    u = uniform01_f64(gen, n)
    out = np.empty(n, dtype=np.float64)
    if n >= _NUMBA_SCALAR_MIN:
        _kernels().exponential_from(u, float(lambd), out)
    else:
        scale = -1.0 / lambd
        for i in range(n):
            out[i] = scale * math.log1p(-u[i])
    return out.astype(dtype, copy=False)


def bernoulli_scalar(gen: Generator, n: int, p: float) -> np.ndarray:
    """``bernoulli_(p)`` for a number p: a 53-bit uniform below p."""
    return uniform01_f64(gen, n) < p


def bernoulli_tensor(gen: Generator, p: np.ndarray) -> np.ndarray:
    """``bernoulli_(p)`` for a tensor p (flattened in output order): float64 p compares 53-bit
    uniforms in double, other dtypes 24-bit uniforms in float."""
    n = p.size
    if p.dtype == np.float64:
        return uniform01_f64(gen, n) < p
    return uniform01_f32(gen, n) < p.astype(np.float32)


# Modulus of ``random_()`` without bounds, per dtype: (draw 64 bits?, modulus; 0 means "& 1").
_RANDOM_FULL = {
    "int64": (True, 1 << 63), "float64": (True, (1 << 53) + 1), "float32": (False, (1 << 24) + 1),
    "float16": (False, (1 << 11) + 1), "int32": (False, 1 << 31), "int16": (False, 1 << 15),
    "int8": (False, 1 << 7), "uint8": (False, 1 << 8), "bool": (False, 0),
}


def random_full(gen: Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """``random_()``: integers in [0, 2**mantissa] for floats, [0, max] for integers."""
    dtype = np.dtype(dtype)
    wide, mod = _RANDOM_FULL[dtype.name]
    v = gen.random64(n) if wide else gen.random32(n).astype(np.uint64)
    if mod == 0:
        return (v & np.uint64(1)).astype(dtype)
    return (v % np.uint64(mod)).astype(np.int64).astype(dtype)


def random_range(gen: Generator, n: int, dtype: np.dtype, low: int, span: int) -> np.ndarray:
    """``random_(low, low + span)``: ``draw % span + low``, with 64-bit draws for spans of 2**28 or more."""
    dtype = np.dtype(dtype)
    if span >= 1 << 28:
        v = gen.random64(n)
    else:
        v = gen.random32(n).astype(np.uint64)
    v = (v % np.uint64(span)) + np.uint64(low & 0xFFFFFFFFFFFFFFFF)
    return v.view(np.int64).astype(dtype)


def random_int64_full(gen: Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """``random_(-2**63, None)``: every int64 value equally likely."""
    return gen.random64(n).view(np.int64).astype(dtype)


def randperm(gen: Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """PyTorch's shuffle: Fisher-Yates with ``random() % (n - i)`` for n < 2**32 / 20, an
    inside-out shuffle with 64-bit draws beyond."""
    out = np.empty(n, dtype=np.int64)
    if n < (2 ** 32 - 1) // 20:
        if n < 64:
            out[:] = np.arange(n)
            words = gen.random32(max(n - 1, 0))
            for i in range(n - 1):
                z = int(words[i]) % (n - i) + i
                out[i], out[z] = out[z], out[i]
        else:
            _kernels().randperm_fill(gen.random32(n - 1), out)
    else:
        _kernels().randperm_fill_large(gen._mt, gen._pos, out)
    return out.astype(dtype, copy=False)


def multinomial_with_replacement(gen: Generator, probs: np.ndarray, n_sample: int) -> np.ndarray:
    """Per row: the normalized cumulative distribution in the input's precision, then a binary
    search for each 53-bit uniform (rows drawn one after another)."""
    acc = np.float32 if probs.dtype == np.float16 else probs.dtype
    rows = probs.reshape(-1, probs.shape[-1]).astype(acc)
    out = np.empty((rows.shape[0], n_sample), dtype=np.int64)
    for i, row in enumerate(rows):
        cum = np.cumsum(row, dtype=acc)
        total = cum[-1]
        cum = (cum / total).astype(acc)
        cum[-1] = 1
        u = uniform01_f64(gen, n_sample)
        out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out.reshape(probs.shape[:-1] + (n_sample,))


def cauchy(gen: Generator, n: int, dtype: np.dtype, median: float, sigma: float) -> np.ndarray:
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))`` in double over 53-bit uniforms."""
    u = uniform01_f64(gen, n)
    out = np.empty(n, dtype=np.float64)
    if n >= _NUMBA_SCALAR_MIN:
        _kernels().cauchy_from(u, float(median), float(sigma), out)
    else:  # the C library's tan (numpy's vectorized one can differ in the last bit)
        for i, v in enumerate(u.tolist()):
            out[i] = median + sigma * math.tan(math.pi * (v - 0.5))
    return out.astype(dtype, copy=False)


def log_normal(gen: Generator, n: int, dtype: np.dtype, mean: float, std: float) -> np.ndarray:
    """``log_normal_(mean, std)``: ``exp`` of PyTorch's scalar (double) normal sampler."""
    z = _normal_scalar(gen, n, float(mean), float(std))
    # the C library's exp (numpy's vectorized exp differs from it in the last bit now and then)
    if n >= _NUMBA_SCALAR_MIN:
        _kernels().exp_inplace(z)
    else:
        z = np.array([math.exp(v) for v in z.tolist()], dtype=np.float64)
    return z.astype(dtype, copy=False)


def geometric(gen: Generator, n: int, dtype: np.dtype, p: float) -> np.ndarray:
    """``geometric_(p)``: trials to the first success, ``ceil(log(u) / log1p(-p))`` in double."""
    u = uniform01_f64(gen, n)
    with np.errstate(divide="ignore"):
        k = np.ceil(np.log(u) / math.log1p(-p))
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return k.astype(np.int64).astype(dtype)
    return k.astype(dtype)


def poisson(gen: Generator, rates: np.ndarray) -> np.ndarray:
    """One Poisson sample per rate (rates flattened in output order), as int64 counts."""
    out = np.empty(rates.size, dtype=np.int64)
    if rates.size:
        _kernels().poisson_fill(gen._mt, gen._pos, np.ascontiguousarray(rates, dtype=np.float64), out)
    return out


def binomial(gen: Generator, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """One binomial sample per (count, prob) pair (flattened in output order), in double."""
    out = np.empty(count.size, dtype=np.float64)
    if count.size:
        _kernels().binomial_fill(gen._mt, gen._pos, np.ascontiguousarray(count, dtype=np.float64),
                                 np.ascontiguousarray(prob, dtype=np.float64), out)
    return out


def _gamma_kernels():
    from . import _gamma_numba  # optional: numba, never loaded by import toolkit

    return _gamma_numba


def standard_gamma(gen: Generator, alpha: np.ndarray, single: bool) -> np.ndarray:
    """One standard gamma draw per alpha (flattened in output order), in double, as ATen's ``sample_gamma``
    draws them: its rejection loop takes 53-bit uniforms and double normals (with the generator's cached
    second Box-Muller value) straight from the stream. ``single``: float32 alphas, whose boost and shift ATen
    computes in float."""
    out = np.empty(alpha.size, dtype=np.float64)
    if alpha.size:
        cache = np.array([0.0, 0.0] if gen._next_double is None else [1.0, gen._next_double])
        _gamma_kernels().standard_gamma_fill(gen._mt, gen._pos, cache, np.ascontiguousarray(alpha, np.float64),
                                             single, out)
        gen._next_double = float(cache[1]) if cache[0] else None
    return out


def dirichlet(gen: Generator, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet draws over the last dim of ``alpha`` (C order), in ``alpha``'s dtype: gamma draws in double
    (at least the smallest normal double), normalized, then kept inside ``[tiny, 1)`` of the dtype."""
    gamma = standard_gamma(gen, alpha.reshape(-1), single=False).reshape(alpha.shape)
    gamma = np.where(gamma > _DBL_MIN, gamma, _DBL_MIN)  # NaN goes to the minimum too, as std::max does
    k = alpha.shape[-1]
    sums = np.empty(gamma.size // k if k else 0, dtype=np.float64)
    if sums.size:
        _gamma_kernels().aten_row_sums(gamma.reshape(-1), k, sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (gamma / sums.reshape(gamma.shape[:-1] + (1,))).astype(alpha.dtype)
    tiny = np.finfo(alpha.dtype).tiny
    below_one = np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))
    return np.minimum(below_one, np.where(ratio > tiny, ratio, tiny))


_DBL_MIN = np.finfo(np.float64).tiny
