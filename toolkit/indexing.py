"""``Tensor.__getitem__`` and ``Tensor.__setitem__``: Python indices decomposed into registered ops.

As in PyTorch, basic indices become views (``select`` for ints, ``slice`` for
slices, ``unsqueeze`` for ``None``) and all advanced indices (integer and
mask tensors, lists, numpy arrays, Python bools) one ``index`` op, so autograd
and the tracer see registry ops only. Assignment writes through the view with
``copy_`` or, with advanced indices, ``index_put_``::

    x[1:, ::2]            # slice, slice: a view
    x[..., None]          # unsqueeze: a view
    x[[0, 1], [1, 2]]     # index: a copy
    grad_h[h < 0] = 0     # index_put_
"""

from __future__ import annotations

import warnings

import numpy as np

from ._core import dtypes as _dt
from ._core.tensor_base import TensorBase
from .ops import api, registry
from .ops import runtime as _rt
from .ops.indexing import INDEX_DTYPE_ERROR

_SELECT = registry.get("select")
_SLICE = registry.get("slice")
_UNSQUEEZE = registry.get("unsqueeze")
_INDEX = registry.get("index")
_INDEX_PUT_ = registry.get("index_put_")
_COPY_ = registry.get("copy_")
_VIEW = registry.get("view")
_CLONE = registry.get("clone")
_NUMBER = (int, float, bool, complex, np.number, np.bool_)
_MASK_DTYPES = (_dt.bool, _dt.uint8)


def _index_error(e) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(e).__name__})"
    )


def _to_index_tensor(obj) -> TensorBase:
    """Lists and numpy arrays used as indices become tensors (ints int64, bools masks)."""
    a = np.asarray(obj)
    if a.dtype.kind == "b":
        return _rt.wrap(np.array(a))
    if a.size == 0 and a.dtype.kind == "f":
        return _rt.wrap(a.astype(np.int64))
    if a.dtype.kind in "iu" and isinstance(obj, (list, tuple)):
        return _rt.wrap(a.astype(np.int64))
    if a.dtype.kind in "iu" and a.dtype in _dt.FROM_NUMPY:
        return _rt.wrap(np.array(a))
    if a.dtype.kind in "iu":
        return _rt.wrap(a.astype(np.int64))
    raise IndexError(INDEX_DTYPE_ERROR)


def _sequence_as_tuple(seq: list) -> bool:
    """PyTorch's legacy rule: a list holding slices, ``...``, ``None``, sequences or tensors is a tuple."""
    for e in seq:
        if e is None or e is Ellipsis or isinstance(e, (slice, list, tuple, TensorBase, np.ndarray)):
            return True
    return False


def _normalize(idx) -> tuple:
    if type(idx) is tuple:
        return idx
    if isinstance(idx, list) and _sequence_as_tuple(idx):
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] instead of "
            "x[seq].", UserWarning, stacklevel=3
        )
        return tuple(idx)
    return (idx,)


def _prepare(items: tuple) -> tuple[list, int]:
    """Turn lists, ranges and arrays into tensors and count the dims the indices consume (``...`` excluded)."""
    out, specified, ellipsis = [], 0, False
    for e in items:
        if isinstance(e, (list, range, np.ndarray)):
            e = _to_index_tensor(list(e) if isinstance(e, range) else e)
        elif isinstance(e, (bool, np.bool_)) or e is None or e is Ellipsis:
            if e is Ellipsis:
                if ellipsis:
                    raise IndexError("an index can only have a single ellipsis ('...')")
                ellipsis = True
            out.append(e)
            continue
        if isinstance(e, TensorBase):
            if e.dtype in _MASK_DTYPES:
                specified += e.ndim
            else:
                specified += 1
        else:
            specified += 1
        out.append(e)
    return out, specified


def _apply(self: TensorBase, idx) -> tuple[TensorBase, list, bool]:
    """Apply basic indices as views; return (view, advanced index list for ``index``, copy_wanted)."""
    items, specified = _prepare(_normalize(idx))
    ndim = self._data.ndim
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    dim = 0  # dim of ``result`` the next index applies to
    real_dim = 0  # dim of ``self`` it applies to, for error messages
    adv: list = []  # aten::index's list: one entry per consumed dim of ``result`` (masks: one per mask)
    consumed = 0  # dims of ``result`` covered by ``adv`` so far
    copy_wanted = False

    def record(t: TensorBase, at: int, width: int):
        nonlocal consumed
        while consumed < at:
            adv.append(None)
            consumed += 1
        adv.append(t)
        consumed += width

    for e in items:
        if e is None:
            result = _rt.execute(_UNSQUEEZE, [result, dim])
            dim += 1
        elif e is Ellipsis:
            dim += ndim - specified
            real_dim += ndim - specified
        elif isinstance(e, (bool, np.bool_)):
            result = _rt.execute(_UNSQUEEZE, [result, dim])
            record(_rt.wrap(np.zeros(1 if e else 0, np.int64)), dim, 1)
            dim += 1
        elif isinstance(e, slice):
            result = _apply_slice(result, dim, e)
            dim += 1
            real_dim += 1
        elif isinstance(e, TensorBase):
            if e.ndim == 0 and e.dtype in _MASK_DTYPES:
                result = _rt.execute(_UNSQUEEZE, [result, dim])
                record(_rt.wrap(np.zeros(1 if e._data.item() else 0, np.int64)), dim, 1)
                dim += 1
            elif e.ndim == 0 and not e.dtype.is_floating_point:
                result = _select(result, dim, real_dim, int(e._data))
                copy_wanted = True  # PyTorch reads a 0-d index tensor into a copy, not a view
                real_dim += 1
            else:
                width = e.ndim if e.dtype in _MASK_DTYPES else 1
                record(e, dim, width)
                dim += width
                real_dim += width
        else:
            try:
                i = e.__index__()
            except (AttributeError, TypeError):
                raise _index_error(e) from None
            result = _select(result, dim, real_dim, i)
            real_dim += 1
    return result, adv, copy_wanted


