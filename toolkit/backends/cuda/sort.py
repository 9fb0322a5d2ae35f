"""Sorting and selection on the device: sort, argsort, topk, kthvalue, median, mode, unique.

The sorted dimension is moved last and made contiguous, so every op works on
the rows of an ``(M, N)`` array. Rows that fit a block are sorted in shared
memory by a bitonic network (one block per row); longer rows by a bottom-up
merge sort, one thread per row, in global scratch. Both order elements by
(value, original index), which is a total order: the result is the stable
sort PyTorch's ``stable=True`` gives, NaN counting as the largest value
(last ascending, first descending). ``kthvalue`` runs the CPU kernel's
quickselect per row so that ties report the same index; ``unique`` reads its
output size back to the host, as PyTorch does.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from . import runtime
from .array import CudaArray, copy_strided, fill
from .registration import checked, register_table


def block_sort_max() -> int:
    """The longest row sorted in shared memory; longer rows take the merge sort."""
    return 64 if runtime.simulated() else 1024


@cuda.jit(device=True)
def swap_pair(arr, idx, i, j):
    """Entries ``i`` and ``j`` of ``arr`` swapped, and of ``idx`` along with them."""
    t = arr[i]
    arr[i] = arr[j]
    arr[j] = t
    ti = idx[i]
    idx[i] = idx[j]
    idx[j] = ti


@cuda.jit(device=True)
def _before(a, ia, b, ib, n, desc):
    """Whether (a, ia) sorts strictly before (b, ib): padding (index >= n) last, NaN largest, ties by index."""
    if ia >= n:
        return False
    if ib >= n:
        return True
    an = a != a
    bn = b != b
    if an and bn:
        return ia < ib
    if an:
        return desc
    if bn:
        return not desc
    if a != b:
        return (a > b) if desc else (a < b)
    return ia < ib


@functools.cache
def _bitonic(p: int, tpb: int, dtype_str: str):
    import numba  # optional: numba, never loaded by import toolkit

    nb_t = numba.from_dtype(np.dtype(dtype_str))

    @cuda.jit
    def k(x, vout, iout, m, n, desc):
        sk = cuda.shared.array(p, nb_t)
        si = cuda.shared.array(p, numba.int64)
        tid = cuda.threadIdx.x
        for row in range(cuda.blockIdx.x, m, cuda.gridDim.x):
            i = tid
            while i < p:
                sk[i] = x[row * n + (i if i < n else 0)]
                si[i] = i
                i += tpb
            cuda.syncthreads()
            kk = 2
            while kk <= p:
                j = kk // 2
                while j > 0:
                    i = tid
                    while i < p:
                        q = i ^ j
                        if q > i:
                            if (i & kk) == 0:
                                swap = _before(sk[q], si[q], sk[i], si[i], n, desc)
                            else:
                                swap = _before(sk[i], si[i], sk[q], si[q], n, desc)
                            if swap:
                                swap_pair(sk, si, i, q)
                        i += tpb
                    cuda.syncthreads()
                    j //= 2
                kk *= 2
            i = tid
            while i < n:
                vout[row * n + i] = sk[i]
                iout[row * n + i] = si[i]
                i += tpb
            cuda.syncthreads()

    return k


@cuda.jit(device=True)
def _merge_pass(sk, si, dk, di, base, n, width, desc):
    lo = 0
    while lo < n:
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        a = lo
        b = mid
        o = lo
        while o < hi:
            if b >= hi or (a < mid and not _before(sk[base + b], si[base + b], sk[base + a], si[base + a], n, desc)):
                dk[base + o] = sk[base + a]
                di[base + o] = si[base + a]
                a += 1
            else:
                dk[base + o] = sk[base + b]
                di[base + o] = si[base + b]
                b += 1
            o += 1
        lo += 2 * width


@functools.cache
def _merge_sort():
    @cuda.jit
    def k(x, k1, i1, k2, i2, m, n, desc):
        for row in range(cuda.grid(1), m, cuda.gridsize(1)):
            base = row * n
            for t in range(n):
                k1[base + t] = x[base + t]
                i1[base + t] = t
            width = 1
            in_first = True
            while width < n:
                if in_first:
                    _merge_pass(k1, i1, k2, i2, base, n, width, desc)
                else:
                    _merge_pass(k2, i2, k1, i1, base, n, width, desc)
                in_first = not in_first
                width *= 2
            if not in_first:
                for t in range(n):
                    k1[base + t] = k2[base + t]
                    i1[base + t] = i2[base + t]

    return k


def sort_rows(x: CudaArray, descending: bool) -> tuple:
    """(values, int64 indices) of each row of the contiguous ``(M, N)`` array ``x``, stably sorted."""
    m, n = x.shape
    vals = CudaArray.empty((m, n), x.dtype)
    idx = CudaArray.empty((m, n), np.int64)
    if m == 0 or n == 0:
        return vals, idx
    flat = x.flat_device()
    p = 1 << max(n - 1, 0).bit_length()
    if p <= block_sort_max():
        tpb = max(1, min(p // 2, runtime.threads_per_block() if runtime.simulated() else 512))
        blocks = min(m, 2 if runtime.simulated() else 4096)
        _bitonic(p, tpb, x.dtype.str)[blocks, tpb](flat, vals.buf, idx.buf, m, n, bool(descending))
    else:
        k2 = CudaArray.empty((m, n), x.dtype)
        i2 = CudaArray.empty((m, n), np.int64)
        runtime.launch(_merge_sort(), m, flat, vals.buf, idx.buf, k2.buf, i2.buf, m, n, bool(descending))
    return vals, idx


def work_dtype(a: CudaArray) -> np.dtype:
    return np.dtype(np.uint8) if a.dtype == np.bool_ else a.dtype


def as_rows(a: CudaArray, d: int) -> tuple:
    """``a`` with dim ``d`` moved last, as a contiguous ``(M, N)`` array, and the moved shape."""
    perm = [i for i in range(a.ndim) if i != d] + [d]
    moved = a.transpose(perm)
    x = copy_strided(moved, work_dtype(a))
    n = a.shape[d]
    return x.reshape((x.size // n if n else 0, n)), moved.shape


def from_rows(r: CudaArray, moved_shape: tuple, d: int, dtype=None) -> CudaArray:
    """Undo :func:`as_rows` on an ``(M, K)`` result (K may differ from the original row length)."""
    nd = len(moved_shape)
    inv = list(range(nd - 1))
    inv.insert(d, nd - 1)
    return copy_strided(r.reshape(tuple(moved_shape[:-1]) + (r.shape[1],)).transpose(inv), dtype)


def scalar_pair(self: CudaArray) -> tuple:
    """(value, index 0) for a 0-d input: what sorting and selecting along its one position give."""
    return copy_strided(self), fill(CudaArray.empty((), np.int64), 0)


def _sorted(self: CudaArray, dim: int, descending: bool, k: int | None = None) -> tuple:
    """(values, indices) of ``self`` stably sorted along ``dim``; the first ``k`` of each row when given."""
    if self.ndim == 0:
        return scalar_pair(self)
    d = dim % self.ndim
    x, moved = as_rows(self, d)
    vals, idx = sort_rows(x, descending)
    if k is not None:
        first = (x.shape[0], k)
        vals, idx = vals.view_of(first, vals.strides, vals.offset), idx.view_of(first, idx.strides, idx.offset)
    return from_rows(vals, moved, d, self.dtype), from_rows(idx, moved, d)


def reduced(r: CudaArray, moved: tuple, d: int, keepdim: bool, dtype=None) -> CudaArray:
    """A per-row result ``(M,)`` shaped as a reduction over dim ``d``."""
    out = from_rows(r.reshape((r.size, 1)), moved, d, dtype)
    return out if keepdim else out.reshape(tuple(s for i, s in enumerate(out.shape) if i != d))


def register() -> list:
    return register_table({
        "sort": checked("sort", _sorted),
        "sort.stable": checked("sort.stable", lambda a, stable, *rest: _sorted(a, *rest)),
        "argsort": checked("argsort", lambda *args: _sorted(*args)[1]),
        "argsort.stable": checked("argsort.stable", lambda a, stable, *rest: _sorted(a, *rest)[1]),
        "topk": checked("topk", lambda a, k, dim, largest, _sorted_out: _sorted(a, dim, largest, k)),
    })
