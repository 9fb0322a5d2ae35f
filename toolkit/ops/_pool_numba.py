"""Compiled max-pooling loops: values and PyTorch's flat per-plane indices in one pass, and their scatter back.

``max_pool2d_fwd`` and ``max_pool3d_fwd`` slide a (dilated) kernel;
``window_max_fwd`` takes each output's window from start/end tables, which is
what adaptive and fractional max pooling need; ``max_pool2d_bwd`` scatters for
all of them (it only sees flat indices within a plane).

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
def max_pool2d_fwd_inside(x, kh, kw, sh, sw, ho, wo):
    """``max_pool2d_fwd`` without padding or dilation and with every window inside the plane (the common
    case): no bounds tests in the inner loops (about 1.3x faster for 2x2 windows)."""
    planes, h, w = x.shape
    out = np.empty((planes, ho, wo), x.dtype)
    idx = np.empty((planes, ho, wo), np.int64)
    for p in range(planes):
        for i in range(ho):
            hs = i * sh
            for j in range(wo):
                ws = j * sw
                best = x[p, hs, ws]
                bi = hs * w + ws
                for a in range(hs, hs + kh):
                    for b in range(ws, ws + kw):
                        v = x[p, a, b]
                        if v > best or v != v:
                            best = v
                            bi = a * w + b
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


@numba.njit(cache=True)
def max_pool3d_fwd(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, do, ho, wo):
    """``x`` is (planes, D, H, W); returns (values, flat per-plane indices) of shape (planes, do, ho, wo)."""
    planes, d, h, w = x.shape
    out = np.empty((planes, do, ho, wo), x.dtype)
    idx = np.empty((planes, do, ho, wo), np.int64)
    for p in range(planes):
        for t in range(do):
            ds = t * sd - pd
            for i in range(ho):
                hs = i * sh - ph
                for j in range(wo):
                    ws = j * sw - pw
                    best = x[p, 0, 0, 0]
                    bi = -1
                    for a in range(kd):
                        z = ds + a * dd
                        if z < 0 or z >= d:
                            continue
                        for b in range(kh):
                            y = hs + b * dh
                            if y < 0 or y >= h:
                                continue
                            for c in range(kw):
                                xx = ws + c * dw
                                if xx < 0 or xx >= w:
                                    continue
                                v = x[p, z, y, xx]
                                if bi < 0 or v > best or v != v:
                                    best = v
                                    bi = (z * h + y) * w + xx
                    out[p, t, i, j] = best
                    idx[p, t, i, j] = bi
    return out, idx


@numba.njit(cache=True)
def window_max_fwd(x, starts_d, ends_d, starts_h, ends_h, starts_w, ends_w):
    """Max over per-plane windows given by start/end tables, each (planes, n) for its dimension.

    ``x`` is (planes, D, H, W); adaptive pooling passes the same windows for every
    plane, fractional pooling each plane's own. Returns values and flat per-plane
    indices, NaN winning as in PyTorch.
    """
    planes, d, h, w = x.shape
    do, ho, wo = starts_d.shape[1], starts_h.shape[1], starts_w.shape[1]
    out = np.empty((planes, do, ho, wo), x.dtype)
    idx = np.empty((planes, do, ho, wo), np.int64)
    for p in range(planes):
        for t in range(do):
            for i in range(ho):
                for j in range(wo):
                    z0, y0, x0 = starts_d[p, t], starts_h[p, i], starts_w[p, j]
                    best = x[p, z0, y0, x0]
                    bi = (z0 * h + y0) * w + x0
                    for z in range(z0, ends_d[p, t]):
                        for y in range(y0, ends_h[p, i]):
                            for xx in range(x0, ends_w[p, j]):
                                v = x[p, z, y, xx]
                                if v > best or v != v:
                                    best = v
                                    bi = (z * h + y) * w + xx
                    out[p, t, i, j] = best
                    idx[p, t, i, j] = bi
    return out, idx
