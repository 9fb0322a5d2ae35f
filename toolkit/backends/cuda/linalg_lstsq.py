"""Least squares on the device: linalg.lstsq, the minimum-norm solution from the SVD.

``X = V diag(1/s) U^T B`` over the singular values above ``rcond * max(s)``
(the SVD of :mod:`.linalg_factor`, Jacobi), as numpy's SVD-based ``gelsd``
the CPU op runs. Which of residuals, rank and singular values come back, and
their shapes, follow the CPU op's drivers (its meta rule); residuals need every
matrix to be of full rank, so the ranks are read back once when they may be.
"""

from __future__ import annotations

import numpy as np

from ..._core import dtypes as _dt
from ..._core.device import device
from ..._core.meta import TensorMeta
from ...ops.tensor_solves import _lstsq_check, _lstsq_metas
from .array import CudaArray, broadcast_to, copy_strided, full
from .codegen import run_map, typed_scalar
from .gemm import matmul
from .linalg import swap_last
from .linalg_factor import _svd_factors
from .reduce import row_reduce
from .registration import register_table


def _meta(a: CudaArray) -> TensorMeta:
    return TensorMeta(a.shape, _dt.from_numpy_dtype(a.dtype), device("cuda", 0))


def linalg_lstsq(self, b, rcond=None, driver=None):
    vector, batch, m, n, k, drv = _lstsq_check(_meta(self), _meta(b), driver)
    dtype = self.dtype
    bm = b.reshape(b.shape + (1,)) if vector else b
    a = copy_strided(broadcast_to(self, batch + (m, n)))
    bm = copy_strided(broadcast_to(bm, batch + bm.shape[-2:]))
    cols = bm.shape[-1]
    cut = np.finfo(dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    r = min(m, n)
    if a.size == 0:
        solution = full(batch + (n, cols), 0, dtype)
        ranks = full(batch, 0, np.int64)
        svs = full(batch + (r,), 0, dtype)
    else:
        u, s, v = _svd_factors(a, False)  # a = u diag(s) v^T, s descending
        smax = s.view_of(s.shape[:-1] + (1,), s.strides, s.offset)
        tol = run_map("q * c", CudaArray.empty(smax.shape, dtype), {"q": smax}, {"c": typed_scalar(cut, dtype)})
        keep = run_map("1 if q > t else 0", CudaArray.empty(s.shape, np.int64), {"q": s, "t": tol}, {})
        inv = run_map("1 / q if f else z", CudaArray.empty(s.shape, dtype), {"q": s, "f": keep},
                      {"z": typed_scalar(0, dtype)})
        ub = matmul(swap_last(u), bm)  # (..., r, cols)
        scaled = run_map("x * i", CudaArray.empty(ub.shape, dtype), {"x": ub, "i": inv.reshape(inv.shape + (1,))}, {})
        solution = matmul(v, scaled)
        ranks = row_reduce(keep, (keep.ndim - 1,), "sum")[0].reshape(batch)
        svs = s
    full_rank = a.size == 0 or bool((ranks.get() == r).all())
    metas = _lstsq_metas(_meta(self), _meta(b), driver, full_rank)
    if tuple(metas[1].shape) != (0,):
        diff = run_map("p - q", CudaArray.empty(bm.shape, dtype), {"p": matmul(a, solution), "q": bm}, {})
        sq = run_map("d * d", CudaArray.empty(bm.shape, dtype), {"d": diff}, {})
        res = row_reduce(sq, (sq.ndim - 2,), "sum")[0].reshape(batch + (cols,))
        residuals = copy_strided(res.reshape(batch) if vector else res)
    else:
        residuals = CudaArray.empty((0,), dtype)
    rank = copy_strided(ranks) if drv != "gels" else CudaArray.empty((0,), np.int64)
    sv = copy_strided(svs).reshape(batch + (r,)) if drv in ("gelsd", "gelss") else CudaArray.empty((0,), dtype)
    solution = copy_strided(solution).reshape(batch + (n, cols))
    return (solution.reshape(batch + (n,)) if vector else solution), residuals, rank, sv


def register() -> list:
    return register_table({"linalg_lstsq": linalg_lstsq})
