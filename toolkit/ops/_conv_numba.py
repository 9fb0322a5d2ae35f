"""Compiled im2col, im2row and col2im loops for 2-d convolutions (and 1-d ones seen as 2-d with a height of one).

``im2col`` writes a convolution's columns (one row per input channel and
kernel tap, the output positions contiguous), ``im2row`` the weight
gradient's windows (one row per output position, the kernel taps contiguous),
both reading taps outside the image as zero instead of copying the input into
a padded one; ``col2im`` sums a transposed convolution's columns straight into
its cropped output (padding and ``output_padding`` handled by bounds, the bias
as each plane's start). Strides passed in say where each row goes, so one
GEMM per sample and one GEMM over the whole batch are served alike.

The arrays are passed flat and indexed with unsigned offsets: numba then emits
no negative-index wraparound per element, and the inner loops over an image
row vectorize. Written with 4-d indexing, the loops took 3-4 times as long
(col2im for the input gradient of a 64x3x32x32 by 64 3x3 convolution: 1.07 ms
against 0.27; the same convolution's im2col: 1.23 against 0.23), their rows of
8 to 32 elements too short to pay for the per-element checks. numpy's strided
copy of the same windows measured in between (0.30 ms).

The loops are serial on purpose: they are memory-bound, and on two cores
shared with other processes a ``prange`` form measured 8-20x slower than the
serial one (its threads wait for a core, as BLAS's do around them). Imported
only when a convolution first runs, so ``import toolkit`` never loads numba;
compiled code is cached on disk.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def _first_last(off, step, size, count):
    """The indices ``i`` in ``[0, count)`` with ``0 <= i * step + off < size``, as (first, end); ``first`` is at
    most ``count``, so a loop zeroing the taps before it stays in its row (a padding wider than the dilated
    kernel's reach leaves no index inside)."""
    lo = 0 if off >= 0 else min(count, (-off + step - 1) // step)
    last = size - 1 - off
    hi = 0 if last < 0 else min(count, last // step + 1)
    return lo, max(lo, hi)


@numba.njit(inline="always")
def _add_window(cols, out, sbase, obase, offy, offx, i0, i1, j0, j1, w, sh, sw, wo):
    """Add one tap's ``h*w`` columns (from ``sbase``) into its window of one output plane (at ``obase``)."""
    for i in range(i0, i1):
        drow = numba.uint64(obase + (i * sh + offy) * wo + offx)  # j*sw added below is >= -offx
        srow = numba.uint64(sbase + i * w)
        if sw == 1:  # unit stride: a loop LLVM vectorizes
            for j in range(numba.uint64(j0), numba.uint64(j1)):
                out[drow + j] += cols[srow + j]
        else:
            for j in range(numba.uint64(j0), numba.uint64(j1)):
                out[drow + j * numba.uint64(sw)] += cols[srow + j]


@numba.njit(cache=True, nogil=True)
def col2im(cols, sample_stride, row_stride, bias, out, n, c, kh, kw, sh, sw, ph, pw, dh, dw, h, w, ho, wo):
    """``out[s, ch, i*sh + a*dh - ph, j*sw + b*dw - pw] += cols[s*sample_stride + r*row_stride + i*w + j]`` with
    ``r = (ch*kh + a)*kw + b``, starting from ``bias[ch]`` (zeros when ``bias`` is empty), for taps inside ``out``.

    ``cols`` and ``out`` are flat (``out`` C-ordered ``(n, c, ho, wo)``). The columns are read in their own
    order: sample by sample when a sample's rows are contiguous, else (the batch folded into the columns) tap by
    tap across the samples, each tap's window bounds found once for all of them."""
    plane = ho * wo
    for t in range(n * c):
        start = bias[t % c] if bias.size else 0
        for q in range(numba.uint64(t * plane), numba.uint64((t + 1) * plane)):
            out[q] = start
    # Sample by sample when a sample's rows are contiguous (task t = one sample's channel), else tap by tap
    # across the batch (task t = one channel, all samples).
    by_sample = sample_stride >= row_stride
    for t in range(n * c if by_sample else c):
        ch, s0, s1 = (t % c, t // c, t // c + 1) if by_sample else (t, 0, n)
        for a in range(kh):
            offy = a * dh - ph
            i0, i1 = _first_last(offy, sh, ho, h)
            for b in range(kw):
                offx = b * dw - pw
                j0, j1 = _first_last(offx, sw, wo, w)
                if j1 <= j0:
                    continue
                for s in range(s0, s1):
                    _add_window(cols, out, s * sample_stride + ((ch * kh + a) * kw + b) * row_stride,
                                (s * c + ch) * plane, offy, offx, i0, i1, j0, j1, w, sh, sw, wo)


@numba.njit(inline="always")
def _window_row(x, cols, rbase, xbase, offy, offx, i0, i1, j0, j1, w, sh, sw, ho, wo):
    """One tap of one input plane (at ``xbase`` in ``x``, the tap's offsets ``offy``, ``offx`` and its output rows
    ``[i0, i1)`` and columns ``[j0, j1)`` inside the image) into the ``ho*wo`` columns from ``rbase``."""
    for q in range(numba.uint64(0), numba.uint64(i0 * wo)):
        cols[rbase + q] = 0
    for q in range(numba.uint64(i1 * wo), numba.uint64(ho * wo)):
        cols[rbase + q] = 0
    for i in range(i0, i1):
        drow = rbase + numba.uint64(i * wo)
        srow = numba.uint64(xbase + (i * sh + offy) * w + offx)  # j*sw added below is >= -offx
        for j in range(numba.uint64(0), numba.uint64(j0)):
            cols[drow + j] = 0
        if sw == 1:  # unit stride: a loop LLVM vectorizes
            for j in range(numba.uint64(j0), numba.uint64(j1)):
                cols[drow + j] = x[srow + j]
        else:
            for j in range(numba.uint64(j0), numba.uint64(j1)):
                cols[drow + j] = x[srow + j * numba.uint64(sw)]
        for j in range(numba.uint64(j1), numba.uint64(wo)):
            cols[drow + j] = 0


@numba.njit(cache=True, nogil=True)
def im2col(x, cols, sample_stride, group_stride, row_stride, n, c, h, w, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """``cols[s*sample_stride + gi*group_stride + ((cl*kh + a)*kw + b)*row_stride + i*wo + j] =
    x[s, gi*cg + cl, i*sh + a*dh - ph, j*sw + b*dw - pw]``, zero where the tap falls outside the image.

    ``x`` and ``cols`` are flat (``x`` C-ordered ``(n, c, h, w)``). Each tap's window bounds are found once for
    all the samples, which read that tap one after another."""
    for ch in range(c):
        gi, cl = ch // cg, ch % cg
        for a in range(kh):
            offy = a * dh - ph
            i0, i1 = _first_last(offy, sh, h, ho)
            for b in range(kw):
                offx = b * dw - pw
                j0, j1 = _first_last(offx, sw, w, wo)
                row = numba.uint64(gi * group_stride + ((cl * kh + a) * kw + b) * row_stride)
                for s in range(n):
                    _window_row(x, cols, row + numba.uint64(s * sample_stride), (s * c + ch) * h * w, offy, offx,
                                i0, i1, j0, j1, w, sh, sw, ho, wo)


@numba.njit(cache=True)
def im2row(x, s0, s1, s2, s3, rows, n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """``rows[((ch*n + s)*ho*wo + i*wo + j)*kh*kw + a*kw + b] = x4[s, ch, i*sh + a*dh - ph, j*sw + b*dw - pw]``,
    zero where the tap falls outside the image: each output position's window laid out contiguously, per channel.

    ``x`` is flat, ``x4``'s element strides ``s0..s3`` placing ``x4[s, ch, y, z]`` at ``s*s0 + ch*s1 + y*s2 +
    z*s3``; ``rows`` is flat. (The weight gradient's windows: the kernel taps run along the image rows.)"""
    kk = kh * kw
    for t in range(c * n):
        ch, s = t // n, t % n
        xbase = s * s0 + ch * s1
        for i in range(ho):
            a0, a1 = _first_last(i * sh - ph, dh, h, kh)
            for j in range(wo):
                offx = j * sw - pw
                b0, b1 = _first_last(offx, dw, w, kw)
                rbase = numba.uint64(((t * ho + i) * wo + j) * kk)
                for q in range(numba.uint64(0), numba.uint64(a0 * kw)):
                    rows[rbase + q] = 0
                for q in range(numba.uint64(a1 * kw), numba.uint64(kk)):
                    rows[rbase + q] = 0
                for a in range(a0, a1):
                    drow = rbase + numba.uint64(a * kw)
                    srow = numba.uint64(xbase + (i * sh + a * dh - ph) * s2 + offx * s3)  # b*dw*s3 added is >= -offx*s3
                    for b in range(numba.uint64(0), numba.uint64(b0)):
                        rows[drow + b] = 0
                    if dw * s3 == 1:  # unit step: a loop LLVM vectorizes
                        for b in range(numba.uint64(b0), numba.uint64(b1)):
                            rows[drow + b] = x[srow + b]
                    else:
                        step = numba.uint64(dw * s3)
                        for b in range(numba.uint64(b0), numba.uint64(b1)):
                            rows[drow + b] = x[srow + b * step]
                    for b in range(numba.uint64(b1), numba.uint64(kw)):
                        rows[drow + b] = 0
