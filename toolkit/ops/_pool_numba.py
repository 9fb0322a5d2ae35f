"""Compiled max-pooling loops: values and PyTorch's flat per-plane indices in one pass, and their scatter back.

Imported only when max pooling first runs, so ``import toolkit`` never loads
numba; the compiled functions are cached on disk. The loops are serial on
purpose: numba's worker threads and BLAS's threads (busy right before and
after, in the convolutions around a pooling layer) fight over the cores, which
measured twice as slow for the seed's Net on two cores.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def max_pool2d_fwd(x, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """``x`` is (planes, H, W); returns (values, indices) of shape (planes, ho, wo), NaN winning as in PyTorch."""
    planes, h, w = x.shape
    out = np.empty((planes, ho, wo), x.dtype)
    idx = np.empty((planes, ho, wo), np.int64)
    for p in range(planes):
        for i in range(ho):
            hs = i * sh - ph
            for j in range(wo):
                ws = j * sw - pw
                best = x[p, 0, 0]
                bi = -1
                for a in range(kh):
                    y = hs + a * dh
                    if y < 0 or y >= h:
                        continue
                    for b in range(kw):
                        xx = ws + b * dw
                        if xx < 0 or xx >= w:
                            continue
                        v = x[p, y, xx]
                        if bi < 0 or v > best or v != v:
                            best = v
                            bi = y * w + xx
                out[p, i, j] = best
                idx[p, i, j] = bi
    return out, idx


@numba.njit(cache=True)
def max_pool2d_bwd(g, idx, hw):
    """Scatter-add ``g`` (planes, L) into zeros (planes, hw) at ``idx`` (planes, L)."""
    planes, n = g.shape
    out = np.zeros((planes, hw), g.dtype)
    for p in range(planes):
        for k in range(n):
            out[p, idx[p, k]] += g[p, k]
    return out
