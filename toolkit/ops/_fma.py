"""Correctly rounded fused multiply-add over arrays.

PyTorch's CPU kernels are compiled with floating-point contraction, so
expressions such as ``start + step * i`` (linspace) or ``x * (to - from) + from``
(uniform_) round once, as an FMA. Reproducing them bit for bit needs a real FMA:
exact rational arithmetic for short arrays, LLVM's ``llvm.fma`` (through numba,
loaded on first use) for long ones.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

_COMPILED_MIN = 2048


def fma_scalar(a: float, b: float, c: float) -> float:
    """``a * b + c`` with one rounding to double."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def fma(a, b, c, dtype) -> np.ndarray:
    """Elementwise ``a * b + c`` rounded once to ``dtype`` (float32 or float64), with broadcasting."""
    dtype = np.dtype(dtype)
    a, b, c = np.broadcast_arrays(*(np.asarray(x, dtype=dtype) for x in (a, b, c)))
    out = np.empty(a.shape, dtype=dtype)
    if out.size >= _COMPILED_MIN:
        from ._rng_numba import fma_arrays  # optional: numba, never loaded by import toolkit

        fma_arrays(np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1),
                   np.ascontiguousarray(c).reshape(-1), out.reshape(-1))
        return out
    flat = out.reshape(-1)
    rnd = float if dtype == np.float64 else _round_f32
    for i, (x, y, z) in enumerate(zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(), c.reshape(-1).tolist())):
        flat[i] = rnd(Fraction(x) * Fraction(y) + Fraction(z))
    return out


def _round_f32(exact: Fraction) -> np.float32:
    """The float32 nearest to an exact rational (ties to even), avoiding double rounding."""
    f = np.float32(float(exact))
    if not np.isfinite(f) or Fraction(float(f)) == exact:
        return f
    g = np.nextafter(f, np.float32(np.inf) if Fraction(float(f)) < exact else np.float32(-np.inf))
    df, dg = abs(Fraction(float(f)) - exact), abs(Fraction(float(g)) - exact)
    if df != dg:
        return f if df < dg else g
    return f if int(f.view(np.uint32)) % 2 == 0 else g
