"""Array-level pieces of sparse COO tensors: the metadata a sparse tensor carries as its ``_data``, and index
arithmetic (linear indices, coalescing order, pattern lookup) on plain int64 arrays.

A sparse COO tensor keeps an ``(sparse_dim, nnz)`` int64 index array and a dense tensor of values
``(nnz, *dense_shape)``. The values live above (``toolkit.sparse``) so autograd sees them; the index work
here is numpy only. ``SparseMeta`` stands in for a strided tensor's ndarray: shape, dtype and size read as
for a dense tensor, and any kernel that tries to compute on it fails with PyTorch's words for an op the
``SparseCPU`` backend lacks, which the dispatcher turns into an error naming the op::

    lin = linear_indices(np.array([[0, 1], [2, 0]]), (2, 3))   # array([2, 3])
"""

from __future__ import annotations

import math

import numpy as np

# The conversions a dense Tensor offers (``to_sparse``...), filled in by ``toolkit.sparse`` when it is imported.
CONVERSIONS: dict = {}

def backend_refusal(name: str, backend: str) -> NotImplementedError:
    """PyTorch's error for an op (``aten::exp``) without a kernel for a backend (``SparseCPU``, ``CPU``)."""
    return NotImplementedError(
        f"Could not run '{name}' with arguments from the '{backend}' backend. This could be because the operator "
        "doesn't exist for this backend, or was omitted during the selective/custom build process (if using "
        "custom build).")


def strided_refusal(name: str):
    """A kernel that refuses every call with PyTorch's error for ``aten::name`` on the strided ``CPU`` backend
    (the ``cpu`` kernel of an op only a sparse or quantized tensor runs)."""
    def kernel(*args):
        raise backend_refusal(f"aten::{name}", "CPU")

    return kernel


_UNSUPPORTED = ("Could not run this operator with arguments from the 'SparseCPU' backend. This could be because "
                "the operator doesn't exist for this backend, or was omitted during the selective/custom build "
                "process (if using custom build).")


class SparseMeta:
    """What a sparse tensor holds where a strided one holds its ndarray: shape and dtype, no elements."""

    __slots__ = ("shape", "dtype", "ndim", "size", "itemsize")

    def __init__(self, shape: tuple, dtype: np.dtype) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)
        self.itemsize = self.dtype.itemsize

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_UNSUPPORTED)

    def __getattr__(self, name: str):
        raise TypeError(_UNSUPPORTED)


def linear_indices(indices: np.ndarray, sparse_shape: tuple) -> np.ndarray:
    """Row-major linear position of each column of ``indices`` within ``sparse_shape``."""
    if indices.shape[0] == 0:
        return np.zeros(indices.shape[1], dtype=np.int64)
    return np.ravel_multi_index(tuple(indices), tuple(sparse_shape)).astype(np.int64, copy=False)


def from_linear(lin: np.ndarray, sparse_shape: tuple) -> np.ndarray:
    """The ``(sparse_dim, n)`` indices of linear positions ``lin``."""
    if len(sparse_shape) == 0:
        return np.zeros((0, lin.shape[0]), dtype=np.int64)
    return np.stack(np.unravel_index(lin, tuple(sparse_shape))).astype(np.int64).reshape(len(sparse_shape), -1)


def coalesce_plan(indices: np.ndarray, sparse_shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The sorted unique indices and, for each original entry, the unique slot it sums into."""
    uniq, inverse = np.unique(linear_indices(indices, sparse_shape), return_inverse=True)
    return from_linear(uniq, sparse_shape), inverse.reshape(-1).astype(np.int64)


def check_indices(indices: np.ndarray, size: tuple) -> None:
    """PyTorch's ``check_invariants``: every index lies inside ``size``."""
    for d in range(indices.shape[0]):
        if indices.shape[1] == 0:
            break
        lo, hi = int(indices[d].min()), int(indices[d].max())
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{hi}")


def lookup(pattern: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted unique ``keys``, the slot of each ``pattern`` entry in ``keys`` and whether it is there."""
    pos = np.searchsorted(keys, pattern)
    pos = np.minimum(pos, max(len(keys) - 1, 0))
    found = (keys[pos] == pattern) if len(keys) else np.zeros(len(pattern), dtype=bool)
    return pos.astype(np.int64), found
