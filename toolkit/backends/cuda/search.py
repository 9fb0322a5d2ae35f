"""``searchsorted``, ``bucketize`` and ``isin`` on the device: one thread per value.

``searchsorted`` is PyTorch's binary search per value within its row of the
sequence (through ``sorter`` when given): the position moves right while
``not seq[mid] >= value`` (``>`` for the right side), so a NaN value lands after
every element, as on the CPU. ``isin`` compares each element with every test
value (NaN equals nothing), in the operands' promoted dtype.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core import dtypes as _dt
from ..._core.meta import TensorMeta
from ...ops import registry as R
from ...ops.search import _common_dtype, _side_is_right
from . import runtime
from .array import CudaArray, copy_strided, full
from .registration import meta_of, register_table


@functools.cache
def _k():

    @cuda.jit
    def search(seq, vals, sorter, use_sorter, out, n, per_row, seq_rows, right, total):
        for j in range(cuda.grid(1), total, cuda.gridsize(1)):
            row = (j // per_row) if seq_rows > 1 else 0
            v = vals[j]
            lo = 0
            hi = n
            while lo < hi:
                mid = lo + ((hi - lo) >> 1)
                at = row * n + mid
                if use_sorter:
                    at = row * n + sorter[at]
                m = seq[at]
                move = not (m > v) if right else not (m >= v)
                if move:
                    lo = mid + 1
                else:
                    hi = mid
            out[j] = lo

    @cuda.jit
    def member(e, t, nt, out, invert, total):
        for j in range(cuda.grid(1), total, cuda.gridsize(1)):
            v = e[j]
            found = False
            for i in range(nt):
                if t[i] == v:
                    found = True
                    break
            out[j] = found != invert

    return {"search": search, "member": member}


def _promoted(*operands) -> np.dtype:
    """The operands' promoted dtype as the CPU op computes it (device arrays read as their metadata)."""
    return _common_dtype(*(TensorMeta(a.shape, _dt.from_numpy_dtype(a.dtype), None) if isinstance(a, CudaArray)
                           else a for a in operands)).np


def _as_device(a, dtype) -> CudaArray:
    """A tensor operand (or Python number) as a contiguous device array of ``dtype``."""
    if isinstance(a, CudaArray):
        return copy_strided(a, dtype)
    return CudaArray.from_host(np.asarray(a).astype(dtype))


def _search(name: str, seq, values, out_int32, right, side, sorter):
    right = _side_is_right(right, side)
    common = _promoted(seq, values)
    s, v = _as_device(seq, common), _as_device(values, common)
    n = seq.shape[-1]
    out = CudaArray.empty(v.shape, np.int64)
    if out.size:
        use = sorter is not None
        srt = copy_strided(sorter, np.int64) if use else CudaArray.empty((1,), np.int64)
        per_row = v.shape[-1] if v.ndim else 1
        seq_rows = s.size // max(n, 1)
        if n == 0:
            return full(v.shape, 0, np.int32 if out_int32 else np.int64)
        runtime.launch(_k()["search"], out.size, s.flat_device(), v.flat_device(), srt.flat_device(), use, out.buf, n,
                       per_row, seq_rows, right, out.size)
    return out.astype(np.int32) if out_int32 else out


def searchsorted(name: str):
    op = R.get(*name.split("."))

    def kernel(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
        meta_of(op, [sorted_sequence, self, out_int32, right, side, sorter])
        return _search(name, sorted_sequence, self, out_int32, right, side, sorter)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def bucketize(name: str):
    op = R.get(*name.split("."))

    def kernel(self, boundaries, out_int32=False, right=False):
        meta_of(op, [self, boundaries, out_int32, right])
        return _search(name, boundaries, self, out_int32, right, None, None)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def isin(name: str):
    op = R.get(*name.split("."))

    def kernel(elements, test_elements, assume_unique=False, invert=False):
        meta_of(op, [elements, test_elements, assume_unique, invert])
        common = _promoted(elements, test_elements)
        e, t = _as_device(elements, common), _as_device(test_elements, common)
        out = CudaArray.empty(e.shape, np.bool_)
        runtime.launch(_k()["member"], out.size, e.flat_device(), t.flat_device(), t.size, out.buf, bool(invert),
                       out.size)
        return out

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    table = {}
    for name in ("searchsorted.Tensor", "searchsorted.Scalar"):
        table[tuple(name.split("."))] = searchsorted(name)
    for name in ("bucketize.Tensor", "bucketize.Scalar"):
        table[tuple(name.split("."))] = bucketize(name)
    for name in ("isin.Tensor_Tensor", "isin.Scalar_Tensor", "isin.Tensor_Scalar"):
        table[tuple(name.split("."))] = isin(name)
    return register_table(table)
