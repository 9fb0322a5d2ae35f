"""The sparse COO kernels of matrix products: ``mm``, ``matmul``, ``addmm``, ``_sparse_mm`` (``sparse.mm``),
``hspmm`` and ``smm``, registered under the ops' ``"sparse_cpu"`` key.

A sparse-times-dense product gathers the dense rows each entry needs and sums them into the output rows
with registered ops, so the gradient for the sparse operand is read at its own entries (its pattern) and
the dense operand's is dense, as PyTorch's ``sparse.mm`` gives them::

    toolkit.mm(s, d)        # dense
    toolkit.hspmm(s, d)     # sparse rows of the product
"""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.ops import registry as R
from toolkit.tensor import Tensor

from ._arith import sparse_kernel, t
from ._coo import SparseTensor, build, values_of


def _sparse_dense(mat1: SparseTensor, mat2: Tensor) -> Tensor:
    """Sparse (2-D) times dense (2-D): a dense matrix."""
    if mat1.sparse_dim() != 2 or mat1.dense_dim() != 0 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected 2-D sparse and 2-D dense matrices, got a {mat1.sparse_dim()}+"
                           f"{mat1.dense_dim()}-D sparse and a {mat2.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    rows = toolkit.from_numpy(mat1._sp_indices[0])
    cols = toolkit.from_numpy(mat1._sp_indices[1])
    contrib = values_of(mat1).unsqueeze(1) * mat2.index_select(0, cols)
    out = toolkit.zeros((mat1.shape[0], mat2.shape[1]), dtype=mat2.dtype, device=mat2.device)
    return out.index_add(0, rows, contrib)


@sparse_kernel("mm", "_sparse_mm")
def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product with a sparse operand: dense, unless both are sparse (then sparse, as PyTorch's)."""
    if not mat1.is_sparse:  # dense @ sparse = (sparse^T @ dense^T)^T
        return _sparse_dense(t(mat2), mat1.t()).t()
    if mat2.is_sparse:
        return _sparse_dense(mat1, mat2.to_dense()).to_sparse()
    return _sparse_dense(mat1, mat2)


@sparse_kernel("matmul")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``mm`` for matrices; a vector operand is a one-column (or one-row) matrix."""
    if other.dim() == 1:
        return mm(input, other.unsqueeze(1)).squeeze(1)
    if input.dim() == 1:
        return mm(input.unsqueeze(0), other).squeeze(0)
    return mm(input, other)


@sparse_kernel("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` or ``mat2`` and a strided ``input``."""
    if input.is_sparse:
        raise RuntimeError("addmm_sparse_dense: expected strided result tensor, got tensor with layout Sparse")
    prod = mm(mat1, mat2)
    return (input * beta if beta != 1 else input) + (prod * alpha if alpha != 1 else prod)


@R.get("hspmm").kernel("sparse_cpu")
def hspmm(mat1: SparseTensor, mat2: Tensor) -> SparseTensor:
    """Sparse times dense as a hybrid sparse tensor: one sparse dim (the rows ``mat1`` has entries in) and the
    product's rows as dense values."""
    dense = mm(mat1, mat2)
    rows = np.unique(mat1._sp_indices[0]).astype(np.int64)
    return build(rows.reshape(1, -1), dense.index_select(0, toolkit.from_numpy(rows)), tuple(dense.shape), False)


@R.get("smm").kernel("sparse_cpu")
def smm(self: SparseTensor, mat2: Tensor) -> SparseTensor:
    """Sparse times dense, the product as a sparse tensor."""
    return mm(self, mat2).to_sparse()


@sparse_kernel("mv")
def mv(self: SparseTensor, vec: Tensor) -> Tensor:
    """A sparse matrix times a dense vector: a dense vector."""
    return mm(self, vec.unsqueeze(1)).squeeze(1)
