"""Compiled im2col and col2im loops for 2-d convolutions (and 1-d ones seen as 2-d with a height of one).

``im2col_cols`` writes each sample's columns as ``(N, G, Cg*kh*kw + 1, L)``
(L output positions, contiguous), the layout one batched GEMM with the
``(G, O/g, Cg*kh*kw + 1)`` weight turns into an NCHW result; the extra row of
ones times the bias column adds the bias inside the GEMM instead of in another
pass over the output. It serves padded convolutions (unpadded ones copy
faster with numpy's strided copy). ``col2im`` accumulates a
transposed convolution's columns straight into its cropped output (padding
and ``output_padding`` handled by bounds, the bias as each plane's start).
Padding is not copied in: out-of-image taps read as zero.

The loops are serial on purpose: they are memory-bound copies (im2col of
64x3x32x32 by 3x3, 1.8M elements, takes about 1 ms), and on two cores shared
with other processes a ``prange`` form measured 8-20x slower than the serial
one (its threads wait for a core, as BLAS's do around it). Imported only
when a convolution first runs, so ``import toolkit`` never loads numba;
compiled code is cached on disk.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def _span(off, step, size, count):
    """The output indices ``j`` in ``[0, count)`` with ``0 <= j * step + off < size``, as (first, end)."""
    lo = 0 if off >= 0 else (-off + step - 1) // step
    last = size - 1 - off
    hi = 0 if last < 0 else min(count, last // step + 1)
    return lo, max(lo, hi)


@numba.njit(cache=True)
def _cols_plane(t, x, out, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    n, c = t // x.shape[1], t % x.shape[1]
    g, cl = c // cg, c % cg
    h, w = x.shape[2], x.shape[3]
    for a in range(kh):
        i0, i1 = _span(a * dh - ph, sh, h, ho)
        for b in range(kw):
            j0, j1 = _span(b * dw - pw, sw, w, wo)
            row = out[n, g, (cl * kh + a) * kw + b]
            for i in range(ho):
                base = i * wo
                if i < i0 or i >= i1:
                    for j in range(wo):
                        row[base + j] = 0
                    continue
                y = i * sh + a * dh - ph
                for j in range(j0):
                    row[base + j] = 0
                off = b * dw - pw
                if sw == 1:  # unit stride: a loop LLVM vectorizes
                    for j in range(j0, j1):
                        row[base + j] = x[n, c, y, j + off]
                else:
                    for j in range(j0, j1):
                        row[base + j] = x[n, c, y, j * sw + off]
                for j in range(j1, wo):
                    row[base + j] = 0


@numba.njit(cache=True)
def im2col_cols(x, out, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """``out[n, g, (cl*kh + a)*kw + b, i*wo + j] = x[n, g*cg + cl, i*sh + a*dh - ph, j*sw + b*dw - pw]``."""
    for t in range(x.shape[0] * x.shape[1]):
        _cols_plane(t, x, out, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)


@numba.njit(cache=True)
def _col2im_plane(t, cols, bias, out, kh, kw, sh, sw, ph, pw, dh, dw, h, w):
    n, c = t // out.shape[1], t % out.shape[1]
    plane = out[n, c]
    ho, wo = plane.shape
    start = bias[c] if bias.size else 0
    for y in range(ho):
        for x in range(wo):
            plane[y, x] = start
    for a in range(kh):
        i0, i1 = _span(a * dh - ph, sh, ho, h)
        for b in range(kw):
            j0, j1 = _span(b * dw - pw, sw, wo, w)
            src = cols[n, (c * kh + a) * kw + b]
            off = b * dw - pw
            for i in range(i0, i1):
                y = i * sh + a * dh - ph
                if sw == 1:  # unit stride: a loop LLVM vectorizes
                    for j in range(j0, j1):
                        plane[y, j + off] += src[i * w + j]
                else:
                    for j in range(j0, j1):
                        plane[y, j * sw + off] += src[i * w + j]


@numba.njit(cache=True)
def col2im(cols, bias, out, kh, kw, sh, sw, ph, pw, dh, dw, h, w):
    """``out[n, c, i*sh + a*dh - ph, j*sw + b*dw - pw] += cols[n, (c*kh + a)*kw + b, i*w + j]`` from ``bias[c]``
    (zeros when ``bias`` is empty), for taps inside ``out``."""
    for t in range(out.shape[0] * out.shape[1]):
        _col2im_plane(t, cols, bias, out, kh, kw, sh, sw, ph, pw, dh, dw, h, w)
