"""Arithmetic on sparse COO tensors: sums, products, negation, transposes, reductions and matrix products.

Each computes new values with registered dense ops (so autograd follows them) and new indices with numpy.
What PyTorch refuses on the ``SparseCPU`` backend is refused here with the same words::

    (s + s).to_dense()        # sparse + sparse stays sparse
    toolkit.sparse.mm(s, d)   # dense result; the gradient for s is sparse with s's pattern
"""

from __future__ import annotations

import numbers

import numpy as np

import toolkit
from toolkit.ops import sparse_coo as _k
from toolkit.tensor import Tensor

from ._coo import SparseTensor, build, values_at, values_of


def _check_same_size(name: str, a: Tensor, b: Tensor) -> None:
    if a.shape != b.shape:
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(a.shape)} while other has size {list(b.shape)} (FYI: {name} for sparse tensors "
                           "does not support broadcasting)")


def add(self: SparseTensor, other, alpha=1) -> Tensor:
    """``self + alpha * other``: sparse with a sparse ``other``; a dense ``other`` is refused (as PyTorch)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"add(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    if not isinstance(other, SparseTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    _check_same_size("add", self, other)
    if self.sparse_dim() != other.sparse_dim():
        raise RuntimeError(f"add: expected same number of sparse dimensions, but got {self.sparse_dim()} and "
                           f"{other.sparse_dim()}")
    ov = values_of(other)
    if alpha != 1:
        ov = ov * alpha
    sv = values_of(self)
    dtype = toolkit.promote_types(sv.dtype, ov.dtype)
    vals = toolkit.cat([sv.to(dtype), ov.to(dtype)], 0)
    idx = np.concatenate([self._sp_indices, other._sp_indices], axis=1)
    out = build(idx, vals, self.shape, False)
    if self._sp_coalesced and other._sp_coalesced:
        out = out.coalesce()  # two sorted inputs merge into a sorted result
    return out


def dense_add(dense: Tensor, sparse: SparseTensor, alpha=1) -> Tensor:
    """``dense + alpha * sparse``: a dense result."""
    d = sparse.to_dense()
    return dense + (d * alpha if alpha != 1 else d)


def mul(self: SparseTensor, other) -> SparseTensor:
    """Elementwise product with a number, a dense tensor of the same shape, or a sparse tensor."""
    vals = values_of(self)
    if isinstance(other, (numbers.Number, np.number)) or (isinstance(other, Tensor) and other.dim() == 0
                                                          and not isinstance(other, SparseTensor)):
        return build(self._sp_indices, vals * other, self.shape, self._sp_coalesced)
    if not isinstance(other, Tensor):
        raise TypeError(f"mul(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    _check_same_size("mul", self, other)
    if not isinstance(other, SparseTensor):
        picked = values_at(other, self._sp_indices, tuple(self.shape))
        return build(self._sp_indices, vals * picked, self.shape, self._sp_coalesced)
    if not (self._sp_coalesced and other._sp_coalesced):
        # PyTorch keeps the pattern of the operand with fewer entries, zeros where the other has none.
        small, large = (other, self) if other._nnz() < self._nnz() else (self, other)
        picked = values_at(large, small._sp_indices, tuple(self.shape))
        return build(small._sp_indices, values_of(small) * picked, self.shape, small._sp_coalesced)
    a, b = self, other
    shape = a._sparse_shape()
    la, lb = _k.linear_indices(a._sp_indices, shape), _k.linear_indices(b._sp_indices, shape)
    common, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
    va = values_of(a).index_select(0, toolkit.from_numpy(ia.astype(np.int64)))
    vb = values_of(b).index_select(0, toolkit.from_numpy(ib.astype(np.int64)))
    return build(_k.from_linear(common, shape), va * vb, self.shape, True)


def neg(self: SparseTensor) -> SparseTensor:
    return build(self._sp_indices, -values_of(self), self.shape, self._sp_coalesced)


def transpose(self: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """Swap two sparse dims (their index rows); PyTorch refuses a sparse dim with a dense one."""
    n = self.dim()
    d0, d1 = (d + n if d < 0 else d for d in (dim0, dim1))
    sd = self.sparse_dim()
    if not (0 <= d0 < n and 0 <= d1 < n):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                         f"{dim0 if not 0 <= d0 < n else dim1})")
    if d0 == d1:
        return self
    if d0 >= sd or d1 >= sd:
        raise RuntimeError(f"transpose_: transposing dense dimensions ({d0}, {d1}) of a sparse tensor is not "
                           "supported")
    idx = self._sp_indices.copy()
    idx[[d0, d1]] = idx[[d1, d0]]
    shape = list(self.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return build(idx, values_of(self), tuple(shape), False)


def t(self: SparseTensor) -> SparseTensor:
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                           f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
    return self if self.dim() < 2 else transpose(self, 0, 1)


def sparse_sum(input: SparseTensor, dim=None, dtype=None) -> Tensor:
    """``toolkit.sparse.sum``: all elements (a 0-d dense tensor), or over ``dim``: sparse while sparse dims
    remain, dense when every sparse dim is summed."""
    vals = values_of(input)
    if dtype is not None:
        vals = vals.to(dtype)
    if dim is None:
        return vals.sum()
    dims = [dim] if isinstance(dim, int) else list(dim)
    n, sd = input.dim(), input.sparse_dim()
    dims = sorted({d + n if d < 0 else d for d in dims})
    for d in dims:
        if not 0 <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        vals = vals.sum(dense_dims)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return vals.sum(0)
    shape = tuple(s for d, s in enumerate(input.shape) if d not in dims)
    return build(input._sp_indices[keep], vals, shape, False).coalesce()


def mm(mat1: SparseTensor, mat2: Tensor) -> Tensor:
    """Sparse (2-D) times dense (2-D): a dense matrix. The gradient for ``mat1`` keeps ``mat1``'s pattern."""
    if isinstance(mat2, SparseTensor):
        return mm(mat1, mat2.to_dense()).to_sparse()
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
    vals = values_of(mat1)
    contrib = vals.unsqueeze(1) * mat2.index_select(0, cols)
    out = toolkit.zeros((mat1.shape[0], mat2.shape[1]), dtype=mat2.dtype, device=mat2.device)
    return out.index_add(0, rows, contrib)


