"""Average pooling (fixed and adaptive) with their backward ops, 1-d max pooling and transposed convolutions.

Every kernel is a grid-stride loop with one thread per output element over
contiguous ``(planes, H, W)`` data. The backward ops gather rather than
scatter: each input element sums the gradients of the windows that cover it
(found by arithmetic, not by search), so no atomics are needed and results do
not depend on thread order. 1-d max pooling and the transposed convolutions
run the 2-d kernels of :mod:`.nn` on a height-1 view. Argument checks and
output shapes come from the CPU ops' own helpers and meta rules.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core import dtypes as _dt
from ...ops import registry as R
from ...ops.conv import conv_transpose_setup
from ...ops.pooling import avg_pool_setup, pool1d_as_2d
from . import runtime
from .array import CudaArray, contiguous
from .codegen import typed_scalar
from .nn import _max_pool, conv2d_transpose, plane_yx
from .registration import meta_of, register_table


def _planes(x: CudaArray, dtype=None):
    """``x`` as a flat contiguous device array (a copy only when needed, or to cast to ``dtype``)."""
    return contiguous(x, dtype).flat_device()


def _check_grad_shape(name: str, grad_output: CudaArray, expected: tuple) -> None:
    """The kernels index ``grad_output`` by the input's planes: any other shape is refused, not read past."""
    if tuple(grad_output.shape) != tuple(expected):
        raise RuntimeError(f"{name}: expected grad_output of size {list(expected)}, got {list(grad_output.shape)}")


# ----------------------------------------------------------------------------- avg_pool2d
@functools.cache
def _span():

    @cuda.jit(device=True)
    def span(o, s, p, k, size, include_pad):
        """The divisor's extent along one axis of window ``o`` (PyTorch's, padding counted or not)."""
        start = o * s - p
        end = min(start + k, size + p)
        if include_pad:
            return end - start
        return min(end, size) - max(start, 0)

    return span


