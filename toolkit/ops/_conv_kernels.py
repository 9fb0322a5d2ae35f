"""CPU kernels and shape checks behind the convolution ops (toolkit/ops/conv.py).

Convolution is im2col plus one batched BLAS matmul: the padded input is viewed
as sliding windows (no copy), copied once into a ``(N, groups, C/g*kh*kw, L)``
column buffer, and multiplied by the ``(groups, O/g, C/g*kh*kw)`` weight
matrix, which yields the ``(N, O, Ho, Wo)`` result in place. The transposed
convolution multiplies first and then accumulates the columns back into the
image with one strided add per kernel offset (col2im without ``np.add.at``).
1-d convolutions run as 2-d ones with a height of one; 3-d convolutions take
the same steps over three spatial dimensions (``conv3d_forward``,
``conv_transpose3d_forward``). Non-empty float32/float64 1-d and 2-d calls
take the compiled paths of ``_conv_fast`` instead; what follows here serves
the rest (float16, integers, empty tensors, 3-d).
"""

from __future__ import annotations

import threading

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._core import blas_threads as _blas
from .._core import dtypes as _dt
from . import _conv_fast


def expand_param(v, n: int, name: str) -> tuple:
    """A per-dimension parameter: one value repeated, or exactly ``n`` values (PyTorch's error otherwise)."""
    v = (v,) if isinstance(v, int) else tuple(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the convolution "
            f"dimensions, but got {name}={list(v)}")
    return v


def _fmt(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_dims(op: str, shape, nd: int) -> bool:
    """Accept an unbatched (``nd + 1``-d) or batched (``nd + 2``-d) input; True when batched."""
    if len(shape) not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input of size: "
            f"{_fmt(shape)}")
    return len(shape) == nd + 2


