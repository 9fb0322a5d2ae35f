"""Compiled max-pooling loops: values and PyTorch's flat per-plane indices in one pass, and their scatter back.

``max_pool2d_fwd`` and ``max_pool3d_fwd`` slide a (dilated) kernel;
``window_max_fwd`` takes each output's window from start/end tables, which is
what adaptive and fractional max pooling need; ``max_pool2d_bwd`` scatters for
all of them (it only sees flat indices within a plane).

Imported only when max pooling first runs, so ``import toolkit`` never loads
numba; the compiled functions are cached on disk. 2-d pooling splits large
inputs by planes over the cores with ``backends.cpu.split.run_slices`` (never ``prange``:
numba's worker threads wait for each other and for BLAS's threads, busy right
before and after in the convolutions around a pooling layer, which measured
twice as slow for the seed's Net on two cores).
"""

from __future__ import annotations

import numba
import numpy as np

from ..backends.cpu.split import run_slices

WORK_PER_COMPARE = 2  # one window element of max pooling costs about two elements of a float32 sum (at most)


def max_pool2d(planes, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """Values and flat per-plane indices of 2-d max pooling over ``planes`` (P, H, W), each (P, ho, wo)."""
    n = planes.shape[0]
    out = np.empty((n, ho, wo), planes.dtype)
    idx = np.empty((n, ho, wo), np.int64)
    work = out.size * kh * kw * WORK_PER_COMPARE
    inside = ph == 0 and pw == 0 and dh == 1 and dw == 1 and (ho - 1) * sh + kh <= planes.shape[1] and \
        (wo - 1) * sw + kw <= planes.shape[2]
    if inside and kh == kw == sh == sw == 2:
        out, idx = run_slices(max_pool2d_fwd_2x2, n, work // 4, (planes,), (out, idx))
    elif inside:
        out, idx = run_slices(max_pool2d_fwd_inside, n, work, (planes,), (out, idx), (kh, kw, sh, sw))
    else:
        out, idx = run_slices(max_pool2d_fwd, n, work, (planes,), (out, idx), (kh, kw, sh, sw, ph, pw, dh, dw))
    return out, idx


def max_pool2d_backward(g, idx, hw):
    """Scatter-add ``g`` (P, L) into zeros (P, hw) at ``idx`` (P, L)."""
    out = np.empty((g.shape[0], hw), g.dtype)
    out, = run_slices(max_pool2d_bwd, g.shape[0], out.size + g.size * WORK_PER_COMPARE, (g, idx), (out,))
    return out


def max_pool2d_backward_from_input(planes, g, kh, kw, sh, sw, ph, pw, dh, dw):
    """The gradient (P, H, W) of 2-d max pooling over ``planes`` (P, H, W) for the output gradient ``g`` (P, ho,
    wo), each window's gradient added at its maximum (found as the forward finds it). 2x2 windows with stride
    2 inside the plane (most networks' pooling) take one pass that finds the maxima and writes the gradient,
    with no index array; other windows compute the indices first."""
    n, h, w = planes.shape
    ho, wo = g.shape[1], g.shape[2]
    if kh == kw == sh == sw == 2 and ph == pw == 0 and dh == dw == 1 and 2 * ho <= h and 2 * wo <= w:
        out = np.empty((n, h, w), g.dtype)
        out, = run_slices(max_pool2d_bwd_2x2, n, out.size + g.size * 4 * WORK_PER_COMPARE, (planes, g), (out,))
        return out
    idx = max_pool2d(planes, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)[1]
    return max_pool2d_backward(np.ascontiguousarray(g).reshape(n, ho * wo), idx.reshape(n, ho * wo),
                               h * w).reshape(n, h, w)


@numba.njit(inline="always")
def _winner_2x2(r0, r1, j):
    """The maximum of the 2x2 window ``j`` of rows ``r0``, ``r1`` and which of its four places won (0-3, row
    by row), picked without branches; NaN wins, the last NaN scanned as in PyTorch; ties go to the first."""
    best, c = r0[2 * j], np.int32(0)
    v = r0[2 * j + 1]
    take = (v > best) | (v != v)
    best, c = (v, np.int32(1)) if take else (best, c)
    v = r1[2 * j]
    take = (v > best) | (v != v)
    best, c = (v, np.int32(2)) if take else (best, c)
    v = r1[2 * j + 1]
    take = (v > best) | (v != v)
    return (v, np.int32(3)) if take else (best, c)


@numba.njit(cache=True, nogil=True)
def max_pool2d_bwd_2x2(x, g, out):
    """``out`` (planes, H, W) = ``g`` (planes, ho, wo) at the maximum of each 2x2, stride-2 window of ``x``,
    zero elsewhere: the forward's branch-free pick of the winner (``max_pool2d_fwd_2x2``, NaN winning the same
    way) as a 0-3 code per window in a row of int32 (a loop LLVM vectorizes), then each window's gradient
    stored at its winner in the zeroed plane. (Writing all four places by selects instead measured 4x slower.)"""
    ho, wo = g.shape[1], g.shape[2]
    zero = out.dtype.type(0)
    code = np.empty(wo, np.int32)
    for p in range(x.shape[0]):
        plane = out[p]
        plane[:] = zero
        for i in range(ho):
            r0, r1 = x[p, 2 * i], x[p, 2 * i + 1]
            for j in range(wo):
                code[j] = _winner_2x2(r0, r1, j)[1]
            gr = g[p, i]
            for j in range(wo):
                c = code[j]
                plane[2 * i + (c >> 1), 2 * j + (c & 1)] = gr[j]


@numba.njit(cache=True, nogil=True)
def max_pool2d_fwd(x, out, idx, kh, kw, sh, sw, ph, pw, dh, dw):
    """``x`` is (planes, H, W); writes the values and indices, each (planes, ho, wo), NaN winning as in
    PyTorch."""
    planes, h, w = x.shape
    ho, wo = out.shape[1], out.shape[2]
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


@numba.njit(cache=True, nogil=True)
def max_pool2d_fwd_inside(x, out, idx, kh, kw, sh, sw):
    """``max_pool2d_fwd`` without padding or dilation and with every window inside the plane (the common
    case): no bounds tests in the inner loops (about 1.3x faster for 2x2 windows)."""
    planes, h, w = x.shape
    ho, wo = out.shape[1], out.shape[2]
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


@numba.njit(cache=True, nogil=True)
def max_pool2d_fwd_2x2(x, out, idx):
    """``max_pool2d_fwd_inside`` for 2x2 windows with stride 2 (most networks' pooling): the four candidates
    of each window picked without branches, and which one won kept as a 0-3 code in a row of int32, so LLVM
    vectorizes the loop over a row's windows (about 9x faster than the branching loop above, whose
    data-dependent branches mispredict)."""
    w = x.shape[2]
    ho, wo = out.shape[1], out.shape[2]
    code = np.empty(wo, np.int32)
    for p in range(x.shape[0]):
        for i in range(ho):
            r0, r1, o = x[p, 2 * i], x[p, 2 * i + 1], out[p, i]
            for j in range(wo):
                o[j], code[j] = _winner_2x2(r0, r1, j)
            ix, base = idx[p, i], 2 * i * w
            for j in range(wo):
                ix[j] = base + (code[j] >> 1) * w + 2 * j + (code[j] & 1)


@numba.njit(cache=True, nogil=True)
def max_pool2d_bwd(g, idx, out):
    """Scatter-add ``g`` (planes, L) into ``out`` (planes, hw), zeroed first, at ``idx`` (planes, L)."""
    planes, n = g.shape
    out[:] = 0
    for p in range(planes):
        for k in range(n):
            out[p, idx[p, k]] += g[p, k]


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
