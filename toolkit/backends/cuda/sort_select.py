"""Selection on the device, built on :mod:`.sort`'s row sort: kthvalue, median, mode, unique.

``kthvalue`` runs the CPU kernel's median-of-three quickselect, one thread per
row, so that among equal values it reports the index PyTorch's CPU kernel
does. ``median`` and ``mode`` scan each stably sorted row once. ``unique``
sorts (slices lexicographically, by stable sorts from the last column to the
first when ``dim`` is given), marks where a new value starts, numbers the
groups with :mod:`.masked`'s prefix sum and reads the group count back to
the host, as PyTorch must to size its output.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from ...ops._select_numba import gt_or_nan, quickselect
from . import runtime
from .array import CudaArray, copy_strided, fill
from .masked import exclusive_scan
from .registration import meta_of, register_table
from .sort import as_rows, reduced, scalar_pair, sort_rows, swap_pair, work_dtype


@functools.cache
def _quickselect():
    select = cuda.jit(device=True)(quickselect(cuda.jit(device=True)(gt_or_nan.py_func), swap_pair))

    @cuda.jit
    def k(arr, idx, vout, iout, m, n, kth):
        """Row by row, the CPU kernel's quickselect (``arr`` is a scratch copy of the rows)."""
        for row in range(cuda.grid(1), m, cuda.gridsize(1)):
            b = row * n
            for t in range(n):
                idx[b + t] = t
            select(arr, idx, b, b + n - 1, b + kth)
            vout[row] = arr[b + kth]
            iout[row] = idx[b + kth]

    return k


@functools.cache
def _row_pick(kind: str):
    is_median = kind == "median"

    @cuda.jit
    def k(vals, idx, vout, iout, m, n):
        """Per sorted row: the lower median (the first NaN if any), or the mode (first longest run's last)."""
        for row in range(cuda.grid(1), m, cuda.gridsize(1)):
            b = row * n
            pos = (n - 1) // 2
            if is_median:
                if vals[b + n - 1] != vals[b + n - 1]:
                    pos = n - 1
                    while pos > 0 and vals[b + pos - 1] != vals[b + pos - 1]:
                        pos -= 1
            else:
                best = 0
                run = 0
                for i in range(n):
                    run = 1 if i == 0 or vals[b + i] != vals[b + i - 1] else run + 1
                    if (i == n - 1 or vals[b + i + 1] != vals[b + i]) and run > best:
                        best = run
                        pos = i
            vout[row] = vals[b + pos]
            iout[row] = idx[b + pos]

    return k


def _per_row(kind: str, self: CudaArray, d: int, keepdim: bool, kth: int = 0) -> tuple:
    x, moved = as_rows(self, d)
    m, n = x.shape
    vout = CudaArray.empty((m,), x.dtype)
    iout = CudaArray.empty((m,), np.int64)
    if kind == "kth":
        scratch = CudaArray.empty((m, n), np.int64)
        runtime.launch(_quickselect(), m, x.flat_device(), scratch.buf, vout.buf, iout.buf, m, n, kth)
    elif m:
        vals, idx = sort_rows(x, False)
        runtime.launch(_row_pick(kind), m, vals.buf, idx.buf, vout.buf, iout.buf, m, n)
    return reduced(vout, moved, d, keepdim, self.dtype), reduced(iout, moved, d, keepdim)


def kthvalue(self, k, dim=-1, keepdim=False):
    meta_of(R.get("kthvalue"), [self, k, dim, keepdim])
    if self.ndim == 0:
        return scalar_pair(self)
    return _per_row("kth", self, dim % self.ndim, keepdim, k - 1)


def median(self):
    meta_of(R.get("median"), [self])
    if self.size == 0:
        return fill(CudaArray.empty((), self.dtype), np.nan)
    return _per_row("median", self.reshape((self.size,)), 0, False)[0]


def median_dim(self, dim, keepdim=False):
    meta_of(R.get("median", "dim"), [self, dim, keepdim])
    if self.ndim == 0:
        return scalar_pair(self)
    return _per_row("median", self, dim % self.ndim, keepdim)


def mode(self, dim=-1, keepdim=False):
    meta_of(R.get("mode"), [self, dim, keepdim])
    if self.ndim == 0:
        return scalar_pair(self)
    return _per_row("mode", self, dim % self.ndim, keepdim)


