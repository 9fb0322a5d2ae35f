"""The weight gradient of a 2-d convolution: a compiled, register-tiled reduction over the batch.

``_weight_grad`` (``conv.py``) computes ``d(loss)/d(weight)`` as a convolution
of the input (channels and batch swapped) by the output gradient: few output
positions (the forward kernel's taps), a long reduction (the batch times the
forward output plane). As GEMMs those products are narrow, ``(O, L) @ (L,
C*kh*kw)`` per sample with ``C*kh*kw`` often 9 to 75, a shape OpenBLAS runs at
a third to a half of its peak; one GEMM over the whole batch needs a transposed
copy of the output gradient. Here each forward sample is dotted with its output
gradient planes, read in place, in tiles (output channels by taps), each a
block of float32 (or float64) accumulators that LLVM keeps in vector registers
through the whole plane.

The other operand, each tap's window of the input, is not copied per tap: per
sample, input channel and kernel column ``j``, the padded image's rows are cut
to the columns that ``j`` reads (``_row_blocks``), and the window of kernel row
``i`` is a contiguous run of that block starting ``i`` rows down (``kh`` times
less copying than one row per tap; a forward stride ``s`` keeps ``s`` blocks,
one per row phase). Measured on one core (``process_time``), 64x3x32x32 by 64
3x3 filters, padding 1: 1.4 ms against 3.8 ms through im2row and OpenBLAS; the
seed Net's first layer (64x1x28x28 by 10 5x5 filters): 0.16 ms against 0.54.
The forward batch is cut into a few blocks whose partial sums the cores compute
side by side, then added in block order.

Two tile shapes, ``8x3`` and ``5x4``, either way round (output channels by
taps, or taps by output channels): the one padding the fewest products is
taken; rows past the end repeat the last one and their sums are dropped. The
tiles are unrolled by hand (LLVM keeps named scalars in registers, not the
elements of an array); one shape alone measured 5-15% slower on some layers
(``6x4``: the seed Net's first layer 0.18 ms, the 64-filter one above 1.5).

Written in the derived convolution's terms (``_conv_fast.conv2d``): input
``x4`` ``(B, C, H, W)`` (``B`` the forward input channels, ``C`` the forward
batch times the groups), weight ``w4`` ``(O, C/g, kh, kw)`` (the output
gradient; ``kh*kw`` the forward output plane), output ``(B, O, ho, wo)`` (the
forward kernel). Its stride is the forward dilation, its dilation the forward
stride.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import uint64

from ..backends.cpu.split import run_tasks
from ._conv_fast import MACS_PER_WORK
from ._conv_numba import _first_last

# Dot products shorter than MIN_PLANE (the forward output plane) go to BLAS: there each tile's closing sums and
# stores cost about as much as its products. Down to half of it where the output gradient has fewer than
# NARROW_CHANNELS channels a group, as BLAS's GEMMs are narrow there too. At 64 positions (64x10x12x12 by 5x5
# filters): 10 filters 0.47 ms against 0.72, 20 (the seed Net's conv2) 0.84 against 0.86; 32 filters on
# 128x16x10x10 by 3x3: 1.47 against 1.26.
MIN_PLANE = 128
NARROW_CHANNELS = 32
BLOCK_BYTES = 1 << 18  # the windows one pass of tiles reads, kept in the core's own cache
BLOCKS = 8  # channel blocks (forward samples) whose partial sums the cores share
PARTS_BUDGET = 1 << 22  # elements of partial sums and window buffers at most, all blocks together
_TILES = ((8, 3), (5, 4))
_FLAGS = {"reassoc", "contract"}  # sums kept in vector lanes, fused multiply-adds; NaN and inf stay IEEE


def applies(plane: int, channels: int) -> bool:
    """True when the compiled products serve a weight gradient whose forward output plane has ``plane``
    positions (the length of each dot product) and ``channels`` output channels a group."""
    return plane >= MIN_PLANE or (plane >= MIN_PLANE // 2 and channels < NARROW_CHANNELS)


def _plan(og: int, k: int) -> tuple[int, bool]:
    """The tile (an index in ``_TILES``) and orientation (True: windows as the tile's rows) padding the fewest
    products for ``og`` output channels by ``k`` windows."""
    best = None
    for i, (r, c) in enumerate(_TILES):
        for swap, (m, n) in ((False, (og, k)), (True, (k, og))):
            padded = -(-m // r) * r * (-(-n // c) * c)
            if best is None or padded < best[0]:
                best = (padded, i, swap)
    return best[1], best[2]


@numba.njit(cache=True, fastmath=_FLAGS)
def _dots_8x3(a, astarts, aout, b, bstarts, bout, lr, out, zero):
    """``out[aout[i] + bout[j]] += a[astarts[i]:][:lr] . b[bstarts[j]:][:lr]`` for every ``i``, ``j``, in tiles
    of 8 rows of ``a`` by 3 of ``b``."""
    na, nb, n = astarts.size, bstarts.size, uint64(lr)
    for ib in range(0, na, 8):
        a0 = uint64(astarts[min(ib, na - 1)])
        a1 = uint64(astarts[min(ib + 1, na - 1)])
        a2 = uint64(astarts[min(ib + 2, na - 1)])
        a3 = uint64(astarts[min(ib + 3, na - 1)])
        a4 = uint64(astarts[min(ib + 4, na - 1)])
        a5 = uint64(astarts[min(ib + 5, na - 1)])
        a6 = uint64(astarts[min(ib + 6, na - 1)])
        a7 = uint64(astarts[min(ib + 7, na - 1)])
        for jb in range(0, nb, 3):
            b0 = uint64(bstarts[min(jb, nb - 1)])
            b1 = uint64(bstarts[min(jb + 1, nb - 1)])
            b2 = uint64(bstarts[min(jb + 2, nb - 1)])
            c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = c30 = c31 = c32 = zero
            c40 = c41 = c42 = c50 = c51 = c52 = c60 = c61 = c62 = c70 = c71 = c72 = zero
            for q in range(uint64(0), n):
                y0, y1, y2 = b[b0 + q], b[b1 + q], b[b2 + q]
                x = a[a0 + q]
                c00 += x * y0
                c01 += x * y1
                c02 += x * y2
                x = a[a1 + q]
                c10 += x * y0
                c11 += x * y1
                c12 += x * y2
                x = a[a2 + q]
                c20 += x * y0
                c21 += x * y1
                c22 += x * y2
                x = a[a3 + q]
                c30 += x * y0
                c31 += x * y1
                c32 += x * y2
                x = a[a4 + q]
                c40 += x * y0
                c41 += x * y1
                c42 += x * y2
                x = a[a5 + q]
                c50 += x * y0
                c51 += x * y1
                c52 += x * y2
                x = a[a6 + q]
                c60 += x * y0
                c61 += x * y1
                c62 += x * y2
                x = a[a7 + q]
                c70 += x * y0
                c71 += x * y1
                c72 += x * y2
            sums = ((c00, c01, c02), (c10, c11, c12), (c20, c21, c22), (c30, c31, c32),
                    (c40, c41, c42), (c50, c51, c52), (c60, c61, c62), (c70, c71, c72))
            for i in range(min(8, na - ib)):
                for j in range(min(3, nb - jb)):
                    out[aout[ib + i] + bout[jb + j]] += sums[i][j]


@numba.njit(cache=True, fastmath=_FLAGS)
def _dots_5x4(a, astarts, aout, b, bstarts, bout, lr, out, zero):
    """``_dots_8x3`` in tiles of 5 rows of ``a`` by 4 of ``b``."""
    na, nb, n = astarts.size, bstarts.size, uint64(lr)
    for ib in range(0, na, 5):
        a0 = uint64(astarts[min(ib, na - 1)])
        a1 = uint64(astarts[min(ib + 1, na - 1)])
        a2 = uint64(astarts[min(ib + 2, na - 1)])
        a3 = uint64(astarts[min(ib + 3, na - 1)])
        a4 = uint64(astarts[min(ib + 4, na - 1)])
        for jb in range(0, nb, 4):
            b0 = uint64(bstarts[min(jb, nb - 1)])
            b1 = uint64(bstarts[min(jb + 1, nb - 1)])
            b2 = uint64(bstarts[min(jb + 2, nb - 1)])
            b3 = uint64(bstarts[min(jb + 3, nb - 1)])
            c00 = c01 = c02 = c03 = c10 = c11 = c12 = c13 = c20 = c21 = c22 = c23 = zero
            c30 = c31 = c32 = c33 = c40 = c41 = c42 = c43 = zero
            for q in range(uint64(0), n):
                y0, y1, y2, y3 = b[b0 + q], b[b1 + q], b[b2 + q], b[b3 + q]
                x = a[a0 + q]
                c00 += x * y0
                c01 += x * y1
                c02 += x * y2
                c03 += x * y3
                x = a[a1 + q]
                c10 += x * y0
                c11 += x * y1
                c12 += x * y2
                c13 += x * y3
                x = a[a2 + q]
                c20 += x * y0
                c21 += x * y1
                c22 += x * y2
                c23 += x * y3
                x = a[a3 + q]
                c30 += x * y0
                c31 += x * y1
                c32 += x * y2
                c33 += x * y3
                x = a[a4 + q]
                c40 += x * y0
                c41 += x * y1
                c42 += x * y2
                c43 += x * y3
            sums = ((c00, c01, c02, c03), (c10, c11, c12, c13), (c20, c21, c22, c23), (c30, c31, c32, c33),
                    (c40, c41, c42, c43))
            for i in range(min(5, na - ib)):
                for j in range(min(4, nb - jb)):
                    out[aout[ib + i] + bout[jb + j]] += sums[i][j]


@numba.njit(cache=True)
def _row_blocks(x, base, s0, s2, s3, rows, n, h, wd, kh, kw, sh, sw, ph, pw, dh, dw, wo, span):
    """``rows[(((s*wo + j)*dh + p)*span + t)*kw + v] = x4[s, ch, p + t*dh - ph, j*sw + v*dw - pw]`` (zero outside
    the image), ``x4[s, ch]`` at ``base + s*s0``: per sample, output column ``j`` and row phase ``p``, the rows of
    that phase cut to the columns that ``j`` reads. The window of output ``(i, j)`` is then ``kh*kw`` contiguous
    elements from row ``i*sh // dh`` of block ``(s, j, i*sh % dh)``."""
    for s in range(n):
        xbase = base + s * s0
        for j in range(wo):
            offx = j * sw - pw
            inside = _first_last(offx, dw, wd, kw)
            for p in range(dh):
                rbase = ((s * wo + j) * dh + p) * span
                for t in range(span):
                    drow = uint64((rbase + t) * kw)
                    y = p + t * dh - ph
                    v0, v1 = inside if 0 <= y < h else (kw, kw)  # a row outside the image: all zero
                    srow = uint64(xbase + y * s2 + offx * s3)  # v*dw*s3 added below is >= -offx*s3
                    for v in range(uint64(0), uint64(v0)):
                        rows[drow + v] = 0
                    if dw * s3 == 1:  # unit step: a loop LLVM vectorizes
                        for v in range(uint64(v0), uint64(v1)):
                            rows[drow + v] = x[srow + v]
                    else:
                        step = uint64(dw * s3)
                        for v in range(uint64(v0), uint64(v1)):
                            rows[drow + v] = x[srow + v * step]
                    for v in range(uint64(v1), uint64(kw)):
                        rows[drow + v] = 0


@numba.njit(cache=True, nogil=True)
def _products(x, s0, s1, s2, s3, w, ws0, ws1, parts, rows, t0, t1, bounds, tile, swap, block, n, c, h, wd, o, groups,
              kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, span, zero):
    """For each channel block ``t`` in [t0, t1): ``parts[t]`` (flat, C-ordered ``(n, o, ho, wo)``) = the sum over
    channels ``ch`` in ``[bounds[t], bounds[t+1])`` of group ``gi``, ``y``, ``z`` of ``w4[oc, ch - gi*c/g, y, z] *
    x4[s, ch, i*sh + y*dh - ph, j*sw + z*dw - pw]`` (zero outside the image), accumulated channel by channel.

    ``x`` is flat with element strides ``s0..s3``; ``w`` flat, each ``(oc, ch)`` plane of ``kh*kw`` contiguous at
    ``oc*ws0 + ch*ws1``; ``rows[t]`` holds one channel's ``_row_blocks`` for block ``t``; ``block`` windows at most
    go through the tiles at a time; ``zero`` of the accumulators' type (the arrays' dtype)."""
    cg, og, lr, length = c // groups, o // groups, kh * kw, ho * wo
    k = n * length
    starts = np.empty(k, np.int64)  # where each output position's window begins in ``rows``
    places = np.empty(k, np.int64)  # and where its sums go in ``out`` (the channel's part aside)
    for r in range(k):
        s, i, j = r // length, r % length // wo, r % wo
        starts[r] = ((((s * wo + j) * dh + i * sh % dh) * span + i * sh // dh) * kw)
        places[r] = s * o * length + r % length
    planes = np.empty(og, np.int64)
    channels = np.empty(og, np.int64)
    for t in range(t0, t1):
        out, buf = parts[t], rows[t]
        out[:] = zero
        for ch in range(bounds[t], bounds[t + 1]):
            gi, cl = ch // cg, ch % cg
            _row_blocks(x, ch * s1, s0, s2, s3, buf, n, h, wd, kh, kw, sh, sw, ph, pw, dh, dw, wo, span)
            for q in range(og):
                planes[q] = (gi * og + q) * ws0 + cl * ws1
                channels[q] = (gi * og + q) * length
            for r0 in range(0, k, block):
                r1 = min(k, r0 + block)
                wins, spots = starts[r0:r1], places[r0:r1]
                if tile == 0 and swap:
                    _dots_8x3(buf, wins, spots, w, planes, channels, lr, out, zero)
                elif tile == 0:
                    _dots_8x3(w, planes, channels, buf, wins, spots, lr, out, zero)
                elif swap:
                    _dots_5x4(buf, wins, spots, w, planes, channels, lr, out, zero)
                else:
                    _dots_5x4(w, planes, channels, buf, wins, spots, lr, out, zero)


def _channel_blocks(c: int, per_block: int) -> np.ndarray:
    """Bounds of the channel blocks whose partial sums are computed apart: ``BLOCKS`` where ``c`` allows and
    their buffers (``per_block`` elements each) fit in ``PARTS_BUDGET``, else fewer. The count depends on the
    shapes alone, so a result never depends on how many threads computed it."""
    nb = max(1, min(c, BLOCKS, PARTS_BUDGET // max(per_block, 1)))
    return np.array([c * t // nb for t in range(nb + 1)], np.int64)


def conv2d(x, st, w, wst, n, c, h, wd, o, groups, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """The derived convolution ``(n, c, h, wd) * (o, c/g, kh, kw)`` into a fresh C-ordered ``(n, o, ho, wo)``.

    ``x`` and ``w`` are flat with element strides ``st`` and ``wst`` (``w``'s planes contiguous). The channels
    (the forward batch) are cut into blocks whose partial sums are computed on the cores
    (``backends.cpu.split.run_tasks``), each block with its own window buffer, then added in block order."""
    size = n * o * ho * wo
    span = ((ho - 1) * sh) // dh + kh
    rows_size = n * wo * dh * span * kw
    bounds = _channel_blocks(c, size + rows_size)
    nb = bounds.size - 1
    tile, swap = _plan(o // groups, n * ho * wo)
    block = max(1, BLOCK_BYTES // (kh * kw * x.itemsize))
    work = c * (o // groups) * n * ho * wo * kh * kw // MACS_PER_WORK
    parts, _ = run_tasks(_products, nb, work, (x, *st, w, wst[0], wst[1]),
                         (np.empty((nb, size), x.dtype), np.empty((nb, rows_size), x.dtype)),
                         (bounds, tile, swap, block, n, c, h, wd, o, groups, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo,
                          span, x.dtype.type(0)))
    return (parts.sum(0) if nb > 1 else parts[0]).reshape(n, o, ho, wo)