def addmm(input: Tensor, mat1: SparseTensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (``toolkit.sparse.addmm``)."""
    prod = mm(mat1, mat2)
    if isinstance(input, SparseTensor):
        input = input.to_dense()
    return (input * beta if beta != 1 else input) + (prod * alpha if alpha != 1 else prod)


def dense_to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None,
                    dense_dim=None) -> SparseTensor:
    """``Tensor.to_sparse``: the nonzero entries (rows of dense dims with any nonzero) of a strided tensor."""
    if layout is not None and layout is not toolkit.sparse_coo:
        raise RuntimeError(f"to_sparse: conversion from Strided to {layout} is not implemented")
    n = self.dim()
    sd = n if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= n:
        raise RuntimeError(f"sparse_dim must be in [0, {n}], but got {sd}" if sd >= 0 else
                           f"sparse_dim must be non-negative, got {sd}")
    arr = self.detach().cpu().numpy()
    sparse_shape = tuple(self.shape[:sd])
    flat = arr.reshape((int(np.prod(sparse_shape)) if sd else 1, -1))
    lin = np.flatnonzero((flat != 0).any(axis=1)) if flat.size else np.zeros(0, dtype=np.int64)
    idx = _k.from_linear(lin.astype(np.int64), sparse_shape) if sd else np.zeros((0, 1), dtype=np.int64)
    src = self.reshape((-1, *self.shape[sd:])) if sd else self.unsqueeze(0)
    vals = src.index_select(0, toolkit.from_numpy(lin.astype(np.int64) if sd else np.zeros(1, dtype=np.int64)))
    return build(idx, vals, tuple(self.shape), True)


def sub(self: SparseTensor, other, alpha=1) -> Tensor:
    return add(self, other, alpha=-alpha)


def _reflected(alpha: int, symbol: str):
    """``dense + sparse`` / ``dense - sparse``: Python asks the sparse (sub)class first, which gives a dense sum."""
    def op(self: SparseTensor, other):
        if isinstance(other, Tensor):
            return dense_add(other, self, alpha=alpha)
        raise TypeError(f"unsupported operand type(s) for {symbol}: '{type(other).__name__}' and 'Tensor'")

    return op


def _sum(self: SparseTensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    if keepdim:
        raise RuntimeError("sum: keepdim is not supported for sparse tensors")
    return sparse_sum(self, dim, dtype)


# The sparse tensor's arithmetic methods and operators are these functions.
SparseTensor.add = SparseTensor.__add__ = add
SparseTensor.sub = SparseTensor.__sub__ = sub
SparseTensor.__radd__ = _reflected(1, "+")
SparseTensor.__rsub__ = _reflected(-1, "-")
SparseTensor.mul = SparseTensor.__mul__ = SparseTensor.__rmul__ = mul
SparseTensor.neg = SparseTensor.negative = SparseTensor.__neg__ = neg
SparseTensor.transpose = transpose
SparseTensor.t = t
SparseTensor.mm = SparseTensor.matmul = SparseTensor.__matmul__ = mm
SparseTensor.sum = _sum