# ----------------------------------------------------------------------------- unique
@functools.cache
def _unique_kernels():
    @cuda.jit
    def iota(out, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            out[i] = i

    @cuda.jit
    def column(x, perm, keys, k, r, c):
        for i in range(cuda.grid(1), k, cuda.gridsize(1)):
            keys[i] = x[perm[i] * r + c]

    @cuda.jit
    def compose(perm, p2, out, k):
        for i in range(cuda.grid(1), k, cuda.gridsize(1)):
            out[i] = perm[p2[i]]

    @cuda.jit
    def mark(x, perm, flag, k, r):
        """``flag[i]``: slice ``perm[i]`` differs from the one before it (NaN differs from everything)."""
        for i in range(cuda.grid(1), k, cuda.gridsize(1)):
            f = 1 if i == 0 else 0
            c = 0
            while f == 0 and c < r:
                if x[perm[i] * r + c] != x[perm[i - 1] * r + c]:
                    f = 1
                c += 1
            flag[i] = f

    @cuda.jit
    def scatter(x, perm, flag, before, values, inverse, starts, k, r):
        """Slice ``perm[i]`` joins group ``before[i] + flag[i] - 1`` (``before``: the group starts before i)."""
        for i in range(cuda.grid(1), k, cuda.gridsize(1)):
            g = before[i] + flag[i] - 1
            inverse[perm[i]] = g
            if flag[i]:
                starts[g] = i
                for c in range(r):
                    values[g * r + c] = x[perm[i] * r + c]

    @cuda.jit
    def counts(starts, out, u, k):
        for g in range(cuda.grid(1), u, cuda.gridsize(1)):
            out[g] = (starts[g + 1] if g + 1 < u else k) - starts[g]

    return iota, column, compose, mark, scatter, counts


def _unique_slices(x: CudaArray) -> tuple:
    """(values (U, R), inverse (K,), counts (U,)) of the K slices (rows) of the contiguous ``(K, R)`` ``x``."""
    k, r = x.shape
    iota, column, compose, mark, scatter, counts = _unique_kernels()
    blocks, tpb = runtime.launch_1d(k)
    flat = x.flat_device()
    if r == 1:
        perm = sort_rows(x.reshape((1, k)), False)[1]
    else:
        perm = CudaArray.empty((k,), np.int64)
        iota[blocks, tpb](perm.buf, k)
        keys = CudaArray.empty((1, k), x.dtype)
        for c in reversed(range(r)):  # stable sorts by the last column first: lexicographic order
            column[blocks, tpb](flat, perm.buf, keys.buf, k, r, c)
            p2 = sort_rows(keys, False)[1]
            nxt = CudaArray.empty((k,), np.int64)
            compose[blocks, tpb](perm.buf, p2.buf, nxt.buf, k)
            perm = nxt
    flag = CudaArray.empty((k,), np.int64)
    mark[blocks, tpb](flat, perm.buf, flag.buf, k, r)
    before, u, _ = exclusive_scan(flag)
    values = CudaArray.empty((u, r), x.dtype)
    inverse = CudaArray.empty((k,), np.int64)
    starts = CudaArray.empty((u,), np.int64)
    cnt = CudaArray.empty((u,), np.int64)
    scatter[blocks, tpb](flat, perm.buf, flag.buf, before.buf, values.buf, inverse.buf, starts.buf, k, r)
    runtime.launch(counts, u, starts.buf, cnt.buf, u, k)
    return values, inverse, cnt


def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    meta_of(R.get("unique"), [self, sorted, return_inverse, return_counts, dim])
    work = work_dtype(self)
    if dim is None:
        n = self.size
        if n == 0:
            values, inverse, cnt = (CudaArray.empty((0,), self.dtype), CudaArray.empty(self.shape, np.int64),
                                    CudaArray.empty((0,), np.int64))
        else:
            v, inv, cnt = _unique_slices(copy_strided(self, work).reshape((n, 1)))
            values, inverse = copy_strided(v.reshape((v.shape[0],)), self.dtype), inv.reshape(self.shape)
    else:
        d = dim % self.ndim
        if self.shape[d] == 0:
            values, inverse, cnt = copy_strided(self), CudaArray.empty((0,), np.int64), CudaArray.empty((0,), np.int64)
        else:
            perm = [d] + [i for i in range(self.ndim) if i != d]
            moved = self.transpose(perm)
            rest = moved.shape[1:]
            v, inverse, cnt = _unique_slices(copy_strided(moved, work).reshape((moved.shape[0], math.prod(rest))))
            back = [perm.index(i) for i in range(self.ndim)]
            values = copy_strided(v.reshape((v.shape[0],) + rest).transpose(back), self.dtype)
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(cnt)
    return tuple(out)


def register() -> list:
    return register_table({"kthvalue": kthvalue, "median": median, "median.dim": median_dim, "mode": mode,
                           "unique": unique})
