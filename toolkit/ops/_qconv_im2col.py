"""The compiled im2col of quantized convolutions: a uint8 activation (N, C, H, W) unfolded straight into the
row-major patch matrix the int8 product reads, one row per output pixel, taps outside the image read as the
input's zero point (which stands for 0.0)::

    cols = im2col(x, zp, (1, 1), (0, 0), (1, 1), 1, 5, 5, kp)   # (groups, N * Ho * Wo, kp) uint8

Each row holds ``C / groups * kh * kw`` values in (channel, kernel row, kernel column) order, then zeros up to
``kp``: with ``kp`` a multiple of four the rows are already the int32 words the dot-product instructions read, so
the product copies nothing (the zero columns add nothing to the product or the rows' sums).

The loop runs tap by tap with an output row's pixels innermost (contiguous reads, one store per pixel), on flat
arrays with unsigned offsets so numba emits no negative-index wraparound per element (as ``_conv_numba`` does).
For the seed Net's convolutions (batch 64, one core) it took 0.25 and 0.36 ms against 0.58 and 0.68 ms for
numpy's strided window copy; row by row (a kernel row's few taps innermost) 0.44 ms. Imported only when a
quantized convolution first runs (numba), compiled once and cached on disk.
"""

from __future__ import annotations

import numba
import numpy as np

from ._conv_numba import _first_last


def im2col(x: np.ndarray, zp: int, stride, padding, dilation, groups: int, kh: int, kw: int,
           kp: int) -> np.ndarray:
    """The patches of uint8 ``x`` (N, C, H, W) for ``groups`` groups as (groups, N * Ho * Wo, kp), zero past
    ``C / groups * kh * kw`` columns (``kp`` is at least that). ``Ho`` and ``Wo`` must be positive."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, w = x.shape
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    cols = np.empty((groups, n * ho * wo, kp), np.uint8)
    flat, out = np.ascontiguousarray(x).reshape(-1), cols.reshape(-1)
    if (sh, sw, ph, pw, dh, dw) == (1, 1, 0, 0, 1, 1):
        _im2col_unit(flat, out, np.uint8(zp), n, c, h, w, c // groups, kh, kw, ho, wo, kp)
    else:
        _im2col(flat, out, np.uint8(zp), n, c, h, w, c // groups, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, kp)
    return cols


@numba.njit(cache=True, nogil=True)
def _im2col(x, cols, zp, n, c, h, w, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, kp):  # pragma: no cover
    _unfold(x, cols, zp, n, c, h, w, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, kp)


@numba.njit(cache=True, nogil=True)
def _im2col_unit(x, cols, zp, n, c, h, w, cg, kh, kw, ho, wo, kp):  # pragma: no cover - compiled
    """``_im2col`` with unit stride and dilation and no padding known when compiled: LLVM then simplifies the
    loops, which took half the time (0.37 and 0.61 ms with the geometry passed in, for the seed Net's)."""
    _unfold(x, cols, zp, n, c, h, w, cg, kh, kw, 1, 1, 0, 0, 1, 1, ho, wo, kp)


@numba.njit(cache=True, nogil=True, inline="always")
def _unfold(x, cols, zp, n, c, h, w, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, kp):  # pragma: no cover
    """``cols[((g * n + s) * ho * wo + i * wo + j) * kp + (cl * kh + a) * kw + b] =
    x[s, g * cg + cl, i * sh + a * dh - ph, j * sw + b * dw - pw]``, ``zp`` outside the image, 0 past the taps."""
    k = cg * kh * kw
    for s in range(n):
        for ch in range(c):
            g, cl = ch // cg, ch % cg
            xbase = (s * c + ch) * h * w
            r0 = (g * n + s) * ho * wo
            for a in range(kh):
                offy = a * dh - ph
                i0, i1 = _first_last(offy, sh, h, ho)
                for b in range(kw):
                    offx = b * dw - pw
                    j0, j1 = _first_last(offx, sw, w, wo)
                    col = (cl * kh + a) * kw + b
                    for i in range(ho):
                        d = numba.uint64((r0 + i * wo) * kp + col)
                        if i < i0 or i >= i1:
                            for j in range(numba.uint64(0), numba.uint64(wo)):
                                cols[d + j * numba.uint64(kp)] = zp
                            continue
                        src = numba.uint64(xbase + (i * sh + offy) * w + offx)  # j * sw added is >= -offx
                        for j in range(numba.uint64(0), numba.uint64(j0)):
                            cols[d + j * numba.uint64(kp)] = zp
                        if sw == 1:  # contiguous reads
                            for j in range(numba.uint64(j0), numba.uint64(j1)):
                                cols[d + j * numba.uint64(kp)] = x[src + j]
                        else:
                            for j in range(numba.uint64(j0), numba.uint64(j1)):
                                cols[d + j * numba.uint64(kp)] = x[src + j * numba.uint64(sw)]
                        for j in range(numba.uint64(j1), numba.uint64(wo)):
                            cols[d + j * numba.uint64(kp)] = zp
            if cl == cg - 1:  # the group's rows done for this sample: zero their tails while they are cached
                for r in range(r0, r0 + ho * wo):
                    for col in range(k, kp):
                        cols[numba.uint64(r * kp + col)] = 0


def im2col_channels_last(x: np.ndarray, kh: int, kw: int, kp: int) -> np.ndarray:
    """The patches of a channels-last uint8 ``x`` (N, C, H, W) whose strides put C innermost (a quantized
    convolution's or pooling's output), for one group, unit stride and dilation and no padding, as
    (1, N * Ho * Wo, kp) with each row's taps in (kernel row, kernel column, channel) order: a kernel row's
    ``kw * C`` values lie together in the input and are copied as one run. The weight must be packed in that
    order too (``Conv2dPackedParamsBase.pack_channels_last``)."""
    n, c, h, w = x.shape
    ho, wo = h - kh + 1, w - kw + 1
    cols = np.empty((1, n * ho * wo, kp), np.uint8)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # no copy when x is channels last
    _im2col_hwc(nhwc.reshape(-1), cols.reshape(-1), n, c, h, w, kh, kw, ho, wo, kp)
    return cols


@numba.njit(cache=True, nogil=True)
def _im2col_hwc(x, cols, n, c, h, w, kh, kw, ho, wo, kp):  # pragma: no cover - compiled
    run = kw * c
    k = kh * run
    for s in range(n):
        for i in range(ho):
            for j in range(wo):
                d = numba.uint64(((s * ho + i) * wo + j) * kp)
                for a in range(kh):
                    src = numba.uint64(((s * h + i + a) * w + j) * c)
                    at = d + numba.uint64(a * run)
                    for q in range(numba.uint64(0), numba.uint64(run)):
                        cols[at + q] = x[src + q]
                for q in range(numba.uint64(k), numba.uint64(kp)):
                    cols[d + q] = 0