@functools.cache
def _avg_fwd(is_float: bool):
    span = _span()
    if is_float:
        @cuda.jit(device=True)
        def finish(acc, div):
            return acc / div
    else:
        @cuda.jit(device=True)
        def finish(acc, div):
            """Integer inputs: the quotient truncated toward zero, as the CPU kernel's ``np.trunc``."""
            return int(acc / div)

    @cuda.jit
    def k(x, out, total, h, w, oh, ow, kh, kw, sh, sw, ph, pw, include_pad, divisor, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            plane, oy, ox = plane_yx(i, oh, ow)
            acc = zero
            for y in range(max(oy * sh - ph, 0), min(oy * sh - ph + kh, h)):
                for xx in range(max(ox * sw - pw, 0), min(ox * sw - pw + kw, w)):
                    acc += x[plane * h * w + y * w + xx]
            div = divisor
            if div == 0:
                div = span(oy, sh, ph, kh, h, include_pad) * span(ox, sw, pw, kw, w, include_pad)
            out[i] = finish(acc, div)

    return k


@functools.cache
def _avg_bwd():
    span = _span()

    @cuda.jit
    def k(g, out, total, h, w, oh, ow, kh, kw, sh, sw, ph, pw, include_pad, divisor, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            plane, y, xx = plane_yx(i, h, w)
            lo_y = y + ph - kh + 1
            lo_x = xx + pw - kw + 1
            acc = zero
            for oy in range(0 if lo_y <= 0 else (lo_y + sh - 1) // sh, min((y + ph) // sh, oh - 1) + 1):
                for ox in range(0 if lo_x <= 0 else (lo_x + sw - 1) // sw, min((xx + pw) // sw, ow - 1) + 1):
                    div = divisor
                    if div == 0:
                        div = span(oy, sh, ph, kh, h, include_pad) * span(ox, sw, pw, kw, w, include_pad)
                    acc += g[plane * oh * ow + oy * ow + ox] / div
            out[i] = acc

    return k


def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    k, s, p, (ho, wo), _ = avg_pool_setup(self.shape, kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override)
    h, w = self.shape[-2:]
    out = CudaArray.empty(self.shape[:-2] + (ho, wo), self.dtype)
    is_float = self.dtype.kind == "f"
    zero = typed_scalar(0, self.dtype if is_float else np.dtype(np.int64))
    runtime.launch(_avg_fwd(is_float), out.size, _planes(self), out.buf, out.size, h, w, ho, wo, *k, *s, *p,
            bool(count_include_pad), int(divisor_override or 0), zero)
    return out


def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    k, s, p, (ho, wo), _ = avg_pool_setup(self.shape, kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override)
    _check_grad_shape("avg_pool2d_backward", grad_output, self.shape[:-2] + (ho, wo))
    h, w = self.shape[-2:]
    out = CudaArray.empty(self.shape, self.dtype)
    runtime.launch(_avg_bwd(), out.size, _planes(grad_output, self.dtype), out.buf, out.size, h, w, ho, wo, *k, *s, *p,
            bool(count_include_pad), int(divisor_override or 0), typed_scalar(0, self.dtype))
    return out


# ----------------------------------------------------------------------------- adaptive_avg_pool2d
@cuda.jit(device=True)
def _start(o, size, osize):
    """The first input position of adaptive window ``o`` (``osize`` windows over ``size``); with the sizes
    swapped, the first window that covers input position ``o``."""
    return (o * size) // osize


@cuda.jit(device=True)
def _end(o, size, osize):
    """One past the last input position of adaptive window ``o`` (swapped: past the last window covering ``o``,
    clipped to ``size`` by the caller)."""
    return ((o + 1) * size + osize - 1) // osize


@functools.cache
def _adaptive_fwd():

    @cuda.jit
    def k(x, out, total, h, w, oh, ow, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            plane, oy, ox = plane_yx(i, oh, ow)
            y0, y1, x0, x1 = _start(oy, h, oh), _end(oy, h, oh), _start(ox, w, ow), _end(ox, w, ow)
            acc = zero
            for y in range(y0, y1):
                for xx in range(x0, x1):
                    acc += x[plane * h * w + y * w + xx]
            out[i] = acc / ((y1 - y0) * (x1 - x0))

    return k


@functools.cache
def _adaptive_bwd():

    @cuda.jit
    def k(g, out, total, h, w, oh, ow, zero):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            plane, y, xx = plane_yx(i, h, w)
            acc = zero
            for oy in range(_start(y, oh, h), min(_end(y, oh, h), oh)):
                y0, y1 = _start(oy, h, oh), _end(oy, h, oh)
                if y0 <= y < y1:
                    for ox in range(_start(xx, ow, w), min(_end(xx, ow, w), ow)):
                        x0, x1 = _start(ox, w, ow), _end(ox, w, ow)
                        if x0 <= xx < x1:
                            acc += g[plane * oh * ow + oy * ow + ox] / ((y1 - y0) * (x1 - x0))
            out[i] = acc

    return k


def adaptive_avg_pool2d(self, output_size):
    meta = meta_of(R.get("adaptive_avg_pool2d"), [self, output_size])
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{_dt.title(self.dtype)}'")
    h, w = self.shape[-2:]
    ho, wo = meta.shape[-2:]
    out = CudaArray.empty(tuple(meta.shape), self.dtype)
    runtime.launch(_adaptive_fwd(), out.size, _planes(self), out.buf, out.size, h, w, ho, wo,
                   typed_scalar(0, self.dtype))
    return out


def adaptive_avg_pool2d_backward(grad_output, self):
    meta_of(R.get("_adaptive_avg_pool2d_backward"), [grad_output, self])
    h, w = self.shape[-2:]
    ho, wo = grad_output.shape[-2:]
    _check_grad_shape("_adaptive_avg_pool2d_backward", grad_output, self.shape[:-2] + (ho, wo))
    out = CudaArray.empty(self.shape, self.dtype)
    runtime.launch(_adaptive_bwd(), out.size, _planes(grad_output, self.dtype), out.buf, out.size, h, w, ho, wo,
            typed_scalar(0, self.dtype))
    return out


# ----------------------------------------------------------------------------- max_pool1d
def _height_one(x: CudaArray) -> CudaArray:
    """A (..., L) array as a (..., 1, L) view."""
    return x.view_of(x.shape[:-1] + (1,) + x.shape[-1:], x.strides[:-1] + (0,) + x.strides[-1:], x.offset)


def _max_pool1d(name: str, indices: bool):
    def kernel(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
        meta_of(R.get(name), [self, kernel_size, stride, padding, dilation, ceil_mode])
        k, s, p, d = pool1d_as_2d(kernel_size, stride, padding, dilation, indices)
        out, idx = _max_pool(_height_one(self), k, s, p, d, ceil_mode, "max_pool1d")
        out, idx = (a.reshape(a.shape[:-2] + a.shape[-1:]) for a in (out, idx))
        return (out, idx) if indices else out

    kernel.__name__ = f"{name}_cuda"
    return kernel


# ----------------------------------------------------------------------------- conv_transpose1d/2d
def _conv_transpose(name: str, nd: int):
    def kernel(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1, dilation=(1,)):
        batched, stride, padding, output_padding, dilation, _ = conv_transpose_setup(
            name, nd, input, weight, bias, stride, padding, output_padding, groups, dilation)
        x = input if batched else input.reshape((1,) + input.shape)
        w = weight
        if nd == 1:
            x, w = _height_one(x), _height_one(w)
            stride, padding, output_padding, dilation = ((1,) + tuple(stride), (0,) + tuple(padding),
                                                         (0,) + tuple(output_padding), (1,) + tuple(dilation))
        out = conv2d_transpose(x, w, bias, tuple(stride), tuple(padding), tuple(output_padding), tuple(dilation),
                               groups)
        if nd == 1:
            out = out.reshape(out.shape[:2] + out.shape[3:])
        return out if batched else out.reshape(out.shape[1:])

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    table = {
        ("avg_pool2d", ""): avg_pool2d, ("avg_pool2d_backward", ""): avg_pool2d_backward,
        ("adaptive_avg_pool2d", ""): adaptive_avg_pool2d,
        ("_adaptive_avg_pool2d_backward", ""): adaptive_avg_pool2d_backward,
        ("max_pool1d", ""): _max_pool1d("max_pool1d", False),
        ("max_pool1d_with_indices", ""): _max_pool1d("max_pool1d_with_indices", True),
        ("conv_transpose1d", ""): _conv_transpose("conv_transpose1d", 1),
        ("conv_transpose2d", "input"): _conv_transpose("conv_transpose2d", 2),
    }
    return register_table(table)
