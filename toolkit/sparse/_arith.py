"""The sparse COO kernels of the registry's arithmetic ops: sums, products, negation, transposes, reductions.

Each is registered under the ``"sparse_cpu"`` dispatch key of the op it computes (``toolkit.add``,
``Tensor.add`` and ``+`` all reach it through the dispatcher), takes the call's bound arguments as they are,
and computes new values with registered dense ops (so autograd follows them) and new indices with numpy.
What PyTorch refuses on the ``SparseCPU`` backend is refused with the same words::

    (s + s).to_dense()        # sparse + sparse stays sparse
    toolkit.add(d, s)         # a dense result
"""

from __future__ import annotations

import numbers

import numpy as np

import toolkit
from toolkit._core.shape import wrap_dim, wrap_dims
from toolkit.ops import registry as R
from toolkit.ops import sparse_coo as _k
from toolkit.tensor import Tensor

from ._coo import SparseTensor, build, values_at, values_of


def sparse_kernel(*names: str):
    """Register the decorated function as the ``"sparse_cpu"`` kernel of every overload of each op named."""
    def deco(fn):
        for name in names:
            for o in R.overloads(name):
                o.kernel("sparse_cpu")(fn)
        return fn

    return deco


def _check_same_size(name: str, a: Tensor, b: Tensor) -> None:
    if a.shape != b.shape:
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(a.shape)} while other has size {list(b.shape)} (FYI: {name} for sparse tensors "
                           "does not support broadcasting)")


def _is_scalar(other) -> bool:
    return isinstance(other, (numbers.Number, np.number)) or (
        isinstance(other, Tensor) and other.dim() == 0 and not other.is_sparse)


def _sparse_add(self: SparseTensor, other: SparseTensor, alpha) -> SparseTensor:
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


@sparse_kernel("add")
def add(self, other, alpha=1) -> Tensor:
    """``self + alpha * other``: sparse for two sparse tensors, dense for a dense ``self`` (``dense + sparse``);
    a sparse ``self`` with a dense ``other`` is refused, as PyTorch refuses it."""
    if not self.is_sparse:
        d = other.to_dense()
        return self + (d * alpha if alpha != 1 else d)
    if not (isinstance(other, Tensor) and other.is_sparse):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    return _sparse_add(self, other, alpha)


@sparse_kernel("sub")
def sub(self, other, alpha=1) -> Tensor:
    """``self - alpha * other`` (``add`` with ``-alpha``)."""
    return add(self, other, -alpha)


@sparse_kernel("mul")
def mul(self, other) -> SparseTensor:
    """Elementwise product of a sparse tensor with a number, a dense tensor of the same shape or a sparse one:
    sparse, in either order."""
    if not self.is_sparse:
        self, other = other, self
    vals = values_of(self)
    if _is_scalar(other):
        return build(self._sp_indices, vals * other, self.shape, self._sp_coalesced)
    _check_same_size("mul", self, other)
    if not other.is_sparse:
        picked = values_at(other, self._sp_indices, tuple(self.shape))
        return build(self._sp_indices, vals * picked, self.shape, self._sp_coalesced)
    if not (self._sp_coalesced and other._sp_coalesced):
        # PyTorch keeps the pattern of the operand with fewer entries, zeros where the other has none.
        small, large = (other, self) if other._nnz() < self._nnz() else (self, other)
        picked = values_at(large, small._sp_indices, tuple(self.shape))
        return build(small._sp_indices, values_of(small) * picked, self.shape, small._sp_coalesced)
    shape = self._sparse_shape()
    la, lb = _k.linear_indices(self._sp_indices, shape), _k.linear_indices(other._sp_indices, shape)
    common, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
    va = vals.index_select(0, toolkit.from_numpy(ia.astype(np.int64)))
    vb = values_of(other).index_select(0, toolkit.from_numpy(ib.astype(np.int64)))
    return build(_k.from_linear(common, shape), va * vb, self.shape, True)


@sparse_kernel("div")
def div(self, other, rounding_mode=None) -> SparseTensor:
    """A sparse tensor divided by a number or a 0-d dense tensor: the pattern kept."""
    if not (self.is_sparse and _is_scalar(other)):
        raise _k.backend_refusal("aten::div.Tensor", "SparseCPU")
    vals = values_of(self)
    out = vals.div(other, rounding_mode=rounding_mode) if rounding_mode else vals / other
    return build(self._sp_indices, out, self.shape, self._sp_coalesced)


@sparse_kernel("neg")
def neg(self: SparseTensor) -> SparseTensor:
    return build(self._sp_indices, -values_of(self), self.shape, self._sp_coalesced)


# Elementwise ops PyTorch runs on sparse tensors value by value (declared beside each op with
# ``runs_on_sparse_values``): the tensor keeps its pattern and maps its (coalesced) values.
def _values_wise(name: str):
    def kernel(self: SparseTensor, *args) -> SparseTensor:
        s = self.coalesce()
        return build(s._sp_indices, getattr(values_of(s), name)(*args), s.shape, True)

    kernel.__name__ = kernel.__qualname__ = f"sparse_{name}"
    kernel.__doc__ = f"``{name}`` of a sparse tensor: its pattern, ``{name}`` of its values."
    return kernel


for _name in sorted({o.name for o in R.all_ops() if o.sparse_values_wise}):
    sparse_kernel(_name)(_values_wise(_name))


@sparse_kernel("transpose")
def transpose(self: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """Swap two sparse dims (their index rows); PyTorch refuses a sparse dim with a dense one."""
    d0, d1 = wrap_dim(dim0, self.dim()), wrap_dim(dim1, self.dim())
    sd = self.sparse_dim()
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


@sparse_kernel("t")
def t(self: SparseTensor) -> SparseTensor:
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                           f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
    return self if self.dim() < 2 else transpose(self, 0, 1)


@R.get("_sparse_sum.dim_dtype").kernel("sparse_cpu")
def sparse_sum(input: SparseTensor, dim=None, dtype=None) -> Tensor:
    """``toolkit.sparse.sum``: all elements (a 0-d dense tensor), or over ``dim``: sparse while sparse dims
    remain, dense when every sparse dim is summed."""
    vals = values_of(input)
    if dtype is not None:
        vals = vals.to(dtype)
    if dim is None:
        return vals.sum()
    n, sd = input.dim(), input.sparse_dim()
    dims = sorted(wrap_dims(dim, n))
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        vals = vals.sum(dense_dims)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return vals.sum(0)
    shape = tuple(s for d, s in enumerate(input.shape) if d not in dims)
    return build(input._sp_indices[keep], vals, shape, False).coalesce()


R.get("_sparse_sum").kernel("sparse_cpu")(sparse_sum)
R.get("_sparse_sum.dim").kernel("sparse_cpu")(sparse_sum)


@R.get("_sparse_sum.dtype").kernel("sparse_cpu")
def _sparse_sum_dtype(input: SparseTensor, dtype) -> Tensor:
    return sparse_sum(input, None, dtype)


@sparse_kernel("sum")
def _sum(self: SparseTensor, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    if keepdim:
        raise RuntimeError("sum: keepdim is not supported for sparse tensors")
    return sparse_sum(self, dim, dtype)


@sparse_kernel("reshape")
def _reshape(self: SparseTensor, shape) -> Tensor:
    raise RuntimeError("reshape is not implemented for sparse tensors")
