"""Scans on the device: cumsum and cumprod along one dim.

The scanned dim is moved last and the input copied, contiguous and cast to
the result dtype, into an ``(M, K)`` work array that is scanned in place:
one block per row (grid-stride over rows) walks the row in chunks of one
element per thread; each chunk is scanned in shared memory (Hillis-Steele:
log2(threads) steps, each adding the value ``s`` places back), then the
running total of the chunks before it is folded in. The result is moved
back to the input's dim order.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core.shape import wrap_dim
from ...ops import registry as R
from . import runtime
from .array import CudaArray, copy_strided
from .codegen import typed_scalar
from .reduce import _add, _mul
from .registration import meta_of, register_table


@functools.cache
def _scan_kernel(kind: str, tpb: int, dtype_str: str):
    import numba  # optional: numba, never loaded by import toolkit

    nb_t = numba.from_dtype(np.dtype(dtype_str))
    fold = cuda.jit(device=True)(_add if kind == "sum" else _mul)

    @cuda.jit
    def k(x, m, kk, unit):
        sm = cuda.shared.array(tpb, nb_t)
        tid = cuda.threadIdx.x
        for row in range(cuda.blockIdx.x, m, cuda.gridDim.x):
            carry = unit
            start = 0
            while start < kk:
                j = start + tid
                sm[tid] = x[row * kk + j] if j < kk else unit
                cuda.syncthreads()
                s = 1
                while s < tpb:
                    v = fold(sm[tid - s], sm[tid]) if tid >= s else sm[tid]
                    cuda.syncthreads()
                    sm[tid] = v
                    cuda.syncthreads()
                    s *= 2
                if j < kk:
                    x[row * kk + j] = fold(carry, sm[tid])
                carry = fold(carry, sm[tpb - 1])
                cuda.syncthreads()
                start += tpb

    return k


def scan(a: CudaArray, dim: int, kind: str, dtype) -> CudaArray:
    """Inclusive running sum (``kind="sum"``) or product (``"prod"``) of ``a`` along ``dim``, in ``dtype``."""
    dtype = np.dtype(dtype)
    if a.ndim == 0:
        return copy_strided(a, dtype)
    last = a.ndim - 1
    perm = [i for i in range(a.ndim) if i != dim] + [dim]
    x = copy_strided(a.transpose(perm), dtype)
    kk = a.shape[dim]
    m = a.size // kk if kk else 0
    if m:
        blocks, tpb = runtime.rows_launch(m)
        unit = typed_scalar(0 if kind == "sum" else 1, dtype)
        _scan_kernel(kind, tpb, dtype.str)[blocks, tpb](x.flat_device(), m, kk, unit)
    if dim == last:
        return x
    return copy_strided(x.transpose([perm.index(i) for i in range(a.ndim)]))


def _scan_op(name: str, kind: str):
    op = R.get(name)

    def kernel(self, dim, dtype=None):
        meta = meta_of(op, [self, dim, dtype])
        d = wrap_dim(dim, self.ndim, name) if self.ndim else 0
        return scan(self, d, kind, meta.dtype.np)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    return register_table({"cumsum": _scan_op("cumsum", "sum"), "cumprod": _scan_op("cumprod", "prod")})
