"""Indexing on the device: index_select, embedding and gather, all one row-gather kernel.

The indexed dimension is moved first (index_select, embedding) or last
(gather) and the operand made contiguous, so every op copies whole rows or
single elements picked by an int64 index array. Out-of-range indices are
flagged on the device and raise the CPU ops' errors after the launch.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from . import runtime
from .array import CudaArray, copy_strided, fill
from .registration import meta_of, register_table


@functools.cache
def _gather_rows():

    @cuda.jit
    def k(x, idx, out, bad, n_idx, row, n_src, per_row):
        """``out[i, r] = x[idx[i], r]`` (rows of ``row`` elements); with ``per_row``, ``x`` has one row per i."""
        total = n_idx * row
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            q = i // row
            r = i % row
            j = idx[q]
            if j < 0:
                j += n_src
            if j < 0 or j >= n_src:
                bad[0] = idx[q]
                bad[1] = 1
                out[i] = x[0] * 0
            elif per_row:
                out[i] = x[(q // per_row) * n_src + j]
            else:
                out[i] = x[j * row + r]

    return k


def _check(bad: CudaArray):
    b = bad.get()
    return int(b[0]) if b[1] else None


def take_rows(x: CudaArray, dim: int, index: CudaArray) -> tuple:
    """``x`` with ``dim`` indexed by the (flattened) ``index``, as (result with ``dim`` first, the bad index or None)."""
    perm = [dim] + [d for d in range(x.ndim) if d != dim]
    xt = copy_strided(x.transpose(perm))
    n_src = x.shape[dim]
    row = xt.size // n_src if n_src else 0
    idx = copy_strided(index, np.int64)
    out = CudaArray.empty((idx.size,) + xt.shape[1:], x.dtype)
    bad = fill(CudaArray.empty((2,), np.int64), 0)
    if out.size:
        runtime.launch(_gather_rows(), out.size, xt.flat_device(), idx.flat_device(), out.buf, bad.buf, idx.size,
                       row, n_src, 0)
    return out, perm, (_check(bad) if out.size else None)


def index_select(self, dim, index):
    meta = meta_of(R.get("index_select"), [self, dim, index])
    if self.ndim == 0:
        x = self.reshape((1,))
        d = 0
    else:
        x, d = self, dim % self.ndim
    out, perm, bad = take_rows(x, d, index)
    if bad is not None:
        raise IndexError("index out of range in self")
    inv = tuple(int(i) for i in np.argsort(perm))
    return copy_strided(out.transpose(inv)).reshape(tuple(meta.shape))


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    meta = meta_of(R.get("embedding"), [weight, indices, padding_idx, scale_grad_by_freq, sparse])
    out, _, bad = take_rows(weight, 0, indices)
    if bad is not None:
        raise IndexError("index out of range in self")
    return out.reshape(tuple(meta.shape))


def gather(self, dim, index, sparse_grad=False):
    meta = meta_of(R.get("gather"), [self, dim, index, sparse_grad])
    if index.size == 0:
        return CudaArray.empty(index.shape, self.dtype)
    nd = max(self.ndim, 1)
    x = self.reshape((1,)) if self.ndim == 0 else self
    ix = index.reshape((1,)) if index.ndim == 0 else index
    d = dim % nd
    # self restricted to index's extent in the other dims, then the gathered dim last.
    x = x.view_of(tuple(ix.shape[i] if i != d else x.shape[i] for i in range(nd)), x.strides, x.offset)
    perm = [i for i in range(nd) if i != d] + [d]
    xt = copy_strided(x.transpose(perm))
    it = copy_strided(ix.transpose(perm), np.int64)
    n_src = x.shape[d]
    per = ix.shape[d]
    out = CudaArray.empty(it.shape, self.dtype)
    bad = fill(CudaArray.empty((2,), np.int64), 0)
    runtime.launch(_gather_rows(), out.size, xt.flat_device(), it.flat_device(), out.buf, bad.buf, out.size, 1,
                   n_src, per)
    b = _check(bad)
    if b is not None:
        raise RuntimeError(f"index {b} is out of bounds for dimension {d} with size {n_src}")
    inv = tuple(int(i) for i in np.argsort(perm))
    return copy_strided(out.transpose(inv)).reshape(tuple(meta.shape))


def register() -> list:
    return register_table({"index_select": index_select, "embedding": embedding, "gather": gather})
