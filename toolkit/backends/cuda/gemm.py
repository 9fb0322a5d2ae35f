"""Matrix products on the device: one tiled shared-memory GEMM serves mm, bmm, matmul, addmm and linear.

``C[b] = A[b] @ B[b]`` with every operand read through (batch, row, column)
element strides, so transposed views (``weight.t()`` in ``linear``) and a
matrix shared by every batch (stride 0) cost no copy. Each block computes a
``TILE x TILE`` tile of C, staging tiles of A and B in shared memory; blocks
walk the tiles grid-stride. Shapes, dtypes and errors come from the ops'
meta rules.
"""

from __future__ import annotations

import functools
import os

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ...ops import registry as R
from . import runtime
from .array import CudaArray, broadcast_to, fill
from .codegen import run_map, typed_scalar
from .registration import checked, meta_of, register_table


def tile() -> int:
    return int(os.environ.get("TOOLKIT_CUDA_SIM_TILE", "4")) if runtime.simulated() else 16


@functools.cache
def _kernel(t: int, dtype_str: str):
    import numba  # optional: numba, never loaded by import toolkit

    nb_t = numba.from_dtype(np.dtype(dtype_str))

    @cuda.jit
    def gemm(a, ao, as0, as1, as2, b, bo, bs0, bs1, bs2, c, co, cs0, cs1, cs2, batch, m, n, kk, zero):
        sa = cuda.shared.array((t, t), nb_t)
        sb = cuda.shared.array((t, t), nb_t)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tiles_m = (m + t - 1) // t
        tiles_n = (n + t - 1) // t
        total = batch * tiles_m * tiles_n
        for tb in range(cuda.blockIdx.x, total, cuda.gridDim.x):
            bi = tb // (tiles_m * tiles_n)
            rem = tb % (tiles_m * tiles_n)
            row = (rem // tiles_n) * t + ty
            col = (rem % tiles_n) * t + tx
            acc = zero
            for k0 in range(0, kk, t):
                ka = k0 + tx
                if row < m and ka < kk:
                    sa[ty, tx] = a[ao + bi * as0 + row * as1 + ka * as2]
                else:
                    sa[ty, tx] = zero
                kb = k0 + ty
                if kb < kk and col < n:
                    sb[ty, tx] = b[bo + bi * bs0 + kb * bs1 + col * bs2]
                else:
                    sb[ty, tx] = zero
                cuda.syncthreads()
                for q in range(t):
                    acc += sa[ty, q] * sb[q, tx]
                cuda.syncthreads()
            if row < m and col < n:
                c[co + bi * cs0 + row * cs1 + col * cs2] = acc

    return gemm


def _strides3(x: CudaArray) -> tuple:
    st = x.estrides
    return (0,) + st if x.ndim == 2 else st


def gemm(a: CudaArray, b: CudaArray, out: CudaArray | None = None) -> CudaArray:
    """``a @ b`` for (m, k) or (batch, m, k) ``a`` and (k, n) or (batch, n) ``b`` (2-d ones broadcast); into ``out``."""
    batch = max(a.shape[0] if a.ndim == 3 else 1, b.shape[0] if b.ndim == 3 else 1)
    m, kk = a.shape[-2:]
    n = b.shape[-1]
    dtype = np.result_type(a.dtype, b.dtype)
    if a.dtype != dtype:
        a = a.astype(dtype)
    if b.dtype != dtype:
        b = b.astype(dtype)
    if out is None:
        out = CudaArray.empty((batch, m, n) if (a.ndim == 3 or b.ndim == 3) else (m, n), dtype)
    if out.size == 0:
        return out
    if kk == 0:
        return fill(out, 0)
    t = tile()
    tiles = batch * ((m + t - 1) // t) * ((n + t - 1) // t)
    blocks = min(tiles, 4 if runtime.simulated() else 65535)
    k = _kernel(t, dtype.str)
    k[blocks, (t, t)](a.buf, a.offset, *_strides3(a), b.buf, b.offset, *_strides3(b), out.buf, out.offset,
                      *_strides3(out), batch, m, n, kk, typed_scalar(0, dtype))
    return out


def _batched(x: CudaArray, batch_shape: tuple) -> CudaArray:
    """``x`` (..., r, c) broadcast to ``batch_shape + (r, c)`` and flattened to 3-d (a copy only when needed)."""
    full = broadcast_to(x, batch_shape + x.shape[-2:])
    n = 1
    for s in batch_shape:
        n *= s
    if x.ndim == 2:
        return x  # shared by every batch: stride 0
    return full.reshape((n,) + x.shape[-2:])


def matmul(self, other):
    meta = meta_of(R.get("matmul"), [self, other])
    a, b = self, other
    if a.ndim == 1:
        a = a.reshape((1, a.shape[0]))
    if b.ndim == 1:
        b = b.reshape((b.shape[0], 1))
    batch_shape = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    if not batch_shape:
        r = gemm(a, b)
    else:
        r = gemm(_batched(a, batch_shape), _batched(b, batch_shape))
        if r.ndim == 2:
            r = r.reshape((1,) + r.shape)
    return r.reshape(tuple(meta.shape))


def scaled_sum(self: CudaArray, prod: CudaArray, beta, alpha) -> CudaArray:
    """``beta * self + alpha * prod`` in prod's dtype (the add* ops); ``self`` is not read when beta is 0, as
    PyTorch does (so its nan and inf do not spread)."""
    dtype = prod.dtype
    out = CudaArray.empty(prod.shape, dtype)
    if beta == 0:
        return run_map("alpha * p", out, {"p": prod}, {"alpha": typed_scalar(alpha, dtype)})
    return run_map("beta * s + alpha * p", out, {"s": self, "p": prod},
                   {"beta": typed_scalar(beta, dtype), "alpha": typed_scalar(alpha, dtype)})


def addmm(self, mat1, mat2, beta=1, alpha=1):
    meta_of(R.get("addmm"), [self, mat1, mat2, beta, alpha])
    return scaled_sum(self, gemm(mat1, mat2), beta, alpha)


def linear(input, weight, bias=None):
    meta = meta_of(R.get("linear"), [input, weight, bias])
    if weight.ndim == 1 or input.ndim == 1:
        return matmul(input, weight.T if weight.ndim == 2 else weight).reshape(tuple(meta.shape)) if bias is None \
            else _add_bias(matmul(input, weight.T if weight.ndim == 2 else weight), bias).reshape(tuple(meta.shape))
    x = input.reshape((-1, input.shape[-1]))
    r = gemm(x, weight.T)
    if bias is not None:
        r = _add_bias(r, bias)
    return r.reshape(tuple(meta.shape))


def _add_bias(r: CudaArray, bias: CudaArray) -> CudaArray:
    return run_map("s + b", r, {"s": r, "b": bias}, {})


def register() -> list:
    return register_table({"matmul": matmul, "mm": checked("mm", gemm), "bmm": checked("bmm", gemm), "addmm": addmm,
                           "linear": linear})
