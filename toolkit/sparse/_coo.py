"""The sparse COO tensor: a ``Tensor`` whose elements are an index array and a dense tensor of values.

Its ``_data`` is a ``SparseMeta`` (shape and dtype only), so everything a Tensor answers from metadata
(``shape``, ``dtype``, ``numel``, ``requires_grad_``) works unchanged and dense kernels refuse it. Values are
an ordinary tensor: every sparse op computes on them with registered dense ops, so autograd needs only two
bridges (``_ValuesOf``: a sparse tensor to its values; ``_FromValues``: values to a sparse tensor), and the
gradient that reaches a sparse leaf is sparse with the leaf's own pattern, as in PyTorch::

    s = toolkit.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3))
    s.to_dense()   # tensor([[0., 0., 3.], [4., 0., 0.]])
"""

from __future__ import annotations

import math

import numpy as np

import toolkit
from toolkit._core import layout_kinds as _layouts
from toolkit._core.storage import Storage
from toolkit.autograd import Function
from toolkit.autograd.grad_mode import LOCAL
from toolkit.ops import api
from toolkit.ops import registry as R
from toolkit.ops import sparse_coo as _k
from toolkit.tensor import Tensor

from .printing import sparse_repr

_new = object.__new__
# A new tensor's autograd slots: no grad, no history, not a view.
_NO_HISTORY = (("_requires_grad", False), ("grad_fn", None), ("_grad", None), ("_base", None), ("_view_chain", None),
               ("_output_nr", 0), ("_extra", None))


class SparseTensor(Tensor):
    """A tensor with layout ``toolkit.sparse_coo`` (``is_sparse`` is True)."""

    __slots__ = ("_sp_indices", "_sp_values", "_sp_coalesced")
    is_sparse = True
    _sparse_key = "sparse_cpu"  # the dispatcher runs ops' "sparse_cpu" kernels for it

    @property
    def layout(self):
        return _layouts.sparse_coo

    # ---------------------------------------------------------------- structure
    def sparse_dim(self) -> int:
        return int(self._sp_indices.shape[0])

    def dense_dim(self) -> int:
        return self._data.ndim - self.sparse_dim()

    def _nnz(self) -> int:
        return int(self._sp_indices.shape[1])

    def is_coalesced(self) -> bool:
        return self._sp_coalesced

    def _indices(self) -> Tensor:
        return toolkit.from_numpy(self._sp_indices)

    def _values(self) -> Tensor:
        return _values_of(self)

    def indices(self) -> Tensor:
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices()

    def values(self) -> Tensor:
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values()

    def smm(self, mat2: Tensor) -> SparseTensor:
        return api.smm(self, mat2)

    def _sparse_shape(self) -> tuple:
        return self._data.shape[:self.sparse_dim()]

    def _dense_shape(self) -> tuple:
        return self._data.shape[self.sparse_dim():]

    # ---------------------------------------------------------------- conversions
    def coalesce(self) -> SparseTensor:
        """Sorted unique indices, duplicate entries summed; a coalesced tensor is returned as it is."""
        return api.coalesce(self)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The strided tensor with the same elements (duplicates summed)."""
        return api.to_dense(self, dtype, masked_grad=masked_grad)

    def to_sparse(self, *args, **kwargs) -> SparseTensor:
        layout = kwargs.get("layout")
        if layout not in (None, _layouts.sparse_coo):
            raise RuntimeError(f"to_sparse: conversion from Sparse to {layout} is not implemented")
        return self

    to_sparse_coo = to_sparse

    def to(self, *args, **kwargs) -> SparseTensor:
        """Values converted as ``Tensor.to`` converts them (dtype, device); the pattern is kept."""
        vals = _values_of(self)
        moved = vals.to(*args, **kwargs)
        if moved is vals:
            return self
        return build(self._sp_indices, moved, self._data.shape, self._sp_coalesced)

    def cpu(self, memory_format=None) -> SparseTensor:
        return self.to("cpu")

    def double(self, memory_format=None) -> SparseTensor:
        return self.to(toolkit.float64)

    def float(self, memory_format=None) -> SparseTensor:
        return self.to(toolkit.float32)

    def _assign_sparse(self, other: SparseTensor) -> None:
        """Take ``other``'s entries and history (the dispatcher's in-place ops on a sparse tensor)."""
        self._sp_indices, self._sp_values, self._sp_coalesced = other._sp_indices, other._sp_values, \
            other._sp_coalesced
        self._data = other._data
        self._requires_grad, self.grad_fn, self._output_nr = other._requires_grad, other.grad_fn, other._output_nr

    def detach(self) -> SparseTensor:
        return make(self._sp_indices, self._sp_values.detach(), self._data.shape, self._sp_coalesced)

    @property
    def data(self) -> SparseTensor:
        return self.detach()

    def _is_view(self) -> bool:
        return False

    def __deepcopy__(self, memo):
        t = make(self._sp_indices.copy(), self._sp_values.detach().clone(), self._data.shape, self._sp_coalesced)
        t._requires_grad = self._requires_grad
        memo[id(self)] = t
        return t

    def __repr__(self, *, tensor_contents=None) -> str:
        return sparse_repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._sp_indices.copy(), self._sp_values.detach(), self._data.shape,
                           self._sp_coalesced, self._requires_grad))


def _rebuild(indices, values, size, coalesced, requires_grad):
    t = make(indices, values, size, coalesced)
    t._requires_grad = requires_grad
    return t


def make(indices: np.ndarray, values: Tensor, size: tuple, coalesced: bool) -> SparseTensor:
    """A sparse tensor over ``indices`` and ``values`` as they are, without autograd history."""
    t = _new(SparseTensor)
    t._data = _k.SparseMeta(size, values._data.dtype)
    t._storage = Storage(np.empty(0, dtype=values._data.dtype), values.device)
    for slot, blank in _NO_HISTORY:
        setattr(t, slot, blank)
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = bool(coalesced) or indices.shape[1] <= 1
    return t


class _ValuesOf(Function):
    """A sparse tensor's values; their gradient goes back as a sparse tensor with the same pattern."""

    @staticmethod
    def forward(ctx, sparse):
        ctx.pattern = (sparse._sp_indices, sparse._data.shape, sparse._sp_coalesced)
        return sparse._sp_values.detach()

    @staticmethod
    def backward(ctx, grad):
        indices, size, coalesced = ctx.pattern
        return make(indices, grad, size, coalesced)


