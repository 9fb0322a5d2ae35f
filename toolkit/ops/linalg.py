"""Linear algebra: products, decompositions and solvers, on numpy's BLAS/LAPACK."""

from __future__ import annotations

import numpy as np

from .registry import LINALG, op


def _check_same_dtype(name, a, b):
    if a.dtype != b.dtype:
        from .._core.dtypes import from_numpy_dtype

        raise RuntimeError(
            f"{name}: expected m1 and m2 to have the same dtype, but got: "
            f"{from_numpy_dtype(a.dtype).name} != {from_numpy_dtype(b.dtype).name}"
        )


@op("mm(Tensor self, Tensor mat2) -> Tensor", kind=LINALG)
def mm(self, mat2):
    """Matrix product of two 2-D tensors."""
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {self.ndim}D and {mat2.ndim}D")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mm: mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    _check_same_dtype("mm", self, mat2)
    return np.matmul(self, mat2)


@mm.grad
def _(grad, self, mat2, needs_input_grad):
    return (grad.mm(mat2.t()) if needs_input_grad[0] else None), (self.t().mm(grad) if needs_input_grad[1] else None)
