"""Neural-network kernels on the device: convolution (im2col + GEMM), max pooling, softmax, nll_loss.

Convolutions unfold the input into columns (``im2col``) and multiply by the
weight with the tiled GEMM; transposed convolutions (the input gradient)
multiply first and fold the columns back (``col2im``, a gather, so no atomics).
Argument checks and output shapes come from the CPU ops' own helpers and
meta rules, so errors read the same on both devices.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from ...ops.conv import conv_setup
from ...ops.pooling import pool_shape
from . import runtime
from .array import CudaArray, contiguous, copy_strided, fill
from .codegen import run_map, typed_scalar
from .gemm import gemm
from .reduce import row_reduce
from .registration import meta_of, register_table


@functools.cache
def _im2col():

    @cuda.jit
    def k(x, xo, s0, s1, s2, s3, cols, total, c, h, w, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            ox = i % ow
            r = i // ow
            oy = r % oh
            r //= oh
            kj = r % kw
            r //= kw
            ki = r % kh
            r //= kh
            ch = r % c
            n = r // c
            y = oy * sh - ph + ki * dh
            xx = ox * sw - pw + kj * dw
            if 0 <= y < h and 0 <= xx < w:
                cols[i] = x[xo + n * s0 + ch * s1 + y * s2 + xx * s3]
            else:
                cols[i] = zero

    return k


@functools.cache
def _col2im():

    @cuda.jit
    def k(cols, out, total, c, h, w, kh, kw, ih, iw, sh, sw, ph, pw, dh, dw, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            xx = i % w
            r = i // w
            y = r % h
            r //= h
            ch = r % c
            n = r // c
            acc = zero
            for ki in range(kh):
                ty = y + ph - ki * dh
                if ty >= 0 and ty % sh == 0 and ty // sh < ih:
                    for kj in range(kw):
                        tx = xx + pw - kj * dw
                        if tx >= 0 and tx % sw == 0 and tx // sw < iw:
                            acc += cols[((n * c + ch) * kh * kw + ki * kw + kj) * ih * iw + (ty // sh) * iw + tx // sw]
            out[i] = acc

    return k


def conv2d_forward(x, w, bias, stride, lo, hi, dilation, groups) -> CudaArray:
    """A batched 2-d convolution of (N, C, H, W) ``x`` by (O, C/groups, kh, kw) ``w``."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h + lo[0] + hi[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + lo[1] + hi[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = CudaArray.empty((n, o, oh, ow), x.dtype)
    if out.size == 0:
        return out
    kdim = c * kh * kw
    cols = CudaArray.empty((n, kdim, oh * ow), x.dtype)
    total = cols.size
    runtime.launch(_im2col(), total, x.buf, x.offset, *x.estrides, cols.buf, total, c, h, wd, kh, kw, oh, ow,
                   *stride, lo[0], lo[1], *dilation, typed_scalar(0, x.dtype))
    og, kg = o // groups, cg * kh * kw
    wm = w.reshape((o, kg))
    for g in range(groups):
        a = wm.view_of((og, kg), wm.strides, wm.offset + g * og * kg)
        b = cols.view_of((n, kg, oh * ow), cols.strides, g * kg * oh * ow)
        dst = out.view_of((n, og, oh * ow), (o * oh * ow * out.itemsize, oh * ow * out.itemsize, out.itemsize),
                          g * og * oh * ow)
        gemm(a, b, dst)
    if bias is not None:
        run_map("s + b", out, {"s": out, "b": bias.reshape((o, 1, 1))}, {})
    return out


