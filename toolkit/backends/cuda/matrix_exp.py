"""The matrix exponential on the device, by the CPU op's own recipe.

Scaling and squaring in float64: the batch's largest 1-norm (one number read
back) picks the power of two that brings every matrix to norm 1/2 or less,
a degree-18 Taylor polynomial is summed with the tiled GEMM, and the result is
squared back, so CPU and CUDA agree to rounding.
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import registry as R
from .array import CudaArray, copy_strided, fill
from .codegen import run_map
from .gemm import gemm
from .linalg import batched
from .reduce import row_reduce
from .registration import meta_of, register_table


def _eye_batch(nb: int, n: int) -> CudaArray:
    eye = fill(CudaArray.empty((nb, n, n), np.float64), 0)
    fill(eye.view_of((nb, n), (n * n * 8, (n + 1) * 8), 0), 1)
    return eye


def _expm(a: CudaArray) -> CudaArray:
    n = a.shape[-1]
    if a.size == 0:
        return copy_strided(a)
    x, nb = batched(copy_strided(a, np.float64))
    col_sums = row_reduce(run_map("abs(v)", CudaArray.empty(x.shape, np.float64), {"v": x}, {}), (1,), "sum")[0]
    norm = float(row_reduce(col_sums, (0,), "max")[0].item())
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = run_map("v / q", CudaArray.empty(x.shape, np.float64), {"v": x}, {"q": np.float64(2.0 ** s)})
    out = _eye_batch(nb, n)
    term = _eye_batch(nb, n)
    for k in range(1, 19):
        term = run_map("v / q", CudaArray.empty(x.shape, np.float64), {"v": gemm(term, x)},
                       {"q": np.float64(k)})
        out = run_map("a + b", CudaArray.empty(x.shape, np.float64), {"a": out, "b": term}, {})
    for _ in range(s):
        out = gemm(out, out)
    return copy_strided(out, a.dtype).reshape(a.shape)


def _kernel(name: str):
    def kernel(self):
        meta_of(R.get(name), [self])
        return _expm(self)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    return register_table({"matrix_exp": _kernel("matrix_exp"), "linalg_matrix_exp": _kernel("linalg_matrix_exp")})
