"""Distances and renorm on the device: cdist, pdist, renorm.

Each distance is the vector norm (:func:`.reduce_norm.vector_norm`, the
kernels ``linalg.vector_norm`` runs) of pairwise differences made by one
broadcast map kernel: every row of ``x1`` against every row of ``x2`` for
``cdist``, the row pairs ``i < j`` (in the CPU's order) for ``pdist``.
``renorm`` scales each slice by one map kernel over its norm, as the CPU op.
"""

from __future__ import annotations

import numpy as np

from ..._core.shape import wrap_dim
from ...ops import registry as R
from .array import CudaArray, broadcast_to
from .codegen import run_map, typed_scalar
from .indexing import take_rows
from .reduce_norm import vector_norm
from .registration import meta_of, register_table


def _cdist(x1: CudaArray, x2: CudaArray, p: float, meta) -> CudaArray:
    shape = tuple(meta.shape)
    batch, (rows1, rows2), m = shape[:-2], shape[-2:], x1.shape[-1]
    a = broadcast_to(x1.reshape(x1.shape[:-1] + (1, m)), batch + (rows1, rows2, m))
    b = broadcast_to(x2.reshape(x2.shape[:-2] + (1, rows2, m)), batch + (rows1, rows2, m))
    diff = run_map("a - b", CudaArray.empty(batch + (rows1, rows2, m), x1.dtype), {"a": a, "b": b}, {})
    return vector_norm(diff, p, (diff.ndim - 1,), x1.dtype).reshape(shape)


def cdist(x1, x2, p=2.0, compute_mode=None):
    meta = meta_of(R.get("cdist"), [x1, x2, p, compute_mode])
    return _cdist(x1, x2, p, meta)


def pdist(self, p=2.0):
    meta = meta_of(R.get("pdist"), [self, p])
    n, m = self.shape
    i, j = np.triu_indices(n, 1)
    if not len(i):
        return CudaArray.empty(tuple(meta.shape), self.dtype)
    first = take_rows(self, 0, CudaArray.from_host(i.astype(np.int64)))[0]
    second = take_rows(self, 0, CudaArray.from_host(j.astype(np.int64)))[0]
    diff = run_map("a - b", CudaArray.empty((len(i), m), self.dtype), {"a": first, "b": second}, {})
    return vector_norm(diff, p, (1,), self.dtype).reshape(tuple(meta.shape))


def renorm(self, p, dim, maxnorm):
    meta_of(R.get("renorm"), [self, p, dim, maxnorm])
    d = wrap_dim(dim, self.ndim)
    dims = tuple(i for i in range(self.ndim) if i != d)
    kept = tuple(1 if d in dims else n for d, n in enumerate(self.shape))
    norm = vector_norm(self, p, dims, self.dtype).reshape(kept)
    dtype = self.dtype
    return run_map("x * (m / (n + eps) if n > m else one)", CudaArray.empty(self.shape, dtype),
                   {"x": self, "n": norm},
                   {"m": typed_scalar(maxnorm, dtype), "eps": typed_scalar(1e-7, dtype), "one": typed_scalar(1, dtype)})


def register() -> list:
    return register_table({"cdist": cdist, "pdist": pdist, "renorm": renorm})
