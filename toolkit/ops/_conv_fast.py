"""The float32/float64 2-d convolution paths: a compiled im2col or col2im around one batched BLAS matmul.

``conv_forward`` and ``conv_transpose_forward`` (``_conv_kernels``) send
their common case here: a 1-d or 2-d, non-empty, float32 or float64 call.
The columns are written straight in the layout the GEMM reads (by
``_conv_numba`` when padded, reading padding as zero instead of copying it in;
by numpy's strided copy otherwise, which measured faster there), the bias
rides in the GEMM as one more column (forward) or starts each plane
(transposed), and the transposed convolution's compiled col2im writes its
cropped output directly. The weight gradient's shape (few outputs, a long
reduction) gets a rows layout and a chunked product (``long_product``).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
ROWS_RATIO = 64  # few output positions per reduction (the weight gradient): rows layout, reduction contiguous
SERIAL_MNK = 1 << 18  # OpenBLAS runs a GEMM of at most this many multiply-adds on the calling thread


def long_product(a, b):
    """``a @ b`` for a small result and a long reduction, as a stack of single-threaded GEMMs over chunks of it.

    One GEMM with a reduction of tens of thousands makes OpenBLAS's threads meet
    at a barrier per block of it; on two cores shared with other processes each
    meeting waits for a time slice, and the weight gradient of the seed's first
    convolution took 0.7-9 s instead of 1.5 ms. Chunks small enough to run on
    one thread never wait.
    """
    m, k = a.shape
    n = b.shape[1]
    step = max(1024, SERIAL_MNK // max(1, m * n))  # 1024: as fast as one GEMM on one thread, 4x on two busy
    q = k // step
    if q <= 1:
        return np.matmul(a[None], b[None])[0]
    cut = q * step
    res = np.matmul(a[:, :cut].reshape(m, q, step).transpose(1, 0, 2), b[:cut].reshape(q, step, n)).sum(0)
    if cut < k:
        res += np.matmul(a[None, :, cut:], b[None, cut:])[0]
    return res


def applies(x4, w4) -> bool:
    """True when the compiled path handles these (4-d, batched) operands."""
    return x4.dtype in FAST_DTYPES and x4.dtype == w4.dtype and x4.size > 0 and w4.size > 0


def _windows(x4, ph, pw, sh, sw, dh, dw, kh, kw, ho, wo, rows=True):
    """Every window of ``x4`` (zero-padded in front by ``ph, pw`` and behind as far as the windows reach) as a
    read-only view: ``(N, ho, wo, C, kh, kw)`` (``rows``) or ``(N, C, kh, kw, ho, wo)``."""
    n, c, h, w = x4.shape
    hh, hw = max(h + ph, (ho - 1) * sh + dh * (kh - 1) + 1), max(w + pw, (wo - 1) * sw + dw * (kw - 1) + 1)
    if ph or pw or hh > h + ph or hw > w + pw:
        xp = np.zeros((n, c, hh, hw), x4.dtype)
        xp[:, :, ph:ph + h, pw:pw + w] = x4
    else:
        xp = x4
    s0, s1, s2, s3 = xp.strides
    if rows:
        return as_strided(xp, (n, ho, wo, c, kh, kw), (s0, s2 * sh, s3 * sw, s1, s2 * dh, s3 * dw), writeable=False)
    return as_strided(xp, (n, c, kh, kw, ho, wo), (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw), writeable=False)


def conv2d(x4, w4, b, stride, dilation, pad_lo, out_hw, groups, scratch):
    """``(N, C, H, W) * (O, C/g, kh, kw)`` with ``pad_lo`` leading zeros (the trailing ones follow from ``out_hw``);
    returns ``(N, O, ho, wo)``, possibly a transposed view when the output is small."""
    from . import _conv_numba as k  # optional: numba, never loaded by import toolkit

    (sh, sw), (dh, dw), (ph, pw), (ho, wo) = stride, dilation, pad_lo, out_hw
    dtype = x4.dtype
    n, c = x4.shape[:2]
    o, cg, kh, kw = w4.shape
    g, og, red, length = groups, o // groups, cg * kh * kw, ho * wo
    if length * ROWS_RATIO < red:
        # numpy's strided copy beats a compiled loop here (its inner runs are the long contiguous input rows)
        rows = scratch((n, length, c * kh * kw), dtype)
        np.copyto(rows.reshape(n, ho, wo, c, kh, kw), _windows(x4, ph, pw, sh, sw, dh, dw, kh, kw, ho, wo))
        wm, rg = w4.reshape(g, og, red), rows.reshape(n * length, g, red)
        res = np.stack([long_product(wm[gi], rg[:, gi].T) for gi in range(g)])
        out = res.reshape(o, n, length).transpose(1, 0, 2)
        if b is not None:
            out = out + b.astype(dtype, copy=False)[:, None]
        return out.reshape(n, o, ho, wo)
    extra = 0 if b is None else 1
    cols = scratch((n, g, red + extra, length), dtype)
    if extra:
        cols[:, :, red] = 1
    if ph or pw or (ho - 1) * sh + dh * (kh - 1) >= x4.shape[2] or (wo - 1) * sw + dw * (kw - 1) >= x4.shape[3]:
        # padded: the compiled loop reads outside taps as zero instead of copying the input into a padded one
        k.im2col_cols(x4, cols, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)
    else:  # unpadded: numpy's strided copy is 2-3x faster than the compiled loop over these short rows
        win = _windows(x4, 0, 0, sh, sw, dh, dw, kh, kw, ho, wo, rows=False)
        np.copyto(cols[:, :, :red].reshape(n, g, cg, kh, kw, ho, wo), win.reshape(n, g, cg, kh, kw, ho, wo))
    wm = np.empty((g, og, red + extra), dtype)
    wm[:, :, :red] = w4.reshape(g, og, red)
    if extra:
        wm[:, :, red] = b.reshape(g, og)
    return np.matmul(wm, cols).reshape(n, o, ho, wo)


def conv_transpose2d(x4, w4, b, stride, dilation, padding, out_hw, groups, scratch):
    """Transposed ``(N, C, H, W) * (C, O/g, kh, kw)``: one batched matmul into columns, then col2im into the
    ``out_hw`` output (``padding`` cropped off the front) starting from the bias."""
    from . import _conv_numba as k  # optional: numba, never loaded by import toolkit

    (sh, sw), (dh, dw), (ph, pw) = stride, dilation, padding
    dtype = x4.dtype
    n, c, h, w = x4.shape
    _, og, kh, kw = w4.shape
    g = groups
    cg = c // g
    wm = w4.reshape(g, cg, og * kh * kw).transpose(0, 2, 1)
    cols = np.matmul(wm, np.ascontiguousarray(x4).reshape(n, g, cg, h * w),
                     out=scratch((n, g, og * kh * kw, h * w), dtype))
    out = np.empty((n, g * og) + tuple(out_hw), dtype)
    bias = np.zeros(0, dtype) if b is None else np.ascontiguousarray(b, dtype)
    k.col2im(cols.reshape(n, g * og * kh * kw, h * w), bias, out, kh, kw, sh, sw, ph, pw, dh, dw, h, w)
    return out