class _FromValues(Function):
    """A sparse tensor made from values that require grad; its gradient (sparse or dense) is read back at the
    tensor's own indices."""

    @staticmethod
    def forward(ctx, values, indices, size, coalesced):
        ctx.pattern = (indices, tuple(size))
        return make(indices, values.detach(), size, coalesced)

    @staticmethod
    def backward(ctx, grad):
        indices, size = ctx.pattern
        return values_at(grad, indices, size), None, None, None


def values_at(grad: Tensor, indices: np.ndarray, size: tuple) -> Tensor:
    """The entries of ``grad`` (sparse or dense) at the positions ``indices`` (``sparse_mask``'s values)."""
    sparse_shape = size[:indices.shape[0]]
    lin = _k.linear_indices(indices, sparse_shape)
    if isinstance(grad, SparseTensor):
        if grad._sp_indices is indices:
            return _values_of(grad)
        g = grad.coalesce()
        pos, found = _k.lookup(lin, _k.linear_indices(g._sp_indices, sparse_shape))
        vals = _values_of(g)
        if len(pos) == 0 or vals.shape[0] == 0:
            return toolkit.zeros((len(lin), *size[indices.shape[0]:]), dtype=grad.dtype, device=grad.device)
        picked = vals.index_select(0, toolkit.from_numpy(pos))
        mask = toolkit.from_numpy(found).reshape((-1,) + (1,) * (picked.dim() - 1))
        return picked * mask
    flat = grad.reshape((math.prod(sparse_shape), *size[indices.shape[0]:]))
    return flat.index_select(0, toolkit.from_numpy(lin))


def _values_of(sparse: SparseTensor) -> Tensor:
    if sparse._requires_grad and LOCAL.grad_enabled:
        return _ValuesOf.apply(sparse)
    return sparse._sp_values


def build(indices: np.ndarray, values: Tensor, size: tuple, coalesced: bool) -> SparseTensor:
    """A sparse tensor over ``values``, linked to their autograd history when they have one."""
    if values._requires_grad and LOCAL.grad_enabled:
        return _FromValues.apply(values, indices, tuple(size), coalesced)
    return make(indices, values, size, coalesced)


values_of = _values_of



# ---------------------------------------------------------------- the "sparse_cpu" kernels of structural ops
@R.get("coalesce").kernel("sparse_cpu")
def _coalesce(self: SparseTensor) -> SparseTensor:
    if self._sp_coalesced:
        return self
    idx, inverse = _k.coalesce_plan(self._sp_indices, self._sparse_shape())
    vals = _values_of(self)
    summed = toolkit.zeros((idx.shape[1], *self._dense_shape()), dtype=vals.dtype, device=vals.device)
    summed = summed.index_add(0, toolkit.from_numpy(inverse), vals)
    return build(idx, summed, self._data.shape, True)


@R.get("to_dense").kernel("sparse_cpu")
def _to_dense(self: SparseTensor, dtype=None, masked_grad=None) -> Tensor:
    vals = _values_of(self)
    if dtype is not None:
        vals = vals.to(dtype)
    lin = _k.linear_indices(self._sp_indices, self._sparse_shape())
    flat = toolkit.zeros((math.prod(self._sparse_shape()), *self._dense_shape()), dtype=vals.dtype,
                         device=vals.device)
    return flat.index_add(0, toolkit.from_numpy(lin), vals).reshape(self._data.shape)


@R.get("clone").kernel("sparse_cpu")
def _clone(self: SparseTensor, memory_format=None) -> SparseTensor:
    return build(self._sp_indices.copy(), _values_of(self).clone(), self._data.shape, self._sp_coalesced)


@R.get("zero_").kernel("sparse_cpu")
def _zero_(self: SparseTensor) -> SparseTensor:
    """No entries left (``nnz`` 0), in place, as PyTorch zeroes a sparse tensor."""
    self._sp_indices = np.zeros((self.sparse_dim(), 0), dtype=np.int64)
    vals = self._sp_values
    self._sp_values = toolkit.zeros((0, *self._dense_shape()), dtype=vals.dtype, device=vals.device)
    self._sp_coalesced = True
    return self