def _select(result: TensorBase, dim: int, real_dim: int, i: int) -> TensorBase:
    shape = result._data.shape
    if not shape:
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
            "a 0-dim tensor to a number"
        )
    size = shape[dim]
    if i < -size or i >= size:
        raise IndexError(f"index {i} is out of bounds for dimension {real_dim} with size {size}")
    return _rt.execute(_SELECT, [result, dim, i])


def _bound(v):
    if v is None:
        return None
    try:
        return v.__index__()
    except (AttributeError, TypeError):
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None


def _apply_slice(result: TensorBase, dim: int, s: slice) -> TensorBase:
    start, stop, step = _bound(s.start), _bound(s.stop), _bound(s.step)
    if step is None:
        step = 1
    elif step == 0:
        raise ValueError("slice step cannot be zero")
    elif step < 0:
        raise ValueError("step must be greater than zero")
    shape = result._data.shape
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step == 1 and (start is None or start == 0) and (stop is None or stop >= shape[dim]):
        return result  # a full slice changes nothing, as in PyTorch
    return _rt.execute(_SLICE, [result, dim, start, stop, step])


def getitem(self: TensorBase, idx):
    """``self[idx]``: views for basic indices, one ``index`` op (a copy) for advanced ones."""
    t = type(idx)
    if t is int:
        return _select(self, 0, 0, idx)
    if t is slice and idx.step is None:
        return _apply_slice_or_alias(self, idx)
    result, adv, copy_wanted = _apply(self, idx)
    if adv:
        return _rt.execute(_INDEX, [result, _on_device(adv, result)])
    if result is self:
        return _rt.execute(_VIEW, [self, self._data.shape])  # an alias, as PyTorch's ``x[...]``
    if copy_wanted:
        return _rt.execute(_CLONE, [result, None])
    return result


def _on_device(adv: list, t: TensorBase) -> list:
    """Index tensors moved to ``t``'s device: PyTorch accepts CPU indices (and lists, bools) for a CUDA tensor."""
    if t.device.type == "cpu":
        return adv
    return [a.to(t.device) if a is not None and a.device.type == "cpu" else a for a in adv]


def _apply_slice_or_alias(self: TensorBase, idx: slice) -> TensorBase:
    r = _apply_slice(self, 0, idx)
    return _rt.execute(_VIEW, [self, self._data.shape]) if r is self else r


def _value_tensor(self: TensorBase, value) -> TensorBase:
    if isinstance(value, TensorBase):
        if value.dtype is not self.dtype:
            value = value.to(self.dtype)
        return value
    if isinstance(value, _NUMBER):
        try:
            v = _rt.wrap(np.array(_dt.real_scalar(value, self._data.dtype)).astype(self._data.dtype))
            return v if self.device.type == "cpu" else v.to(self.device)
        except OverflowError:
            raise RuntimeError(f"value cannot be converted to type {self.dtype} without overflow") from None
    raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}")


def _strip_leading_ones(v: TensorBase) -> TensorBase:
    """PyTorch drops a value's leading size-1 dims before broadcasting it into the target."""
    shape = v._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return v.reshape(shape[k:]) if k else v


def setitem(self: TensorBase, idx, value) -> None:
    """``self[idx] = value``: ``copy_`` into the view for basic indices, ``index_put_`` for advanced ones."""
    if type(idx) is int:
        target, adv = _select(self, 0, 0, idx), None
    else:
        target, adv, _ = _apply(self, idx)
    v = _strip_leading_ones(_value_tensor(self, value))
    if adv:
        _rt.execute(_INDEX_PUT_, [target, _on_device(adv, target), v, False])
    else:
        _rt.execute(_COPY_, [target, v, False])


def nonzero(input: TensorBase, *, out=None, as_tuple: bool = False):
    """Coordinates of nonzero elements: one row each, or with ``as_tuple`` one 1-D tensor per dim."""
    if out is not None:
        raise TypeError("nonzero(): 'out' is not supported")
    if not as_tuple:
        return api.nonzero(input)
    return api.nonzero_numpy(input)


class TensorIndexing(TensorBase):
    """``t[idx]``, ``t[idx] = value`` and ``t.nonzero(as_tuple=...)``, inherited by ``Tensor``."""

    __slots__ = ()
    __getitem__ = getitem
    __setitem__ = setitem
    nonzero = nonzero

    def __delitem__(self, index) -> None:
        """``del t[i]``: a tensor's size is fixed, so deleting elements is a TypeError, as in PyTorch."""
        raise TypeError("Tensor does not support deleting items")
