"""Padding (constant, reflection, replication, wrapping) and upsampling on the device, with their backward ops.

Both families move data along one dimension at a time through a table that
depends on the shapes only (as the CPU ops do): padding reads output position
``o`` of a dimension from input position ``source_index(...)[o]``, and
upsampling mixes at most four input positions per output position with the
weights of the CPU's own interpolation matrix (its nonzero entries, row by
row). Each dimension is one kernel launch over the array viewed as
``(outer, n, inner)``:

- ``take``: ``out[b, o, i] = x[b, idx[o], i]`` (any dtype: padding, nearest);
- ``mix``: ``out[b, o, i] = sum_t w[o, t] * x[b, idx[o, t], i]`` in the
  working dtype (float32 for float16, as the CPU);
- ``spread``: the adjoint of ``mix``, each gradient element added onto the input
  positions it was read from with ``cuda.atomic.add``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from ...ops.padding import _pairs, source_index
from ...ops.upsample import FAMILIES, interpolation_matrix, nearest_index, vec_output_size
from . import runtime
from .array import CudaArray, contiguous, copy_into, full
from .registration import meta_of, register_table


@cuda.jit(device=True)
def _split(j, n_out, inner):
    """(outer index, position along the dimension, inner index) of flat element ``j``."""
    i = j % inner
    r = j // inner
    return r // n_out, r % n_out, i


@functools.cache
def _k():

    @cuda.jit
    def take(x, out, idx, n_in, n_out, inner, total):
        for j in range(cuda.grid(1), total, cuda.gridsize(1)):
            b, o, i = _split(j, n_out, inner)
            out[j] = x[(b * n_in + idx[o]) * inner + i]

    @cuda.jit
    def mix(x, out, idx, w, k, n_in, n_out, inner, total, zero):
        for j in range(cuda.grid(1), total, cuda.gridsize(1)):
            b, o, i = _split(j, n_out, inner)
            acc = zero
            for t in range(k):
                acc += w[o * k + t] * x[(b * n_in + idx[o * k + t]) * inner + i]
            out[j] = acc

    @cuda.jit
    def spread(g, out, idx, w, k, n_in, n_out, inner, total):
        for j in range(cuda.grid(1), total, cuda.gridsize(1)):
            b, o, i = _split(j, n_out, inner)
            v = g[j]
            for t in range(k):
                cuda.atomic.add(out, (b * n_in + idx[o * k + t]) * inner + i, w[o * k + t] * v)

    return {"take": take, "mix": mix, "spread": spread}


def _work(dtype) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _sparse(m: np.ndarray, work) -> tuple:
    """A dense (out, in) weight matrix as (out, k) column indices and weights (its nonzeros, zero-padded)."""
    rows = [np.flatnonzero(r) for r in m]
    k = max(1, max(len(r) for r in rows))
    idx = np.zeros((m.shape[0], k), np.int64)
    w = np.zeros((m.shape[0], k), work)
    for o, cols in enumerate(rows):
        idx[o, :len(cols)] = cols
        w[o, :len(cols)] = m[o, cols]
    return idx, w, k


def _geometry(shape: tuple, d: int) -> tuple:
    return math.prod(shape[:d]), math.prod(shape[d + 1:])


def _take_along(x: CudaArray, d: int, idx: np.ndarray) -> CudaArray:
    shape = x.shape[:d] + (len(idx),) + x.shape[d + 1:]
    out = CudaArray.empty(shape, x.dtype)
    _, inner = _geometry(x.shape, d)
    runtime.launch(_k()["take"], out.size, x.flat_device(), out.buf, CudaArray.from_host(idx).flat_device(),
                   x.shape[d], len(idx), inner, out.size)
    return out


def _mix_along(x: CudaArray, d: int, m: np.ndarray) -> CudaArray:
    idx, w, k = _sparse(m, x.dtype)
    shape = x.shape[:d] + (m.shape[0],) + x.shape[d + 1:]
    out = CudaArray.empty(shape, x.dtype)
    _, inner = _geometry(x.shape, d)
    runtime.launch(_k()["mix"], out.size, x.flat_device(), out.buf, CudaArray.from_host(idx).flat_device(),
                   CudaArray.from_host(w).flat_device(), k, x.shape[d], m.shape[0], inner, out.size, x.dtype.type(0))
    return out


def _spread_along(g: CudaArray, d: int, m: np.ndarray) -> CudaArray:
    """The adjoint of ``_mix_along(., d, m)`` applied to ``g`` (working dtype, contiguous)."""
    idx, w, k = _sparse(m, g.dtype)
    shape = g.shape[:d] + (m.shape[1],) + g.shape[d + 1:]
    out = full(shape, 0, g.dtype)
    _, inner = _geometry(g.shape, d)
    runtime.launch(_k()["spread"], g.size, g.flat_device(), out.buf, CudaArray.from_host(idx).flat_device(),
                   CudaArray.from_host(w).flat_device(), k, m.shape[1], m.shape[0], inner, g.size)
    return out


def _one_hot_rows(idx: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros((len(idx), n))
    m[np.arange(len(idx)), idx] = 1.0
    return m


# ----------------------------------------------------------------------------- padding
def _pad_gather(x: CudaArray, pad, mode: str) -> CudaArray:
    pairs = _pairs(pad)
    first = x.ndim - len(pairs)
    x = contiguous(x)
    for k, (lo, hi) in enumerate(pairs):
        x = _take_along(x, first + k, source_index(x.shape[first + k], lo, hi, mode))
    return x


def _pad_forward(name: str, mode: str):
    op = R.get(name)

    def kernel(self, padding):
        meta_of(op, [self, padding])
        return _pad_gather(self, padding, mode)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def _pad_backward(name: str, mode: str):
    op = R.get(f"{name}_backward")

    def kernel(grad_output, self, padding):
        meta_of(op, [grad_output, self, padding])
        pairs = _pairs(padding)
        first = self.ndim - len(pairs)
        g = contiguous(grad_output, _work(self.dtype))
        for k in reversed(range(len(pairs))):
            d = first + k
            n = self.shape[d]
            g = _spread_along(g, d, _one_hot_rows(source_index(n, *pairs[k], mode), n))
        return g if g.dtype == self.dtype else g.astype(self.dtype)

    kernel.__name__ = f"{name}_backward_cuda"
    return kernel


def constant_pad_nd(self, pad, value=0):
    """A filled array of the padded shape with the kept part of ``self`` copied into its window."""
    meta = meta_of(R.get("constant_pad_nd"), [self, pad, value])
    out = full(tuple(meta.shape), value, self.dtype)
    if out.size == 0:
        return out
    src_off, dst_off, window = 0, 0, list(self.shape)
    first = self.ndim - len(pad) // 2
    for k, (lo, hi) in enumerate(_pairs(pad)):
        d = first + k
        window[d] = max(self.shape[d] - max(-lo, 0) - max(-hi, 0), 0)
        src_off += max(-lo, 0) * self.estrides[d]
        dst_off += max(lo, 0) * out.estrides[d]
    if math.prod(window):
        copy_into(out.view_of(tuple(window), out.strides, dst_off),
                  self.view_of(tuple(window), self.strides, self.offset + src_off))
    return out


def pad_circular(self, pad):
    meta_of(R.get("_pad_circular"), [self, pad])
    return _pad_gather(self, pad[:len(pad) // 2 * 2], "circular")


# ----------------------------------------------------------------------------- upsampling
def _split_rest(nd: int, align: bool, rest) -> tuple:
    """(align_corners, scales) from the arguments after output_size / input_size, as the CPU op reads them."""
    if align:
        return bool(rest[0]), list(rest[1:]) + [None] * (nd - len(rest) + 1)
    return False, list(rest) + [None] * (nd - len(rest))


def _upsample(x: CudaArray, mode: str, out_size, align_corners: bool, scales) -> CudaArray:
    nd = len(out_size)
    if mode in ("nearest", "nearest-exact"):
        x = contiguous(x)
        for k, (o, s) in enumerate(zip(out_size, scales)):
            d = x.ndim - nd + k
            x = _take_along(x, d, nearest_index(x.shape[d], o, s, mode == "nearest-exact"))
        return x
    dtype = x.dtype
    x = contiguous(x, _work(dtype) if dtype.kind != "f" or dtype == np.float16 else dtype)
    for k, (o, s) in enumerate(zip(out_size, scales)):
        d = x.ndim - nd + k
        x = _mix_along(x, d, interpolation_matrix(mode, x.shape[d], o, align_corners, s))
    return x if x.dtype == dtype else x.astype(dtype)


def _upsample_adjoint(g: CudaArray, mode: str, out_size, in_size, align_corners: bool, scales) -> CudaArray:
    dtype = g.dtype
    g = contiguous(g, _work(dtype))
    nd = len(in_size)
    for k, (i, o, s) in enumerate(zip(in_size, out_size, scales)):
        g = _spread_along(g, g.ndim - nd + k, interpolation_matrix(mode, i, o, align_corners, s))
    return g if g.dtype == dtype else g.astype(dtype)


def _upsample_kernels(name: str, nd: int, mode: str, align: bool) -> dict:
    fwd, vec, bwd = (R.get(name), R.get(name, "vec"), R.get(f"{name}_backward"))

    def forward(self, output_size, *rest):
        meta_of(fwd, [self, output_size, *rest])
        align_corners, scales = _split_rest(nd, align, rest)
        return _upsample(self, mode, tuple(output_size), align_corners, scales)

    def forward_vec(input, output_size, *rest):
        meta_of(vec, [input, output_size, *rest])
        align_corners, factors = (bool(rest[0]), rest[1]) if align else (False, rest[0])
        out = vec_output_size(nd, input.shape, output_size, factors)
        scales = list(factors) if factors is not None else [None] * nd
        return _upsample(input, mode, tuple(out), align_corners, scales)

    def backward(grad_output, output_size, input_size, *rest):
        meta_of(bwd, [grad_output, output_size, input_size, *rest])
        align_corners, scales = _split_rest(nd, align, rest)
        return _upsample_adjoint(grad_output, mode, tuple(output_size), tuple(input_size[2:]), align_corners, scales)

    forward.__name__, forward_vec.__name__, backward.__name__ = f"{name}_cuda", f"{name}_vec_cuda", \
        f"{name}_backward_cuda"
    return {name: forward, (name, "vec"): forward_vec, f"{name}_backward": backward}


_UPSAMPLE = {"upsample_nearest1d": (1, "nearest", False), "upsample_nearest2d": (2, "nearest", False),
             "upsample_nearest3d": (3, "nearest", False), "_upsample_nearest_exact1d": (1, "nearest-exact", False),
             "_upsample_nearest_exact2d": (2, "nearest-exact", False),
             "_upsample_nearest_exact3d": (3, "nearest-exact", False), "upsample_linear1d": (1, "linear", True),
             "upsample_bilinear2d": (2, "linear", True), "upsample_trilinear3d": (3, "linear", True),
             "upsample_bicubic2d": (2, "cubic", True)}


def register() -> list:
    table = {"_pad_circular": pad_circular, "constant_pad_nd": constant_pad_nd}
    for mode, kind in (("reflect", "reflection"), ("replicate", "replication")):
        for nd in (1, 2, 3):
            name = f"{kind}_pad{nd}d"
            table[name] = _pad_forward(name, mode)
            table[f"{name}_backward"] = _pad_backward(name, mode)
    for name in FAMILIES:
        table.update(_upsample_kernels(name, *_UPSAMPLE[name]))
    return register_table(table)
