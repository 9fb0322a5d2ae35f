"""``toolkit.sparse``: sparse COO tensors and the functions PyTorch's ``torch.sparse`` offers on them.

A sparse tensor is a ``Tensor`` with layout ``toolkit.sparse_coo``; see ``toolkit/sparse/_coo.py``. Its ops
are the registry's: the dispatcher runs their ``"sparse_cpu"`` kernels (registered by this package's
modules) for sparse arguments, so ``toolkit.mm(s, d)``, ``s @ d`` and ``toolkit.sparse.mm(s, d)`` are one
path, and the functions here are thin calls to registry ops::

    s = toolkit.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3))
    toolkit.sparse.mm(s, toolkit.ones(3, 2))
"""

from __future__ import annotations

from toolkit.ops import api
from toolkit.ops import sparse_coo as _k
from toolkit.tensor import Tensor

from . import _arith, _products  # noqa: F401  (register the sparse kernels)
from ._coo import SparseTensor
from ._csr import SparseCsrTensor, csr_from_coo, sparse_csr_tensor
from ._factories import dense_to_sparse, sparse_coo_tensor
from ._softmax import log_softmax, softmax

__all__ = ["addmm", "hspmm", "log_softmax", "mm", "softmax", "sum", "sparse_coo_tensor", "spmm", "smm",
           "sparse_csr_tensor", "SparseCsrTensor", "SparseTensor"]


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``toolkit.sparse.mm`` (``aten::_sparse_mm``): a sparse matrix times a dense or sparse one."""
    return api._sparse_mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (``toolkit.sparse.addmm``)."""
    return api.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:  # noqa: A001  (PyTorch's name)
    """``toolkit.sparse.sum`` (``aten::_sparse_sum``): every element, or over ``dim``."""
    if dim is None:
        return api._sparse_sum(input) if dtype is None else api._sparse_sum(input, dtype=dtype)
    return api._sparse_sum(input, dim) if dtype is None else api._sparse_sum(input, dim, dtype=dtype)


def hspmm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``toolkit.hspmm``: sparse times dense, the product's nonzero rows as a hybrid sparse tensor."""
    return api.hspmm(mat1, mat2)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``toolkit.spmm``: a sparse matrix times a dense one (``aten::mm``)."""
    return api.mm(input, mat2)


def smm(input: Tensor, mat: Tensor) -> Tensor:
    """``toolkit.smm``: a sparse matrix times a dense one, a sparse result."""
    return api.smm(input, mat)


def _dense_to_csr(self, dense_dim=None):
    if self.dim() != 2:
        raise RuntimeError(f"to_sparse_csr: expected a 2-D tensor, got {self.dim()}-D")
    return csr_from_coo(dense_to_sparse(self))


_k.CONVERSIONS["to_sparse"] = dense_to_sparse
_k.CONVERSIONS["to_sparse_csr"] = _dense_to_csr
SparseTensor.to_sparse_csr = csr_from_coo
