"""Sparse CSR matrices (``layout=toolkit.sparse_csr``): compressed rows over a coalesced COO tensor.

A CSR tensor here is 2-D with scalar values. It keeps the equivalent coalesced COO tensor and answers
``crow_indices``/``col_indices`` from it, so its products, conversions and gradients are the COO ones::

    c = toolkit.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
    c.crow_indices()   # tensor([0, 1, 2])
"""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit._core import layout_kinds as _layouts
from toolkit._core.storage import Storage
from toolkit.ops import api
from toolkit.ops import registry as R
from toolkit.ops import sparse_coo as _k
from toolkit.tensor import Tensor

from . import _products
from ._coo import _NO_HISTORY, SparseTensor, _to_dense, build, values_of

_new = object.__new__


class SparseCsrTensor(Tensor):
    """A 2-D tensor with layout ``toolkit.sparse_csr`` (``is_sparse_csr`` is True)."""

    __slots__ = ("_coo",)
    is_sparse_csr = True
    _sparse_key = "sparse_csr_cpu"  # the dispatcher runs ops' "sparse_csr_cpu" kernels for it

    @property
    def layout(self):
        return _layouts.sparse_csr

    def crow_indices(self) -> Tensor:
        rows = self._coo._sp_indices[0]
        counts = np.bincount(rows, minlength=self._data.shape[0])
        return toolkit.from_numpy(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    def col_indices(self) -> Tensor:
        return toolkit.from_numpy(self._coo._sp_indices[1].copy())

    def values(self) -> Tensor:
        return values_of(self._coo)

    def _nnz(self) -> int:
        return self._coo._nnz()

    def sparse_dim(self) -> int:
        return 2

    def dense_dim(self) -> int:
        return 0

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        return api.to_dense(self, dtype, masked_grad=masked_grad)

    def to_sparse(self, *args, **kwargs) -> SparseTensor:
        return self._coo

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None) -> SparseCsrTensor:
        return self

    def detach(self) -> SparseCsrTensor:
        return csr_from_coo(self._coo.detach())

    def __repr__(self, *, tensor_contents=None) -> str:
        vals = repr(self._coo._sp_values.detach()).replace("\n", "\n" + " " * 14)
        tail = f", size={tuple(self.shape)}, nnz={self._nnz()},\n       layout=toolkit.sparse_csr"
        if self.requires_grad and self.grad_fn is None:
            tail += ", requires_grad=True"
        return (f"tensor(crow_indices={self.crow_indices()!r},\n       col_indices={self.col_indices()!r},\n"
                f"       values={vals}{tail})")


def csr_from_coo(coo: SparseTensor) -> SparseCsrTensor:
    """The CSR form of a 2-D COO tensor with scalar values (coalesced on the way)."""
    if coo.sparse_dim() != 2 or coo.dense_dim() != 0:
        raise RuntimeError(f"to_sparse_csr: expected a 2-D sparse tensor without dense dims, got sparse_dim="
                           f"{coo.sparse_dim()} and dense_dim={coo.dense_dim()}")
    coo = coo.coalesce()
    t = _new(SparseCsrTensor)
    t._data = _k.SparseMeta(coo.shape, coo._data.dtype)
    t._storage = Storage(np.empty(0, dtype=coo._data.dtype), coo.device)
    for slot, blank in _NO_HISTORY:
        setattr(t, slot, blank)
    t._coo = coo
    t._requires_grad = coo._requires_grad
    return t


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None) -> SparseCsrTensor:
    """A CSR matrix from compressed row pointers, column indices and values (2-D, scalar values)."""
    crow = np.asarray(crow_indices.detach().numpy() if isinstance(crow_indices, Tensor) else crow_indices,
                      dtype=np.int64)
    col = np.asarray(col_indices.detach().numpy() if isinstance(col_indices, Tensor) else col_indices,
                     dtype=np.int64)
    vals = values if isinstance(values, Tensor) else toolkit.tensor(values, dtype=dtype)
    if dtype is not None:
        vals = vals.to(dtype)
    if device is not None:
        vals = vals.to(device)
    if crow.ndim != 1 or col.ndim != 1 or vals.dim() != 1:
        raise RuntimeError("sparse_csr_tensor: expected 1-D crow_indices, col_indices and values (batched or "
                           "hybrid CSR tensors are not supported)")
    if check_invariants and (crow[0] != 0 or crow[-1] != col.shape[0] or np.any(np.diff(crow) < 0)):
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied." if crow[-1] != col.shape[0] else
                           "`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if col.shape[0] != vals.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but got "
                           f"{col.shape[0]} and {vals.shape[0]}")
    rows = np.repeat(np.arange(crow.shape[0] - 1, dtype=np.int64), np.diff(crow))
    if size is None:
        size = (crow.shape[0] - 1, int(col.max()) + 1 if col.size else 0)
    coo = build(np.stack([rows, col]), vals, tuple(int(s) for s in size), False)
    if requires_grad:
        raise RuntimeError("sparse_csr_tensor: a CSR leaf that requires grad is not supported; build it from "
                           "values that require grad (their gradient is dense)")
    return csr_from_coo(coo)


# ---------------------------------------------------------------- the "sparse_csr_cpu" kernels: through the COO form
def _as_coo(x):
    return x._coo if isinstance(x, SparseCsrTensor) else x


def _through_coo(kernel):
    def csr_kernel(*args):
        return kernel(*(_as_coo(a) for a in args))

    csr_kernel.__name__ = csr_kernel.__qualname__ = f"csr_{kernel.__name__}"
    csr_kernel.__doc__ = f"``{kernel.__name__}`` of a CSR matrix: its coalesced COO form's."
    return csr_kernel


for _name, _kernel in (("mm", _products.mm), ("matmul", _products.matmul), ("addmm", _products.addmm),
                       ("_sparse_mm", _products.mm), ("to_dense", _to_dense)):
    for _o in R.overloads(_name):
        _o.kernel("sparse_csr_cpu")(_through_coo(_kernel))
