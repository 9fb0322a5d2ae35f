"""Uninitialized tensors with a chosen memory layout: ``empty_strided``, ``empty_permuted`` and
``Tensor.new_empty_strided``.

Each is an ``empty`` buffer of the storage the layout needs, seen through the
asked strides (an ``as_strided`` view, detached so the result is a plain leaf,
as PyTorch's are); ``empty_permuted`` is ``empty_strided`` with the strides of
its dims' memory order. Being compositions of ``empty``, they run on
every device, and ``set_default_device`` reaches them through it.
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.device import CPU
from .._core.meta import TensorMeta
from .._core.shape import contiguous_strides
from . import api
from .factory_indices import TENSOR_OPTIONS
from .registry import FACTORY, op


def _storage_size(size: tuple, stride: tuple) -> int:
    """Elements of storage a tensor of ``size`` and ``stride`` reaches (PyTorch's computeStorageNbytes)."""
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    _check_sizes(size)
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if 0 in size:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(size, stride))


def _check_sizes(size: tuple) -> None:
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")


def _leaf(t, requires_grad: bool):
    """The view as a tensor of its own (no ``_base``), as PyTorch's factories return."""
    return t.detach().requires_grad_(requires_grad)


@op(f"empty_strided(SymInt[] size, SymInt[] stride, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY, out=False, method=False,
    composite=True)
def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Uninitialized memory of ``size`` laid out with ``stride`` (in elements): the storage holds exactly the
    elements those strides reach, so strides may overlap (0) or leave gaps.

    >>> toolkit.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    n = _storage_size(size, stride)
    if tuple(stride) == contiguous_strides(size, 1) and n:  # (numpy gives an empty array zero strides)
        return api.empty(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                         requires_grad=requires_grad)
    flat = api.empty((n,), dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return _leaf(api.as_strided(flat, size, stride), requires_grad)


@empty_strided.meta_rule
def _(size, stride, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    _storage_size(size, stride)
    return TensorMeta(size, dtype or _dt.get_default_dtype(), device or CPU)


def _physical_order(size: tuple, physical_layout: tuple) -> tuple:
    """``physical_layout``, checked as PyTorch's empty_permuted checks it."""
    dim = len(size)
    if dim != len(physical_layout):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {dim} is not equal to len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, p in enumerate(physical_layout):
        if not 0 <= p < dim:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {dim - 1}, but got {p} at "
                               f"index {i}).  NB: negative dims not currently supported; file an issue if you "
                               "want it.")
        if p in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(p)
    _check_sizes(tuple(size[p] for p in physical_layout))
    return tuple(physical_layout)


@op(f"empty_permuted(SymInt[] size, int[] physical_layout, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY, out=False,
    method=False, composite=True)
def empty_permuted(size, physical_layout, dtype=None, layout=None, device=None, pin_memory=None,
                   requires_grad=False):
    """Uninitialized memory of ``size`` whose dims lie in memory in the order ``physical_layout`` (outermost
    first): ``empty_permuted((2, 3, 4, 5), (0, 2, 3, 1))`` is a channels-last NCHW tensor.

    >>> toolkit.empty_permuted((2, 3), (1, 0)).stride()
    (1, 2)
    """
    return api.empty_strided(size, _permuted_strides(size, physical_layout), dtype=dtype, layout=layout,
                             device=device, pin_memory=pin_memory, requires_grad=requires_grad)


def _permuted_strides(size: tuple, physical_layout: tuple) -> tuple:
    """Row-major strides of the dims in ``physical_layout``'s order (a 0 size counts as 1, as in PyTorch)."""
    strides, step = [0] * len(size), 1
    for p in reversed(_physical_order(size, physical_layout)):
        strides[p] = step
        step *= max(size[p], 1)
    return tuple(strides)


@empty_permuted.meta_rule
def _(size, physical_layout, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    _physical_order(size, physical_layout)
    return TensorMeta(size, dtype or _dt.get_default_dtype(), device or CPU)


@op(f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY,
    function=False, composite=True, differentiable=False)
def new_empty_strided(self, size, stride, dtype=None, layout=None, device=None, pin_memory=None,
                      requires_grad=False):
    """``empty_strided`` with this tensor's dtype and device unless given.

    >>> toolkit.ones(()).new_empty_strided((2, 3), (3, 1)).shape
    toolkit.Size([2, 3])
    """
    return api.empty_strided(size, stride, dtype=dtype or self.dtype, layout=layout, device=device or self.device,
                             pin_memory=pin_memory, requires_grad=requires_grad)


@new_empty_strided.meta_rule
def _(self, size, stride, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    _storage_size(size, stride)
    return TensorMeta(size, dtype or self.dtype, device or self.device)


# ---------------------------------------------------------------------------------------------
# Samples: only empty results, as the contents of uninitialized memory cannot be compared
# ---------------------------------------------------------------------------------------------
@empty_strided.sample_inputs
def _(rng):
    yield ((0, 3), (3, 1)), {}
    yield ((2, 0), (1, 2)), {"dtype": _dt.int32}
    yield ((3, 0, 2), (0, 1, 0)), {"dtype": _dt.float64}


@empty_permuted.sample_inputs
def _(rng):
    yield ((0, 3), (1, 0)), {}
    yield ((2, 0, 4), (2, 0, 1)), {"dtype": _dt.int64}


@new_empty_strided.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), (0, 2), (1, 0)), {}
    yield (rng.standard_normal(3), (4, 0), (1, 4)), {"dtype": _dt.float64}
