"""Masks and data-dependent sizes on the device: nonzero, masked_select/scatter/fill, take, take_along_dim.

The result size of ``nonzero`` and ``masked_select`` depends on the data: an
exclusive prefix sum over the 0/1 flags gives every selected element its output
position and the total, and that one count is read back to size the output, as
PyTorch does. The same scan turns ``repeat_interleave``'s counts into indices.
Indices are bounds-checked by a kernel that records the first bad position in
a one-element flag read back once, so a bad index raises the CPU kernel's error.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core.shape import broadcast_shapes_or_none, wrap_dim
from ...ops import registry as R
from . import runtime
from .array import CudaArray, copy_strided, full, to_device
from .codegen import run_map, typed_scalar
from .indexing import take_rows
from .registration import meta_of, register_table


@functools.cache
def _k():
    """The kernels, compiled on first use."""

    @cuda.jit
    def check_index(idx, n, size, allow_neg, out, first):
        for q in range(cuda.grid(1), n, cuda.gridsize(1)):
            j = idx[q]
            if j < 0 and allow_neg:
                j += size
            if j < 0 or j >= size:
                cuda.atomic.min(first, 0, q)
                j = 0
            out[q] = j

    @cuda.jit
    def chunk_sums(vals, n, chunk, sums, info):
        t = cuda.grid(1)
        if t < sums.shape[0]:
            acc = 0
            hi = t * chunk + chunk
            for i in range(t * chunk, hi if hi < n else n):
                if vals[i] < 0:
                    info[1] = 1
                acc += vals[i]
            sums[t] = acc

    @cuda.jit
    def scan_sums(sums, info):
        if cuda.grid(1) == 0:
            acc = 0
            for t in range(sums.shape[0]):
                v = sums[t]
                sums[t] = acc
                acc += v
            info[0] = acc

    @cuda.jit
    def chunk_scan(vals, n, chunk, sums, out):
        t = cuda.grid(1)
        if t < sums.shape[0]:
            acc = sums[t]
            hi = t * chunk + chunk
            for i in range(t * chunk, hi if hi < n else n):
                out[i] = acc
                acc += vals[i]

    @cuda.jit
    def coords(flags, pos, n, shape, out):
        nd = len(shape)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            if flags[i]:
                r = i
                for k in range(nd - 1, -1, -1):
                    out[pos[i] * nd + k] = r % shape[k]
                    r //= shape[k]

    @cuda.jit
    def compact(flags, pos, n, x, out):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            if flags[i]:
                out[pos[i]] = x[i]

    @cuda.jit
    def expand(flags, pos, n, src, out):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            if flags[i]:
                out[i] = src[pos[i]]

    @cuda.jit
    def repeat_index(counts, pos, n, out):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            for j in range(counts[i]):
                out[pos[i] + j] = i
    return dict(check_index=check_index, chunk_sums=chunk_sums, scan_sums=scan_sums, chunk_scan=chunk_scan,
                coords=coords, compact=compact, expand=expand, repeat_index=repeat_index)


# ---------------------------------------------------------------------------------------------
# Building blocks: checked indices, prefix sums, broadcast views
# ---------------------------------------------------------------------------------------------
def checked_index(index: CudaArray, size: int, allow_negative: bool = True) -> tuple:
    """(``index`` as contiguous int64 with negatives wrapped when allowed, the first bad value or None)."""
    idx = copy_strided(index, np.int64)
    n = idx.size
    out = CudaArray.empty(idx.shape, np.int64)
    if n == 0:
        return out, None
    first = full((1,), n, np.int64)
    runtime.launch(_k()["check_index"], n, idx.buf, n, size, allow_negative, out.buf, first.buf)
    f = int(first.get()[0])
    return out, (int(idx.view_of((1,), (8,), f).get()[0]) if f < n else None)


def exclusive_scan(vals: CudaArray) -> tuple:
    """(exclusive prefix sums of the contiguous int64 ``vals``, their total, whether any was negative).

    Each thread sums a contiguous chunk, one thread scans the chunk sums, and
    each thread writes its chunk's prefix sums: no barriers, and one small
    read back (total and the negative flag).
    """
    n = vals.size
    out = CudaArray.empty((n,), np.int64)
    if n == 0:
        return out, 0, False
    nchunks = min(-(-n // 32), 32 if runtime.simulated() else 16384)
    chunk = -(-n // nchunks)
    nchunks = -(-n // chunk)
    sums = CudaArray.empty((nchunks,), np.int64)
    info = full((2,), 0, np.int64)
    tpb = runtime.threads_per_block()
    blocks = -(-nchunks // tpb)
    ks = _k()
    flat = vals.flat_device()
    s = sums.flat_device()
    ks["chunk_sums"][blocks, tpb](flat, n, chunk, s, info.buf)
    ks["scan_sums"][1, 1](s, info.buf)
    ks["chunk_scan"][blocks, tpb](flat, n, chunk, s, out.buf)
    total, neg = (int(v) for v in info.get())
    return out, total, bool(neg)


def _flags(a: CudaArray) -> CudaArray:
    """1 where ``a`` is nonzero (NaN counts), else 0, as contiguous int64."""
    out = CudaArray.empty(a.shape, np.int64)
    return run_map("1 if self != 0 else 0", out, {"self": a}, {})


def repeat_counts(counts: CudaArray) -> tuple:
    """(``i`` repeated ``counts[i]`` times as int64, whether a count was negative) for contiguous int64 counts."""
    pos, total, neg = exclusive_scan(counts)
    if neg:
        return None, True
    out = CudaArray.empty((total,), np.int64)
    runtime.launch(_k()["repeat_index"], counts.size, counts.flat_device(), pos.buf, counts.size, out.buf)
    return out, False


def broadcast(a: CudaArray, shape: tuple) -> CudaArray:
    lead = len(shape) - a.ndim
    st = (0,) * lead + tuple(0 if s != t else st for s, t, st in zip(a.shape, shape[lead:], a.strides))
    return a.view_of(tuple(shape), st, a.offset)


def as_1d(a: CudaArray) -> CudaArray:
    return a.reshape((1,)) if a.ndim == 0 else a


# ---------------------------------------------------------------------------------------------
# nonzero, masks, take
# ---------------------------------------------------------------------------------------------
def nonzero(self):
    flags = _flags(self)
    pos, total, _ = exclusive_scan(flags.reshape((-1,)))
    out = CudaArray.empty((total, self.ndim), np.int64)
    if total and self.ndim:
        runtime.launch(_k()["coords"], flags.size, flags.buf, pos.buf, flags.size, tuple(self.shape), out.buf)
    return out


def _mask_shape(self, mask, name: str) -> tuple:
    shape = broadcast_shapes_or_none(self.shape, mask.shape)
    if shape is None:
        raise RuntimeError(f"{name}: The size of tensor a ({list(self.shape)}) must match the size of tensor b "
                           f"({list(mask.shape)}) at a non-singleton dimension")
    return shape


def masked_select(self, mask):
    meta_of(R.get("masked_select"), [self, mask])  # dtype and shape errors (the count is the kernel's)
    shape = _mask_shape(self, mask, "masked_select")
    flags = _flags(broadcast(mask, shape)).reshape((-1,))
    pos, total, _ = exclusive_scan(flags)
    out = CudaArray.empty((total,), self.dtype)
    if total:
        x = copy_strided(broadcast(self, shape))
        runtime.launch(_k()["compact"], flags.size, flags.buf, pos.buf, flags.size, x.buf, out.buf)
    return out


def masked_scatter(self, mask, source):
    R.get("masked_scatter").kernels["cpu"](np.empty((0,), self.dtype), np.empty((0,), mask.dtype),
                                           np.empty((0,), source.dtype))  # the CPU kernel's dtype errors
    shape = _mask_shape(self, mask, "masked_scatter")
    out = copy_strided(broadcast(self, shape))
    flags = _flags(broadcast(mask, shape)).reshape((-1,))
    pos, total, _ = exclusive_scan(flags)
    if source.size < total:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if total:
        runtime.launch(_k()["expand"], flags.size, flags.buf, pos.buf, flags.size, source.flat_device(), out.buf)
    return out


def masked_fill(self, mask, value):
    meta = meta_of(R.get("masked_fill", "Tensor"), [self, mask, value])
    out = CudaArray.empty(tuple(meta.shape), self.dtype)
    return run_map("value if mask else self", out, {"self": self, "mask": mask,
                                                     "value": copy_strided(to_device(value), self.dtype)}, {})


def masked_fill_scalar(self, mask, value):
    meta = meta_of(R.get("masked_fill", "Scalar"), [self, mask, value])
    out = CudaArray.empty(tuple(meta.shape), self.dtype)
    return run_map("value if mask else self", out, {"self": self, "mask": mask},
                   {"value": typed_scalar(value, self.dtype)})


def take(self, index):
    meta_of(R.get("take"), [self, index])
    idx, bad = checked_index(index, self.size)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {self.size} elements.")
    if idx.size == 0:
        return CudaArray.empty(index.shape, self.dtype)
    return _gather_flat(self, idx).reshape(index.shape)


def _gather_flat(x: CudaArray, idx: CudaArray) -> CudaArray:
    return take_rows(x.reshape((-1,)), 0, idx)[0]


def take_along_dim(self, indices, dim=None):
    meta = meta_of(R.get("take_along_dim"), [self, indices, dim])
    shape = tuple(meta.shape)
    if dim is None:
        idx, bad = checked_index(indices, self.size, allow_negative=False)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension 0 with size {self.size}")
        return _gather_flat(self, idx) if idx.size else CudaArray.empty(shape, self.dtype)
    src, ix = as_1d(self), as_1d(indices)
    d = wrap_dim(dim, src.ndim)
    n = src.shape[d]
    b_src = list(shape) or [1]
    b_src[d] = n
    bidx = broadcast(ix, shape or (1,))
    if n == 0:
        _, bad = checked_index(bidx, 0, allow_negative=False)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size 0")
        return CudaArray.empty(shape, self.dtype)
    wrapped = run_map("self % n", CudaArray.empty(bidx.shape, np.int64), {"self": bidx}, {"n": np.int64(n)})
    out = R.get("gather").kernels["cuda"](broadcast(src, tuple(b_src)), d, wrapped)
    return out.reshape(shape)


def register() -> list:
    table = {
        ("nonzero", ""): nonzero, ("argwhere", ""): nonzero, ("masked_select", ""): masked_select,
        ("masked_scatter", ""): masked_scatter, ("masked_fill", "Tensor"): masked_fill,
        ("masked_fill", "Scalar"): masked_fill_scalar, ("take", ""): take, ("take_along_dim", ""): take_along_dim,
    }
    return register_table(table)