def conv2d_transpose(x, w, bias, stride, padding, output_padding, dilation, groups) -> CudaArray:
    """A batched transposed 2-d convolution of (N, Cin, h, w) ``x`` by (Cin, Cout/groups, kh, kw) ``w``."""
    n, cin, ih, iw = x.shape
    _, cog, kh, kw = w.shape
    cout = cog * groups
    h = (ih - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    wd = (iw - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    out = CudaArray.empty((n, cout, h, wd), x.dtype)
    if out.size == 0:
        return out
    cig = cin // groups
    rows = cog * kh * kw
    cols = CudaArray.empty((n, cout * kh * kw, ih * iw), x.dtype)
    wm = w.reshape((cin, rows))
    xm = x.reshape((n, cin, ih * iw))
    for g in range(groups):
        a = wm.view_of((rows, cig), (wm.strides[1], wm.strides[0]), wm.offset + g * cig * rows)
        b = xm.view_of((n, cig, ih * iw), xm.strides, xm.offset + g * cig * ih * iw)
        dst = cols.view_of((n, rows, ih * iw), cols.strides, g * rows * ih * iw)
        gemm(a, b, dst)
    total = out.size
    runtime.launch(_col2im(), total, cols.buf, out.buf, total, cout, h, wd, kh, kw, ih, iw, *stride, *padding,
                   *dilation, typed_scalar(0, x.dtype))
    if bias is not None:
        run_map("s + b", out, {"s": out, "b": bias.reshape((cout, 1, 1))}, {})
    return out


def _as_2d(x: CudaArray) -> CudaArray:
    return x.reshape(x.shape[:2] + (1,) + x.shape[2:])


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    meta = meta_of(R.get("convolution"), [input, weight, bias, stride, padding, dilation, transposed,
                                         output_padding, groups])
    nd = input.ndim - 2

    def two(v, fill_):
        v = tuple(v) if len(v) == nd else tuple(v) * nd
        return v if nd == 2 else (fill_,) + v

    x, w = (input, weight) if nd == 2 else (_as_2d(input), _as_2d(weight))
    s, p, d, op_ = two(stride, 1), two(padding, 0), two(dilation, 1), two(output_padding or (0,), 0)
    if transposed:
        out = conv2d_transpose(x, w, bias, s, p, op_, d, groups)
    else:
        out = conv2d_forward(x, w, bias, s, p, p, d, groups)
    return out.reshape(tuple(meta.shape))


def _public_conv(name: str, nd: int):
    def kernel(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        batched, stride, lo, hi, dilation, _ = conv_setup(name, nd, input, weight, bias, stride, padding,
                                                          dilation, groups)
        x = input if batched else input.reshape((1,) + input.shape)
        w = weight
        if nd == 1:
            x, w = _as_2d(x), _as_2d(w)
            stride, lo, hi, dilation = (1,) + tuple(stride), (0,) + tuple(lo), (0,) + tuple(hi), (1,) + tuple(dilation)
        out = conv2d_forward(x, w, bias, tuple(stride), tuple(lo), tuple(hi), tuple(dilation), groups)
        if nd == 1:
            out = out.reshape(out.shape[:2] + out.shape[3:])
        return out if batched else out.reshape(out.shape[1:])

    return kernel


# ----------------------------------------------------------------------------- pooling
@cuda.jit(device=True)
def plane_yx(i, h, w):
    """(plane, row, column) of the flat index ``i`` into contiguous ``(planes, h, w)`` data."""
    return i // (h * w), (i // w) % h, i % w


@functools.cache
def _pool_fwd():

    @cuda.jit
    def k(x, out, idx, total, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            plane, oy, ox = plane_yx(i, oh, ow)
            best = x[plane * h * w] * 0
            bi = -1
            for ki in range(kh):
                y = oy * sh - ph + ki * dh
                if 0 <= y < h:
                    for kj in range(kw):
                        xx = ox * sw - pw + kj * dw
                        if 0 <= xx < w:
                            v = x[plane * h * w + y * w + xx]
                            if bi < 0 or v > best or (v != v and best == best):
                                best = v
                                bi = y * w + xx
            out[i] = best
            idx[i] = bi

    return k


@functools.cache
def _pool_bwd():

    @cuda.jit
    def k(g, idx, out, total, hw, ohw):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            plane = i // ohw
            cuda.atomic.add(out, plane * hw + idx[i], g[i])

    return k


def _max_pool(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False, name="max_pool2d"):
    k, s, p, d, (ho, wo) = pool_shape(name, self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    h, w = self.shape[-2:]
    lead = self.shape[:-2]
    out = CudaArray.empty(lead + (ho, wo), self.dtype)
    idx = CudaArray.empty(lead + (ho, wo), np.int64)
    runtime.launch(_pool_fwd(), out.size, self.flat_device(), out.buf, idx.buf, out.size, h, w, ho, wo, *k, *s, *p,
                   *d)
    return out, idx


def max_pool2d_with_indices(self, *args):
    return _max_pool(self, *args)


def max_pool2d(self, *args):
    return _max_pool(self, *args)[0]


def max_pool2d_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    h, w = self.shape[-2:]
    g = contiguous(grad_output, self.dtype)
    out = fill(CudaArray.empty(self.shape, self.dtype), 0)
    ohw = grad_output.shape[-2] * grad_output.shape[-1]
    runtime.launch(_pool_bwd(), g.size, g.flat_device(), indices.flat_device(), out.buf, g.size, h * w, ohw)
    return out


def max_pool2d_backward_from_input(grad_output, self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                                   ceil_mode=False):
    """``max_pool2d_backward``: the forward's indices found again, then scattered as with them."""
    idx = _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode)[1]
    return max_pool2d_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, idx)


# ----------------------------------------------------------------------------- softmax, nll_loss
def _softmax(log: bool):
    name = "log_softmax" if log else "softmax"

    def kernel(self, dim, dtype=None):
        meta = meta_of(R.get(name, "int"), [self, dim, dtype])
        x = self.astype(meta.dtype.np) if self.dtype != meta.dtype.np else self
        if x.ndim == 0:
            return run_map("self * 0.0" if log else "self * 0.0 + 1.0", CudaArray.empty((), x.dtype), {"self": x}, {})
        d = dim % x.ndim
        perm = [i for i in range(x.ndim) if i != d] + [d]
        xt = copy_strided(x.transpose(perm))
        rows, k = xt.size // max(x.shape[d], 1), x.shape[d]
        if xt.size == 0:
            return CudaArray.empty(x.shape, x.dtype)
        x2 = xt.reshape((rows, k))
        mx, _ = row_reduce(x2, (1,), "max")
        e = run_map("math.exp(s - m)", CudaArray.empty(x2.shape, x.dtype), {"s": x2, "m": mx.reshape((rows, 1))}, {})
        tot, _ = row_reduce(e, (1,), "sum")
        out = CudaArray.empty(x2.shape, x.dtype)
        if log:
            run_map("s - m - math.log(t)", out, {"s": x2, "m": mx.reshape((rows, 1)), "t": tot.reshape((rows, 1))}, {})
        else:
            run_map("e / t", out, {"e": e, "t": tot.reshape((rows, 1))}, {})
        inv = np.argsort(perm)
        return copy_strided(out.reshape(xt.shape).transpose(tuple(int(i) for i in inv)))

    return kernel


@functools.cache
def _nll():

    @cuda.jit
    def k(x, t, wt, has_w, loss, wout, bad, m, c, ignore):
        for i in range(cuda.grid(1), m, cuda.gridsize(1)):
            ti = t[i]
            if ti == ignore:
                loss[i] = 0
                wout[i] = 0
            elif ti < 0 or ti >= c:
                bad[0] = ti
                bad[1] = 1
                loss[i] = 0
                wout[i] = 0
            else:
                wv = wt[ti] if has_w else 1
                loss[i] = -x[i * c + ti] * wv
                wout[i] = wv

    return k


def nll_loss_nd(self, target, weight=None, reduction=1, ignore_index=-100):
    meta = meta_of(R.get("nll_loss_nd"), [self, target, weight, reduction, ignore_index])
    cdim = 0 if self.ndim == 1 else 1
    c = self.shape[cdim]
    perm = [i for i in range(self.ndim) if i != cdim] + [cdim]
    x = copy_strided(self.transpose(perm)).reshape((-1, c))
    m = x.shape[0]
    t = copy_strided(target, np.int64).reshape((m,))
    loss = CudaArray.empty((m,), self.dtype)
    wout = CudaArray.empty((m,), self.dtype)
    bad = fill(CudaArray.empty((2,), np.int64), 0)
    w = copy_strided(weight, self.dtype) if weight is not None else loss
    if m:
        runtime.launch(_nll(), m, x.flat_device(), t.flat_device(), w.flat_device(), weight is not None, loss.buf,
                       wout.buf, bad.buf, m, c, ignore_index)
        b = bad.get()
        if b[1]:
            raise IndexError(f"Target {int(b[0])} is out of bounds.")
    if reduction == 0:
        return loss.reshape(tuple(meta.shape))
    total, _ = row_reduce(loss, (0,), "sum")
    if reduction == 2:
        return total.reshape(())
    wsum, _ = row_reduce(wout, (0,), "sum")
    out = CudaArray.empty((), self.dtype)
    return run_map("a / b", out, {"a": total.reshape(()), "b": wsum.reshape(())}, {})


def register() -> list:
    table = {
        ("convolution", ""): convolution, ("conv2d", ""): _public_conv("conv2d", 2),
        ("conv2d", "padding"): _public_conv("conv2d", 2), ("conv1d", ""): _public_conv("conv1d", 1),
        ("conv1d", "padding"): _public_conv("conv1d", 1),
        ("max_pool2d", ""): max_pool2d, ("max_pool2d_with_indices", ""): max_pool2d_with_indices,
        ("max_pool2d_with_indices_backward", ""): max_pool2d_backward,
        ("max_pool2d_backward", ""): max_pool2d_backward_from_input,
        ("softmax", "int"): _softmax(False), ("log_softmax", "int"): _softmax(True),
        ("nll_loss_nd", ""): nll_loss_nd,
    }
    return register_table(table)

