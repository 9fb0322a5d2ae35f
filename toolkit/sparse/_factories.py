"""``toolkit.sparse_coo_tensor``: a sparse COO tensor from indices and values, checked as PyTorch checks it."""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.ops import sparse_coo as _k
from toolkit.tensor import Tensor

from ._coo import SparseTensor, build


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """A sparse tensor with ``values[k]`` at ``indices[:, k]``; ``size`` defaults to the smallest that holds them.

    Example: ``sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3))``.
    """
    idx_t = indices if isinstance(indices, Tensor) else toolkit.tensor(indices)
    vals = values if isinstance(values, Tensor) else toolkit.tensor(values, dtype=dtype)
    if dtype is not None and vals.dtype is not dtype:
        vals = vals.to(dtype)
    if device is not None:
        vals = vals.to(device)
    idx = np.ascontiguousarray(idx_t.detach().cpu().numpy(), dtype=np.int64)
    sd, dd = (idx.shape[0] if idx.ndim else 0), vals.dim() - 1
    if size is not None:
        size = tuple(int(s) for s in size)
        if len(size) != sd + dd:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sd}, dense_dim = {dd}")
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    nnz_values = vals.shape[0] if vals.dim() else 1
    if idx.shape[1] != nnz_values or vals.dim() == 0:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
                           f"nnz from values: {nnz_values}")
    if size is None:
        sparse_size = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.shape[1] else (0,) * sd
        size = (*sparse_size, *vals.shape[1:])
    else:
        if tuple(size[sd:]) != tuple(vals.shape[1:]):
            raise RuntimeError(f"values has incorrect size, expected {[vals.shape[0], *size[sd:]]}, got "
                               f"{list(vals.shape)}")
        if check_invariants:
            _k.check_indices(idx, size)
    out = build(idx, vals, size, bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


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
