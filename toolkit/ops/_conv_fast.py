"""The float32/float64 2-d convolution paths: compiled im2col, im2row or col2im around BLAS GEMMs.

``conv_forward`` and ``conv_transpose_forward`` (``_conv_kernels``) send
their common case here: a 1-d or 2-d, non-empty, float32 or float64 call.
Every GEMM here runs near the BLAS's peak (about 50 G multiply-adds a second
on one core of the reference machine), so what this module saves is copies:

- forward: ``_conv_numba.im2col`` writes the columns in the layout the GEMM
  reads, padding read as zero, the bias riding in the GEMM as one more row of
  ones. With many output positions per sample that is ``(N, g, C/g*kh*kw+1,
  L)`` and one GEMM per sample yields NCHW in place; with few (``FOLD_LENGTH``)
  the batch joins the columns, ``(g, C/g*kh*kw+1, N*L)``, one GEMM per group,
  and the small result is copied back into NCHW (contiguous, as PyTorch's).
- weight gradient (few output positions, a long reduction: the call the
  derivative makes with the input and the output gradient transposed): the
  register-tiled products of ``_conv_weight_grad``, no GEMM; for short output
  planes, where those products' sums cost more than they save,
  ``_channel_products``, one GEMM per input channel over windows copied by
  ``_conv_numba.im2row``. Both read the output gradient in place.
- transposed convolution (the input gradient): one GEMM into columns, per
  sample or over the whole batch as above, then ``_conv_numba.col2im`` sums
  them into the cropped output starting from the bias.

Large forward and transposed calls cut the batch into slices that the cores
compute side by side (``backends.cpu.split.run_slices``), each slice with
columns of its own and the BLAS on one thread meanwhile (a threaded BLAS
splits these narrow products poorly; the slices use every core). Serial
calls take their work buffers from the caller's ``scratch`` (reused between
calls; a fresh multi-megabyte buffer costs as much in page faults as filling
it); the slices allocate theirs from the kept heap (``_core.heap``).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._core.blas_threads import one_thread as one_blas_thread
from ..backends.cpu.split import run_slices, split_threads

FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
ROWS_RATIO = 64  # few output positions per reduction (the weight gradient): tiled or per-channel products
# Output positions per sample below which one GEMM spans the batch: 5-10% faster for 4x4 to 8x8 outputs (a
# batch of 64 or 128, 10 to 64 channels), even at 16x16, 2.6x slower at 32x32 (the result's transpose).
FOLD_LENGTH = 256
# Multiply-adds a GEMM runs in the time of one float32 term of a sum (the unit of work the split weighs).
MACS_PER_WORK = 4


def _flat(a):
    """``a``'s memory as a flat array and ``a``'s strides in elements (a copy first where they are negative)."""
    size = a.itemsize
    if any(st < 0 or st % size for st in a.strides):
        a = np.ascontiguousarray(a)
    strides = tuple(st // size for st in a.strides)
    span = 1 + sum((d - 1) * st for d, st in zip(a.shape, strides))
    if span == a.size:
        # Dense in some order (a transposed view): numpy's ravel in memory order is then a view of exactly that
        # memory, from ``a``'s first element (the lowest address, all strides being positive here); a copy
        # means the layout only looked dense (overlapping strides), and the general view below serves it.
        flat = a.ravel(order="K")
        if flat.base is not None:
            return flat, strides
    return as_strided(a, (span,), (size,), writeable=False), strides


def applies(x4, w4) -> bool:
    """True when the compiled path handles these (4-d, batched) operands."""
    return x4.dtype in FAST_DTYPES and x4.dtype == w4.dtype and x4.size > 0 and w4.size > 0


def _dense(a, scratch):
    """``a`` C-contiguous: itself, or a copy in a reused flat buffer (a fresh multi-megabyte one costs as much in
    page faults as the copy; a flat key never meets the shaped column buffers of the same call)."""
    if a.flags.c_contiguous:
        return a
    out = scratch((a.size,), a.dtype).reshape(a.shape)
    np.copyto(out, a)
    return out


def _plane_runs(w4, scratch):
    """``w4`` with each ``(kh, kw)`` plane one contiguous run: itself, or its distinct planes copied (a gradient
    broadcast along the batch or channels, ``y.sum()``'s, keeps strides 0 there, so one plane serves them all)."""
    o, c, kh, kw = w4.shape
    st = w4.strides
    if (kw == 1 or st[3] == w4.itemsize) and (kh == 1 or st[2] == kw * w4.itemsize):
        return w4
    dense = _dense(w4[:o if st[0] else 1, :c if st[1] else 1], scratch)
    return as_strided(dense, w4.shape, (dense.strides[0] if st[0] else 0, dense.strides[1] if st[1] else 0)
                      + dense.strides[2:], writeable=False)


def _channel_products(x4, w4, ph, pw, sh, sw, dh, dw, kh, kw, ho, wo, groups, scratch):
    """``(N, C, H, W) * (O, C/g, kh, kw)`` for few output positions and a long reduction (the weight gradient,
    where ``C`` is the batch of the forward convolution and the kernel its output plane), as ``(g, O/g, N*L)``;
    taken where the kernel (the forward output plane) is too short for ``_conv_weight_grad``'s products.

    One GEMM per input channel (``(O/g, kh*kw) @ (kh*kw, N*L)``) summed over the channels: the operand
    ``w4[:, c]`` is then a plane of the output gradient as the engine holds it, so it is read in place instead
    of being transposed into one long ``(O, C*kh*kw)`` matrix (a copy of the whole gradient). The windows are
    copied once with the reduction contiguous.
    """
    from . import _conv_numba as k  # optional: numba, never loaded by import toolkit

    n, c, h, w = x4.shape
    o = w4.shape[0]
    g, cg, kk, length = groups, c // groups, kh * kw, ho * wo
    rows = scratch((c, n, length, kk), x4.dtype)
    flat, st = _flat(x4)
    k.im2row(flat, *st, rows.reshape(-1), n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)
    wm = w4.reshape(g, o // g, cg, kk).transpose(0, 2, 1, 3)  # (g, cg, O/g, kh*kw), in place when w4 is
    if not (wm.strides[-1] == wm.itemsize and wm.strides[-2] % wm.itemsize == 0 and wm.strides[-2] > 0):
        wm = _dense(wm, scratch)  # a broadcast gradient (strides 0) would send matmul off BLAS
    prods = np.matmul(wm, rows.reshape(g, cg, n * length, kk).transpose(0, 1, 3, 2))  # (g, cg, O/g, N*L)
    return prods.sum(1)


def conv2d(x4, w4, b, stride, dilation, pad_lo, out_hw, groups, scratch):
    """``(N, C, H, W) * (O, C/g, kh, kw)`` with ``pad_lo`` leading zeros (the trailing ones follow from ``out_hw``);
    returns ``(N, O, ho, wo)``, contiguous."""
    (sh, sw), (dh, dw), (ph, pw), (ho, wo) = stride, dilation, pad_lo, out_hw
    dtype = x4.dtype
    n, c = x4.shape[:2]
    o, cg, kh, kw = w4.shape
    g, og, red, length = groups, o // groups, cg * kh * kw, ho * wo
    if length * ROWS_RATIO < red:
        from . import _conv_weight_grad as wg  # optional: numba, never loaded by import toolkit

        if wg.applies(kh * kw, og):
            flat, st = _flat(x4)
            wflat, wst = _flat(_plane_runs(w4, scratch))
            out = wg.conv2d(flat, st, wflat, wst, n, c, x4.shape[2], x4.shape[3], o, g, kh, kw, sh, sw, ph, pw,
                            dh, dw, ho, wo)
            if b is not None:
                out += b.astype(dtype, copy=False)[:, None, None]
            return out
        out = _channel_products(x4, w4, ph, pw, sh, sw, dh, dw, kh, kw, ho, wo, g, scratch)
        out = out.reshape(o, n, length).transpose(1, 0, 2)
        if b is not None:
            out = out + b.astype(dtype, copy=False)[:, None]  # a fresh NCHW array
        return np.ascontiguousarray(out).reshape(n, o, ho, wo)
    extra = 0 if b is None else 1
    fold = n > 1 and length < FOLD_LENGTH
    wm = np.empty((g, og, red + extra), dtype)
    wm[:, :, :red] = w4.reshape(g, og, red)
    if extra:
        wm[:, :, red] = b.reshape(g, og)
    x4 = np.ascontiguousarray(x4)
    geometry = (fold, extra, cg, kh, kw, sh, sw, ph, pw, dh, dw)
    threads = split_threads(n * o * length * red // MACS_PER_WORK, n)
    if threads > 1:  # the samples shared over the cores, each thread's products on one BLAS thread
        with one_blas_thread():
            out, = run_slices(_forward_samples, n, 0, (x4,), (np.empty((n, o, ho, wo), dtype),), (wm, *geometry),
                              threads=threads)
        return out
    out = np.empty((n, o, ho, wo), dtype)
    _forward_into(x4, out, wm, scratch, *geometry)
    return out


def _forward_into(x4, out, wm, scratch, fold, extra, cg, kh, kw, sh, sw, ph, pw, dh, dw):
    """``out`` ``(N, O, ho, wo)`` = the convolution of the contiguous ``x4`` by ``wm`` ``(g, O/g, C/g*kh*kw (+1 for
    the bias))``, through columns from ``scratch``: ``(g, rows, N, L)`` when ``fold`` (the batch joins the GEMM's
    columns; the small result is copied into NCHW, contiguous as PyTorch's), else ``(N, g, rows, L)`` (one GEMM
    per sample, NCHW in place); the bias rides in the GEMM as one more row of ones."""
    from . import _conv_numba as k  # optional: numba, never loaded by import toolkit

    n, c, h, w = x4.shape
    g, og, rows = wm.shape
    red, (ho, wo) = rows - extra, out.shape[2:]
    length = ho * wo
    buf = scratch((g, rows, n, length) if fold else (n, g, rows, length), x4.dtype)
    if fold:
        strides = (length, rows * n * length, n * length)
        if extra:
            buf[:, red] = 1
    else:
        strides = (g * rows * length, rows * length, length)
        if extra:
            buf[:, :, red] = 1
    k.im2col(x4.reshape(-1), buf.reshape(-1), *strides, n, c, h, w, cg, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)
    if fold:
        res = np.matmul(wm, buf.reshape(g, rows, n * length))
        np.copyto(out.reshape(n, g * og, length), res.reshape(g * og, n, length).transpose(1, 0, 2))
    else:
        np.matmul(wm, buf, out=out.reshape(n, g, og, length))


def _fresh(shape, dtype):
    """A new work buffer: split slices run side by side, so each takes its own instead of the shared scratch."""
    return np.empty(shape, dtype)


def _forward_samples(x4, out, wm, *geometry):
    """``_forward_into`` for a slice of the batch, with columns of its own (the slices run side by side)."""
    _forward_into(x4, out, wm, _fresh, *geometry)


def conv_transpose2d(x4, w4, b, stride, dilation, padding, out_hw, groups, scratch):
    """Transposed ``(N, C, H, W) * (C, O/g, kh, kw)``: one batched matmul into columns, then col2im into the
    ``out_hw`` output (``padding`` cropped off the front) starting from the bias."""
    (sh, sw), (dh, dw), (ph, pw) = stride, dilation, padding
    dtype = x4.dtype
    n, c, h, w = x4.shape
    _, og, kh, kw = w4.shape
    g = groups
    wm = w4.reshape(g, c // g, og * kh * kw).transpose(0, 2, 1)
    ho, wo = out_hw
    bias = np.zeros(0, dtype) if b is None else np.ascontiguousarray(b, dtype)
    geometry = (n > 1 and h * w < FOLD_LENGTH, kh, kw, sh, sw, ph, pw, dh, dw)
    threads = split_threads(n * c * og * kh * kw * h * w // MACS_PER_WORK, n)
    if threads > 1:  # the samples shared over the cores, each thread's products on one BLAS thread
        with one_blas_thread():
            out, = run_slices(_transposed_samples, n, 0, (x4,), (np.empty((n, g * og, ho, wo), dtype),),
                              (wm, bias, *geometry), threads=threads)
        return out
    out = np.empty((n, g * og, ho, wo), dtype)
    _transposed_into(x4, out, wm, bias, scratch, *geometry)
    return out


def _transposed_into(x4, out, wm, bias, scratch, fold, kh, kw, sh, sw, ph, pw, dh, dw):
    """``out`` ``(N, g*O/g, ho, wo)`` = the transposed convolution of ``x4`` by ``wm`` ``(g, O/g*kh*kw, C/g)``: one
    matmul into columns, per sample or, when ``fold`` (few positions per sample), one spanning the batch, then
    col2im into the cropped output starting from ``bias``; work buffers from ``scratch``."""
    from . import _conv_numba as k  # optional: numba, never loaded by import toolkit

    n, c, h, w = x4.shape
    g, okk, cg = wm.shape
    hw = h * w
    if fold:  # columns (g*okk, N, hw)
        xt = np.ascontiguousarray(x4.reshape(n, g, cg, hw).transpose(1, 2, 0, 3)).reshape(g, cg, n * hw)
        cols = np.matmul(wm, xt, out=scratch((g, okk, n * hw), x4.dtype))
        sample_stride, row_stride = hw, n * hw
    else:
        cols = np.matmul(wm, _dense(x4, scratch).reshape(n, g, cg, hw), out=scratch((n, g, okk, hw), x4.dtype))
        sample_stride, row_stride = g * okk * hw, hw
    ho, wo = out.shape[2:]
    k.col2im(cols.reshape(-1), sample_stride, row_stride, bias, out.reshape(-1), n, out.shape[1], kh, kw, sh, sw,
             ph, pw, dh, dw, h, w, ho, wo)


def _transposed_samples(x4, out, wm, bias, *geometry):
    """``_transposed_into`` for a slice of the batch, with buffers of its own (the slices run side by side)."""
    _transposed_into(x4, out, wm, bias, _fresh, *geometry)


