"""``toolkit.sparse``: sparse COO tensors and the functions PyTorch's ``torch.sparse`` offers on them.

A sparse tensor is a ``Tensor`` with layout ``toolkit.sparse_coo``; see ``toolkit/sparse/_coo.py``::

    s = toolkit.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3))
    toolkit.sparse.mm(s, toolkit.ones(3, 2))
"""

from __future__ import annotations

from toolkit.ops import sparse_coo as _k

from ._arith import addmm, dense_to_sparse, mm
from ._arith import sparse_sum as sum  # noqa: A001  (PyTorch's name)
from ._coo import SparseTensor
from ._csr import SparseCsrTensor, csr_from_coo, sparse_csr_tensor
from ._factories import sparse_coo_tensor
from ._softmax import hspmm, log_softmax, softmax

__all__ = ["addmm", "hspmm", "log_softmax", "mm", "softmax", "sum", "sparse_coo_tensor", "spmm", "smm",
           "sparse_csr_tensor", "SparseCsrTensor", "SparseTensor"]


def spmm(input, mat2):
    """``toolkit.spmm``: a sparse matrix times a dense one (``toolkit.sparse.mm``)."""
    return mm(input, mat2)


def smm(input, mat):
    """``toolkit.smm``: a sparse matrix times a dense one, a sparse result."""
    return mm(input, mat).to_sparse()


def _dense_to_csr(self, dense_dim=None):
    if self.dim() != 2:
        raise RuntimeError(f"to_sparse_csr: expected a 2-D tensor, got {self.dim()}-D")
    return csr_from_coo(dense_to_sparse(self))


_k.CONVERSIONS["to_sparse"] = dense_to_sparse
_k.CONVERSIONS["to_sparse_csr"] = _dense_to_csr
SparseTensor.to_sparse_csr = csr_from_coo
