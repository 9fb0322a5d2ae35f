"""Reductions on the device: sum, mean, amax/amin, max/min (with indices), argmax/argmin.

The reduced dimensions are moved last and made contiguous, so every
reduction is a row reduction of an ``(M, K)`` array: one block per row
(grid-stride over rows), each thread folds a strided part of the row, then a
tree reduction in shared memory combines the threads' partial results.
Output shape, dtype and the argument errors come from the op's meta rule,
the same rule eager CPU calls and the JIT use.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core.shape import wrap_dim
from ...ops import registry as R
from . import runtime
from .array import CudaArray, copy_strided, fill
from .codegen import run_map
from .registration import meta_of, register_table

# Each combine keeps (value, index); on ties the lower index wins, and NaN wins over numbers as in PyTorch.
_BETTER = {
    "max": "b > a or (b != b and a == a) or ((b == a or (b != b and a != a)) and ib < ia)",
    "min": "b < a or (b != b and a == a) or ((b == a or (b != b and a != a)) and ib < ia)",
}


def _add(a, b):
    return a + b


def _mul(a, b):
    return a * b


@functools.cache
def _row_kernel(kind: str, tpb: int, dtype_str: str):
    import numba  # optional: numba, never loaded by import toolkit

    nb_t = numba.from_dtype(np.dtype(dtype_str))
    nb_i = numba.int64
    if kind in ("sum", "prod"):
        fold = cuda.jit(device=True)(_add if kind == "sum" else _mul)
        # Accumulate in float64 or int64 from a typed identity (``x * 0`` would make an inf row nan).
        unit = (np.float64 if np.dtype(dtype_str).kind == "f" else np.int64)(0 if kind == "sum" else 1)

        @cuda.jit
        def k(x, out, idx, m, kk):
            sm = cuda.shared.array(tpb, nb_t)
            tid = cuda.threadIdx.x
            for row in range(cuda.blockIdx.x, m, cuda.gridDim.x):
                acc = unit
                j = tid
                while j < kk:
                    acc = fold(acc, x[row * kk + j])
                    j += tpb
                sm[tid] = acc
                cuda.syncthreads()
                s = tpb // 2
                while s > 0:
                    if tid < s:
                        sm[tid] = fold(sm[tid], sm[tid + s])
                    cuda.syncthreads()
                    s //= 2
                if tid == 0:
                    out[row] = sm[0]
                cuda.syncthreads()
        return k
    better = _BETTER[kind]
    ns: dict = {}
    exec(f"def better(a, ia, b, ib):\n    return {better}\n", ns)
    better_fn = cuda.jit(device=True)(ns["better"])

    @cuda.jit
    def k(x, out, idx, m, kk):
        sm = cuda.shared.array(tpb, nb_t)
        si = cuda.shared.array(tpb, nb_i)
        tid = cuda.threadIdx.x
        for row in range(cuda.blockIdx.x, m, cuda.gridDim.x):
            j = tid if tid < kk else 0
            acc = x[row * kk + j]
            ia = j
            j += tpb
            while j < kk:
                v = x[row * kk + j]
                if better_fn(acc, ia, v, j):
                    acc = v
                    ia = j
                j += tpb
            sm[tid] = acc
            si[tid] = ia
            cuda.syncthreads()
            s = tpb // 2
            while s > 0:
                if tid < s and better_fn(sm[tid], si[tid], sm[tid + s], si[tid + s]):
                    sm[tid] = sm[tid + s]
                    si[tid] = si[tid + s]
                cuda.syncthreads()
                s //= 2
            if tid == 0:
                out[row] = sm[0]
                idx[row] = si[0]
            cuda.syncthreads()
    return k


def _dims(dim, ndim: int, name: str) -> tuple:
    if dim is None or dim == ():
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted({wrap_dim(d, max(ndim, 1), name) for d in dim} & set(range(ndim)))) if ndim else ()


def row_reduce(a: CudaArray, dims: tuple, kind: str, dtype=None) -> tuple:
    """(values, indices or None) over ``dims`` of ``a``, both shaped like ``a`` without ``dims`` (flat)."""
    kept = [d for d in range(a.ndim) if d not in dims]
    m = math.prod(a.shape[d] for d in kept)
    kk = math.prod(a.shape[d] for d in dims)
    dtype = np.dtype(dtype or a.dtype)
    work = dtype if dtype != np.bool_ else np.dtype(np.uint8)
    x = copy_strided(a.transpose(kept + list(dims)), work) if a.ndim else copy_strided(a, work)
    vals = CudaArray.empty((m,), work)
    idx = CudaArray.empty((m,), np.int64)
    if m == 0:
        return vals, idx
    if kk == 0:
        fill(vals, 1 if kind == "prod" else 0)
        return vals, idx
    blocks, tpb = runtime.rows_launch(m)
    k = _row_kernel(kind, tpb, work.str)
    k[blocks, tpb](x.flat_device(), vals.buf, idx.buf, m, kk)
    if work != dtype:
        vals = copy_strided(vals, dtype)
    return vals, idx


def _shaped(a: CudaArray, meta) -> CudaArray:
    return a.reshape(tuple(meta.shape))


def _sum(self, dim=None, keepdim=False, dtype=None):
    meta = meta_of(R.get("sum"), [self, dim, keepdim, dtype])
    vals, _ = row_reduce(self, _dims(dim, self.ndim, "sum"), "sum", meta.dtype.np)
    return _shaped(vals, meta)


def _mean(self, dim=None, keepdim=False, dtype=None):
    meta = meta_of(R.get("mean"), [self, dim, keepdim, dtype])
    dims = _dims(dim, self.ndim, "mean")
    count = math.prod(self.shape[d] for d in dims)
    vals, _ = row_reduce(self, dims, "sum", meta.dtype.np)
    out = CudaArray.empty(vals.shape, vals.dtype)
    run_map("self / count" if count else "self * nan", out, {"self": vals},
            {"count": vals.dtype.type(count)} if count else {"nan": vals.dtype.type(np.nan)})
    return _shaped(out, meta)


def _empty_check(name: str, self, dims) -> None:
    if any(self.shape[d] == 0 for d in dims) or (self.size == 0 and not dims):
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.") if not dims \
            else RuntimeError(f"{name}(): Expected reduction dim {dims[0]} to have non-zero size.")


def _extreme(kind: str, name: str, with_values: bool, with_index: bool):
    def kernel(self, *args):
        op = R.get(name)
        meta = meta_of(op, [self, *args])
        dim = args[0] if args else None
        keepdim = bool(args[1]) if len(args) > 1 else False
        dims = _dims(dim, self.ndim, name)
        if self.size == 0:
            _empty_check(name, self, dims or tuple(range(self.ndim)))
        vals, idx = row_reduce(self, dims, kind)
        metas = meta if isinstance(meta, (tuple, list)) else (meta,)
        if with_values and with_index:
            return _shaped(vals, metas[0]), _shaped(idx, metas[1])
        if with_index:
            shape = tuple(metas[0].shape)
            if dim is None and keepdim:
                shape = (1,) * self.ndim
            return idx.reshape(shape)
        return _shaped(vals, metas[0])

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    table = {
        ("sum", ""): _sum, ("mean", ""): _mean, ("sum_to_size", ""): _sum_to_size,
        ("amax", ""): _extreme("max", "amax", True, False), ("amin", ""): _extreme("min", "amin", True, False),
        ("max", ""): _extreme("max", "max", True, False), ("min", ""): _extreme("min", "min", True, False),
        ("max", "dim"): _extreme("max", "max.dim", True, True), ("min", "dim"): _extreme("min", "min.dim", True, True),
        ("argmax", ""): _extreme("max", "argmax", False, True), ("argmin", ""): _extreme("min", "argmin", False, True),
    }
    return register_table(table)


def _sum_to_size(self, size):
    meta = meta_of(R.get("sum_to_size"), [self, size])
    size = tuple(size)
    lead = self.ndim - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1)
    if not dims:
        return self.reshape(size)
    vals, _ = row_reduce(self, dims, "sum")
    return vals.reshape(tuple(meta.shape))
