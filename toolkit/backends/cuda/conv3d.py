"""3-d convolutions on the device (im2col + GEMM, as :mod:`.nn` does in 2-d) and ``conv_tbc``.

``conv3d`` gathers each output position's receptive field into a column
(``(N, C*kd*kh*kw, od*oh*ow)``), then multiplies each group's weight rows with
the tiled GEMM; the transposed convolution multiplies first and scatters the
columns back, each output element summing the columns that reach it (no
atomics). ``convolution`` with a 5-d input comes here; 3-d and 4-d inputs go
on to :mod:`.nn`'s kernel. ``conv_tbc`` is a 1-d convolution over a
``(time, batch, channel)`` view of its input.
"""

from __future__ import annotations

import functools

from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from ...ops.conv import _tbc_check, conv_setup, conv_transpose_setup
from . import runtime
from .array import CudaArray, copy_strided, full
from .codegen import run_map, typed_scalar
from .gemm import gemm
from .nn import conv2d_forward
from .nn import convolution as convolution_2d
from .registration import meta_of, register_table


@functools.cache
def _vol2col():

    @cuda.jit
    def k(x, xo, s0, s1, s2, s3, s4, cols, total, c, d, h, w, kd, kh, kw, od, oh, ow, sd, sh, sw, pd, ph, pw,
          dd, dh, dw, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            ox = i % ow
            r = i // ow
            oy = r % oh
            r //= oh
            oz = r % od
            r //= od
            kj = r % kw
            r //= kw
            ki = r % kh
            r //= kh
            kz = r % kd
            r //= kd
            ch = r % c
            n = r // c
            z = oz * sd - pd + kz * dd
            y = oy * sh - ph + ki * dh
            xx = ox * sw - pw + kj * dw
            if 0 <= z < d and 0 <= y < h and 0 <= xx < w:
                cols[i] = x[xo + n * s0 + ch * s1 + z * s2 + y * s3 + xx * s4]
            else:
                cols[i] = zero

    return k


@functools.cache
def _col2vol():

    @cuda.jit
    def k(cols, out, total, c, d, h, w, kd, kh, kw, idp, ih, iw, sd, sh, sw, pd, ph, pw, dd, dh, dw, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            xx = i % w
            r = i // w
            y = r % h
            r //= h
            z = r % d
            r //= d
            ch = r % c
            n = r // c
            acc = zero
            for kz in range(kd):
                tz = z + pd - kz * dd
                if tz >= 0 and tz % sd == 0 and tz // sd < idp:
                    for ki in range(kh):
                        ty = y + ph - ki * dh
                        if ty >= 0 and ty % sh == 0 and ty // sh < ih:
                            for kj in range(kw):
                                tx = xx + pw - kj * dw
                                if tx >= 0 and tx % sw == 0 and tx // sw < iw:
                                    row = (n * c + ch) * kd * kh * kw + (kz * kh + ki) * kw + kj
                                    acc += cols[row * idp * ih * iw + ((tz // sd) * ih + ty // sh) * iw + tx // sw]
            out[i] = acc

    return k


def _out_size(size, lo, hi, dil, k, stride):
    return (size + lo + hi - dil * (k - 1) - 1) // stride + 1


def conv3d_forward(x, w, bias, stride, lo, hi, dilation, groups) -> CudaArray:
    """A batched 3-d convolution of (N, C, D, H, W) ``x`` by (O, C/groups, kd, kh, kw) ``w``."""
    n, c, d, h, wd = x.shape
    o, cg, kd, kh, kw = w.shape
    od, oh, ow = (_out_size(s, a, b, dl, k, st) for s, a, b, dl, k, st in
                  zip((d, h, wd), lo, hi, dilation, (kd, kh, kw), stride))
    out = CudaArray.empty((n, o, od, oh, ow), x.dtype)
    if out.size == 0:
        return out
    volume = od * oh * ow
    cols = CudaArray.empty((n, c * kd * kh * kw, volume), x.dtype)
    total = cols.size
    runtime.launch(_vol2col(), total, x.buf, x.offset, *x.estrides, cols.buf, total, c, d, h, wd, kd, kh, kw,
                   od, oh, ow, *stride, *lo, *dilation, typed_scalar(0, x.dtype))
    og, kg = o // groups, cg * kd * kh * kw
    wm = copy_strided(w).reshape((o, kg))
    for g in range(groups):
        a = wm.view_of((og, kg), wm.strides, wm.offset + g * og * kg)
        b = cols.view_of((n, kg, volume), cols.strides, g * kg * volume)
        dst = out.view_of((n, og, volume), (o * volume * out.itemsize, volume * out.itemsize, out.itemsize),
                          g * og * volume)
        gemm(a, b, dst)
    if bias is not None:
        run_map("s + b", out, {"s": out, "b": bias.reshape((o, 1, 1, 1))}, {})
    return out


def conv3d_transpose(x, w, bias, stride, padding, output_padding, dilation, groups) -> CudaArray:
    """A batched transposed 3-d convolution of (N, Cin, d, h, w) ``x`` by (Cin, Cout/groups, kd, kh, kw) ``w``."""
    n, cin, idp, ih, iw = x.shape
    _, cog, kd, kh, kw = w.shape
    cout = cog * groups
    d, h, wd = ((i - 1) * s - 2 * p + dl * (k - 1) + op + 1 for i, s, p, dl, k, op in
                zip((idp, ih, iw), stride, padding, dilation, (kd, kh, kw), output_padding))
    out = CudaArray.empty((n, cout, d, h, wd), x.dtype)
    if out.size == 0:
        return out
    cig = cin // groups
    rows = cog * kd * kh * kw
    volume = idp * ih * iw
    cols = CudaArray.empty((n, cout * kd * kh * kw, volume), x.dtype)
    wm = copy_strided(w).reshape((cin, rows))
    xm = copy_strided(x).reshape((n, cin, volume))
    for g in range(groups):
        a = wm.view_of((rows, cig), (wm.strides[1], wm.strides[0]), wm.offset + g * cig * rows)
        b = xm.view_of((n, cig, volume), xm.strides, xm.offset + g * cig * volume)
        dst = cols.view_of((n, rows, volume), cols.strides, g * rows * volume)
        gemm(a, b, dst)
    total = out.size
    runtime.launch(_col2vol(), total, cols.buf, out.buf, total, cout, d, h, wd, kd, kh, kw, idp, ih, iw, *stride,
                   *padding, *dilation, typed_scalar(0, x.dtype))
    if bias is not None:
        run_map("s + b", out, {"s": out, "b": bias.reshape((cout, 1, 1, 1))}, {})
    return out


def _conv3d(name: str):
    def kernel(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        batched, stride, lo, hi, dilation, _ = conv_setup(name, 3, input, weight, bias, stride, padding,
                                                          dilation, groups)
        x = input if batched else input.reshape((1,) + input.shape)
        out = conv3d_forward(x, weight, bias, tuple(stride), tuple(lo), tuple(hi), tuple(dilation), groups)
        return out if batched else out.reshape(out.shape[1:])

    kernel.__name__ = f"{name}_cuda"
    return kernel


def conv_transpose3d(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1,
                     dilation=(1,)):
    batched, stride, padding, output_padding, dilation, _ = conv_transpose_setup(
        "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)
    x = input if batched else input.reshape((1,) + input.shape)
    out = conv3d_transpose(x, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), tuple(dilation),
                           groups)
    return out if batched else out.reshape(out.shape[1:])


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    if input.ndim != 5:
        return convolution_2d(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    meta = meta_of(R.get("convolution"), [input, weight, bias, stride, padding, dilation, transposed,
                                         output_padding, groups])

    def three(v, fill_):
        v = tuple(v) if v else (fill_,)
        return v if len(v) == 3 else v * 3

    s, p, d, op_ = three(stride, 1), three(padding, 0), three(dilation, 1), three(output_padding, 0)
    if transposed:
        out = conv3d_transpose(input, weight, bias, s, p, op_, d, groups)
    else:
        out = conv3d_forward(input, weight, bias, s, p, p, d, groups)
    return out.reshape(tuple(meta.shape))


def conv_tbc(self, weight, bias, pad=0):
    meta = meta_of(R.get("conv_tbc"), [self, weight, bias, pad])
    shape = _tbc_check(self.shape, weight.shape, bias.shape, pad)
    if shape[0] == 0:
        return full(shape, 0, meta.dtype.np)
    x = self.transpose((1, 2, 0))  # (batch, in, time)
    w = weight.transpose((2, 1, 0))  # (out, in, width)
    x4 = copy_strided(x).reshape(x.shape[:2] + (1,) + x.shape[2:])
    w4 = copy_strided(w).reshape(w.shape[:2] + (1,) + w.shape[2:])
    y = conv2d_forward(x4, w4, bias, (1, 1), (0, pad), (0, pad), (1, 1), 1)  # (batch, out, 1, time)
    y = y.reshape(y.shape[:2] + y.shape[3:])
    return copy_strided(y.transpose((2, 0, 1)))


def register() -> list:
    return register_table({
        ("convolution", ""): convolution, ("conv3d", ""): _conv3d("conv3d"),
        ("conv3d", "padding"): _conv3d("conv3d"), ("conv_transpose3d", "input"): conv_transpose3d,
        ("conv_tbc", ""): conv_tbc,
    })