def conv_output_shape(x_shape, w_shape, b_shape, stride, pad_lo, pad_hi, dilation, groups,
                      transposed=False, output_padding=None, x_dtype=None, w_dtype=None, b_dtype=None) -> tuple:
    """Check a batched convolution's arguments as PyTorch does and return its output shape."""
    nd = len(x_shape) - 2
    if len(w_shape) != nd + 2:
        raise RuntimeError(
            f"Expected {len(w_shape)}-dimensional input for {len(w_shape)}-dimensional weight {_fmt(w_shape)}, "
            f"but got {len(x_shape)}-dimensional input of size {_fmt(x_shape)} instead")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in pad_lo) or any(p < 0 for p in pad_hi):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if x_dtype is not None and w_dtype is not None and x_dtype != w_dtype:
        raise RuntimeError(f"expected scalar type {_title(x_dtype)} but found {_title(w_dtype)}")
    if w_shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of "
            f"size [{_fmt(w_shape)}] instead")
    c = x_shape[1]
    if transposed:
        if c != w_shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_fmt(w_shape)}, expected input{_fmt(x_shape)} to have "
                f"{w_shape[0]} channels, but got {c} channels instead")
        out_c = w_shape[1] * groups
    else:
        if c != w_shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {_fmt(w_shape)}, expected input{_fmt(x_shape)} to have "
                f"{w_shape[1] * groups} channels, but got {c} channels instead")
        out_c = w_shape[0]
    if b_shape is not None and (len(b_shape) != 1 or b_shape[0] != out_c):
        raise RuntimeError(
            f"Given weight of size {_fmt(w_shape)}, expected bias to be 1-dimensional with {out_c} elements, but "
            f"got bias of size {_fmt(b_shape)} instead")
    if x_dtype is not None and b_dtype is not None and b_dtype != x_dtype:
        raise RuntimeError(f"expected scalar type {_title(x_dtype)} but found {_title(b_dtype)}")
    k = w_shape[2:]
    sp = x_shape[2:]
    if transposed:
        op = output_padding
        if any(o >= s and o >= d for o, s, d in zip(op, stride, dilation)):
            parts = " ".join(f"output_padding_{n}: {o}" for n, o in zip(_names(nd), op))
            parts += " " + " ".join(f"stride_{n}: {s}" for n, s in zip(_names(nd), stride))
            parts += " " + " ".join(f"dilation_{n}: {d}" for n, d in zip(_names(nd), dilation))
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {parts}")
        out = tuple((i - 1) * s - lo - hi + d * (kk - 1) + o + 1
                    for i, s, lo, hi, d, kk, o in zip(sp, stride, pad_lo, pad_hi, dilation, k, op))
        return (x_shape[0], out_c) + out
    padded = tuple(i + lo + hi for i, lo, hi in zip(sp, pad_lo, pad_hi))
    eff = tuple(d * (kk - 1) + 1 for d, kk in zip(dilation, k))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    out = tuple((p - e) // s + 1 for p, e, s in zip(padded, eff, stride))
    return (x_shape[0], out_c) + out


def _names(nd):
    return ("height", "width") if nd == 2 else ("width",) if nd == 1 else tuple(f"dim{i}" for i in range(nd))


def _title(d) -> str:
    return _dt.title(getattr(d, "name", str(d)))


def same_padding(w_shape, dilation) -> tuple[tuple, tuple]:
    """PyTorch's ``padding='same'``: total ``d*(k-1)`` split evenly, the odd element at the end."""
    lo, hi = [], []
    for k, d in zip(w_shape[2:], dilation):
        total = d * (k - 1)
        lo.append(total // 2)
        hi.append(total - total // 2)
    return tuple(lo), tuple(hi)


def _as4d(x, nd):
    return x[:, :, None, :] if nd == 1 else x


def _p2(v, nd, fill):
    return (fill,) + tuple(v) if nd == 1 else tuple(v)


_ROWS_RATIO = 64  # few output positions per reduction: one GEMM over all batches

_scratch_local = threading.local()  # each thread's own buffers: two threads' convolutions never share one


def _scratch(shape: tuple, dtype) -> np.ndarray:
    """A reused work buffer for im2col columns (never returned to callers), the calling thread's own.

    Fresh multi-megabyte buffers come from the OS with new pages each call,
    and those page faults cost as much as the copy itself; keeping the last
    few buffers makes a training loop's convolutions about twice as fast.
    """
    buffers = _scratch_local.__dict__.setdefault("buffers", {})
    key = (shape, np.dtype(dtype).str)
    buf = buffers.pop(key, None)
    if buf is None:
        buf = np.empty(shape, dtype)
    buffers[key] = buf  # most recently used last
    while len(buffers) > 8:
        buffers.pop(next(iter(buffers)))
    return buf


def conv_forward(x, w, b, stride, pad_lo, pad_hi, dilation, groups):
    """Batched convolution of ``x`` (N, C, *spatial) with ``w`` (O, C/g, *kernel), 1-d, 2-d or 3-d."""
    _blas.fit_blas_threads(x.size * w.shape[0])
    nd = x.ndim - 2
    if nd == 3:
        return conv3d_forward(x, w, b, stride, pad_lo, pad_hi, dilation, groups)
    x4, w4 = _as4d(x, nd), _as4d(w, nd)
    sh, sw = _p2(stride, nd, 1)
    plh, plw = _p2(pad_lo, nd, 0)
    phh, phw = _p2(pad_hi, nd, 0)
    dh, dw = _p2(dilation, nd, 1)
    dtype = np.result_type(x.dtype, w.dtype)
    n, c, h, wd = x4.shape
    o, cg, kh, kw = w4.shape
    g = groups
    ho = (h + plh + phh - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + plw + phw - dw * (kw - 1) - 1) // sw + 1
    if _conv_fast.applies(x4, w4) and ho > 0 and wo > 0:
        out = _conv_fast.conv2d(x4, w4, b, (sh, sw), (dh, dw), (plh, plw), (ho, wo), g, _scratch)
        return out[:, :, 0] if nd == 1 else out
    if plh or plw or phh or phw:
        xp = np.zeros((n, c, h + plh + phh, wd + plw + phw), dtype)
        xp[:, :, plh:plh + h, plw:plw + wd] = x4
    else:
        xp = x4
    ho = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    wo = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    s = xp.strides
    win = as_strided(xp, (n, c, kh, kw, ho, wo), (s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw),
                     writeable=False)
    wm = np.ascontiguousarray(w4, dtype).reshape(g, o // g, cg * kh * kw)
    k = cg * kh * kw
    if ho * wo * _ROWS_RATIO < k and n > 1:
        # Few output positions, long reductions (the weight gradient): one GEMM per group over all
        # batches, with rows (batch, position) and columns copied from contiguous runs of the input.
        cols = _scratch((g, n, ho, wo, cg, kh, kw), dtype)
        np.copyto(cols, win.reshape(n, g, cg, kh, kw, ho, wo).transpose(1, 0, 5, 6, 2, 3, 4))
        out = np.matmul(wm, cols.reshape(g, n * ho * wo, k).transpose(0, 2, 1))  # (g, o/g, n*L)
        out = np.ascontiguousarray(out.reshape(g, o // g, n, ho * wo).transpose(2, 0, 1, 3))
    else:
        if kh == 1 and kw == 1 and sh == 1 and sw == 1 and xp.flags.c_contiguous:
            cols = xp.reshape(n, g, cg, ho * wo)
        else:
            cols = _scratch((n, c, kh, kw, ho, wo), dtype)
            np.copyto(cols, win)
            cols = cols.reshape(n, g, k, ho * wo)
        out = np.matmul(wm, cols)  # (n, g, o/g, L): already NCHW
    out = out.reshape((n, o) + ((wo,) if nd == 1 else (ho, wo)))
    if b is not None:
        out += b.reshape((o,) + (1,) * nd).astype(dtype, copy=False)
    return out


def conv_transpose_forward(x, w, b, stride, padding, output_padding, dilation, groups):
    """Batched transposed convolution of ``x`` (N, C, *spatial) with ``w`` (C, O/g, *kernel): col2im by offsets."""
    _blas.fit_blas_threads(x.size * w.shape[0])
    nd = x.ndim - 2
    if nd == 3:
        return conv_transpose3d_forward(x, w, b, stride, padding, output_padding, dilation, groups)
    x4, w4 = _as4d(x, nd), _as4d(w, nd)
    sh, sw = _p2(stride, nd, 1)
    ph, pw = _p2(padding, nd, 0)
    oph, opw = _p2(output_padding, nd, 0)
    dh, dw = _p2(dilation, nd, 1)
    dtype = np.result_type(x.dtype, w.dtype)
    n, c, h, wd = x4.shape
    _, og, kh, kw = w4.shape
    g = groups
    cg = c // g
    hf = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    wf = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    if _conv_fast.applies(x4, w4) and hf > 2 * ph and wf > 2 * pw:
        out = _conv_fast.conv_transpose2d(x4, w4, b, (sh, sw), (dh, dw), (ph, pw), (hf - 2 * ph, wf - 2 * pw), g,
                                          _scratch)
        return out[:, :, 0] if nd == 1 else out
    wm = np.ascontiguousarray(w4, dtype).reshape(g, cg, og * kh * kw).transpose(0, 2, 1)
    cols = np.matmul(wm, np.ascontiguousarray(x4, dtype).reshape(n, g, cg, h * wd),
                     out=_scratch((n, g, og * kh * kw, h * wd), dtype))  # (n, g, og*kh*kw, h*w)
    cols = cols.reshape(n, g * og, kh, kw, h, wd)
    full = np.zeros((n, g * og, hf, wf), dtype)
    for i in range(kh):
        for j in range(kw):
            full[:, :, i * dh:i * dh + (h - 1) * sh + 1:sh, j * dw:j * dw + (wd - 1) * sw + 1:sw] += cols[:, :, i, j]
    ho, wo = hf - 2 * ph, wf - 2 * pw
    out = full[:, :, ph:ph + ho, pw:pw + wo]
    if ph or pw:
        out = np.ascontiguousarray(out)
    if nd == 1:
        out = out[:, :, 0, :]
    if b is not None:
        out += b.reshape((g * og,) + (1,) * nd).astype(dtype, copy=False)
    return out


def conv3d_forward(x, w, b, stride, pad_lo, pad_hi, dilation, groups):
    """Batched 3-d convolution: (N, C, D, H, W) windows copied into columns, one batched matmul per group."""
    _blas.fit_blas_threads(x.size * w.shape[0])
    dtype = np.result_type(x.dtype, w.dtype)
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    g = groups
    if any(pad_lo) or any(pad_hi):
        xp = np.zeros((n, c) + tuple(s + lo + hi for s, lo, hi in zip(x.shape[2:], pad_lo, pad_hi)), dtype)
        xp[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for lo, s in zip(pad_lo, x.shape[2:]))] = x
    else:
        xp = x
    out = tuple((p - d * (kk - 1) - 1) // s + 1 for p, kk, s, d in zip(xp.shape[2:], k, stride, dilation))
    st = xp.strides
    win = as_strided(xp, (n, c) + tuple(k) + out,
                     st[:2] + tuple(a * d for a, d in zip(st[2:], dilation)) + tuple(a * s for a, s in
                                                                                    zip(st[2:], stride)),
                     writeable=False)
    red = cg * int(np.prod(k))
    length = int(np.prod(out))
    cols = _scratch((n, c) + tuple(k) + out, dtype)
    np.copyto(cols, win)
    wm = np.ascontiguousarray(w, dtype).reshape(g, o // g, red)
    res = np.matmul(wm, cols.reshape(n, g, red, length)).reshape((n, o) + out)
    if b is not None:
        res += b.reshape((o, 1, 1, 1)).astype(dtype, copy=False)
    return res


def conv_transpose3d_forward(x, w, b, stride, padding, output_padding, dilation, groups):
    """Batched 3-d transposed convolution: one batched matmul, then col2im with one strided add per offset."""
    _blas.fit_blas_threads(x.size * w.shape[0])
    dtype = np.result_type(x.dtype, w.dtype)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    og = w.shape[1]
    k = w.shape[2:]
    g = groups
    cg = c // g
    red = og * int(np.prod(k))
    length = int(np.prod(sp))
    wm = np.ascontiguousarray(w, dtype).reshape(g, cg, red).transpose(0, 2, 1)
    cols = np.matmul(wm, np.ascontiguousarray(x, dtype).reshape(n, g, cg, length),
                     out=_scratch((n, g, red, length), dtype)).reshape((n, g * og) + tuple(k) + sp)
    full_sp = tuple((i - 1) * s + d * (kk - 1) + 1 + op
                    for i, s, d, kk, op in zip(sp, stride, dilation, k, output_padding))
    full = np.zeros((n, g * og) + full_sp, dtype)
    for a in range(k[0]):
        for bb in range(k[1]):
            for cc in range(k[2]):
                region = tuple(slice(off * d, off * d + (i - 1) * s + 1, s)
                               for off, d, i, s in zip((a, bb, cc), dilation, sp, stride))
                full[(slice(None), slice(None)) + region] += cols[:, :, a, bb, cc]
    inner = tuple(slice(p, f - p) for p, f in zip(padding, full_sp))
    out = np.ascontiguousarray(full[(slice(None), slice(None)) + inner])
    if b is not None:
        out += b.reshape((g * og, 1, 1, 1)).astype(dtype, copy=False)
    return out
