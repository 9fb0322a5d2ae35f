"""Reducing writes on the device: scatter_reduce, index_reduce and put; fill_diagonal_ and frexp.

A reducing write combines every value written to one position, in item order,
as the CPU's ``ufunc.at`` does: the first writer of each target (an atomic
min over item numbers) folds all the items aimed at it, then stores the
result once, so sums add in the CPU's order and ``prod``, ``amax``,
``amin`` and ``mean`` need no atomics of their dtype. ``scatter_reduce``
writes single elements (the flat target position of each index element, as
:mod:`.scatter` computes it); ``index_reduce`` writes whole slices (the dim
moved first). ``put`` is a scatter into the flattened tensor (a plain write
keeps the last writer, as the CPU).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core.shape import wrap_dim
from ...ops import registry as R
from ...ops.scatter_reduce import _identity
from . import runtime
from .array import CudaArray, copy_strided, fill, full
from .codegen import typed_scalar
from .masked import as_1d, checked_index
from .registration import meta_of, register_table
from .scatter import _k as scatter_kernels
from .scatter import _moved_back, _moved_first, write_rows

_CODES = {"sum": 0, "mean": 0, "prod": 1, "amax": 2, "amin": 3}


@functools.cache
def _fold():

    @cuda.jit
    def k(out, pos, src, n, row, win, code, include_self, mean, is_float, unit):
        for i in range(cuda.grid(1), n * row, cuda.gridsize(1)):
            q = i // row
            r = i % row
            p = pos[q]
            if win[p] != q:
                continue
            acc = out[p * row + r] if include_self else unit
            count = 1 if include_self else 0
            for j in range(q, n):
                if pos[j] != p:
                    continue
                v = src[j * row + r]
                count += 1
                if code == 0:
                    acc += v
                elif code == 1:
                    acc *= v
                elif code == 2:
                    if acc == acc and (v != v or v > acc):
                        acc = v
                elif acc == acc and (v != v or v < acc):
                    acc = v
            if mean:
                if is_float:
                    acc = acc / count
                else:
                    acc = acc // count
            out[p * row + r] = acc

    return k


def reduce_rows(target: CudaArray, pos: CudaArray, src: CudaArray, reduce: str, include_self: bool) -> CudaArray:
    """``target[pos[q]] = reduce(target[pos[q]] if include_self, src[q] for every q aimed there)`` over rows, in
    place; ``target`` (P, ...) and ``src`` (n, ...) contiguous, ``pos`` int64 (n,) within range."""
    n = pos.size
    if n == 0 or target.size == 0:
        return target
    rows = target.shape[0]
    row = target.size // rows
    win = full((rows,), n, np.int64)
    runtime.launch(scatter_kernels()["writer"], n, pos.buf, n, win.buf, False)
    s = src if src.dtype == target.dtype else copy_strided(src, target.dtype)
    unit = typed_scalar(_identity(reduce, target.dtype), target.dtype)
    runtime.launch(_fold(), n * row, target.flat_device(), pos.buf, s.flat_device(), n, row, win.buf,
                   _CODES[reduce], bool(include_self), reduce == "mean", target.dtype.kind == "f", unit)
    return target


def _no_bool_mean(reduce: str, dtype, kernel: str) -> None:
    if reduce == "mean" and dtype.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


# ----------------------------------------------------------------------------- scatter_reduce, index_reduce
def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    meta_of(R.get("scatter_reduce", "two"), [self, dim, index, src, reduce, include_self])
    out = copy_strided(self)
    target, ix = as_1d(out), as_1d(index)
    if ix.size == 0:
        return out
    d = wrap_dim(dim, target.ndim)
    idx, bad = checked_index(ix, target.shape[d], allow_negative=False)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {target.shape[d]}")
    _no_bool_mean(reduce, self.dtype, "scatter_gather_tensor_cpu_reduce_mean")
    pos = CudaArray.empty((idx.size,), np.int64)
    runtime.launch(scatter_kernels()["scatter_pos"], idx.size, idx.buf, idx.size, tuple(ix.shape), target.estrides,
                   d, pos.buf)
    s = as_1d(src)
    vals = copy_strided(s.view_of(ix.shape, s.strides, s.offset), self.dtype)
    reduce_rows(out.reshape((out.size, 1)), pos, vals.reshape((-1, 1)), reduce, include_self)
    return out


def index_reduce(self, dim, index, source, reduce, include_self=True):
    meta_of(R.get("index_reduce"), [self, dim, index, source, reduce, include_self])
    out = as_1d(self)
    d = wrap_dim(dim, out.ndim)
    idx, bad = checked_index(as_1d(index), out.shape[d], allow_negative=False)
    if bad is not None:
        raise IndexError("index out of range in self")
    if self.dtype.kind == "b":
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    w, perm = _moved_first(out, [d])
    rows, _ = _moved_first(as_1d(source), [d])
    reduce_rows(w, idx, rows, reduce, include_self)
    return _moved_back(w, out.shape, perm).reshape(self.shape)


# ----------------------------------------------------------------------------- put, fill_diagonal_
def put(self, index, source, accumulate=False):
    meta_of(R.get("put"), [self, index, source, accumulate])
    out = copy_strided(self)
    n = out.size
    idx, bad = checked_index(index.reshape((-1,)), n, allow_negative=True)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    if idx.size:
        write_rows(out.reshape((n,)), idx, copy_strided(source).reshape((-1,)), "add" if accumulate else "set")
    return out


def fill_diagonal_(self, fill_value, wrap=False):
    meta_of(R.get("fill_diagonal_"), [self, fill_value, wrap])
    out = copy_strided(self)
    step = sum(math.prod(self.shape[k + 1:]) for k in range(self.ndim))
    count = min(self.shape[0], self.shape[1])
    if wrap and self.ndim == 2 and self.shape[0] > self.shape[1] + 1:
        count = -(-out.size // step)
    if count and out.size:
        fill(out.view_of((count,), (step * out.itemsize,), out.offset), fill_value)
    return out


# ----------------------------------------------------------------------------- frexp
@functools.cache
def _frexp():

    @cuda.jit
    def k(x, mant, expo, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            m, e = math.frexp(x[i])
            mant[i] = m
            expo[i] = e

    return k


def frexp(self):
    meta_of(R.get("frexp", "Tensor"), [self])
    x = copy_strided(self)
    mant = CudaArray.empty(self.shape, self.dtype)
    expo = CudaArray.empty(self.shape, np.int32)
    runtime.launch(_frexp(), x.size, x.flat_device(), mant.buf, expo.buf, x.size)
    return mant, expo


def register() -> list:
    return register_table({
        ("scatter_reduce", "two"): scatter_reduce, ("index_reduce", ""): index_reduce, ("put", ""): put,
        ("fill_diagonal_", ""): fill_diagonal_, ("frexp", "Tensor"): frexp,
    })
