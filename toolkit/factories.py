"""Tensors from Python data and numpy: ``tensor``, ``as_tensor``, ``from_numpy``.

Registry factories (``zeros``, ``arange``...) are ops; these are not, because
they take arbitrary Python data rather than sizes and values.

Both kinds honour ``toolkit.set_default_device``: a factory given no ``device``
makes its tensor on the default device, as PyTorch's factories do (the
dispatcher decides for registry factories, by each op's ``default_device``);
``*_like`` factories keep their input's device.
"""

from __future__ import annotations

import numpy as np

from ._core import dtypes as _dt
from ._core.device import CPU, DEFAULT_DEVICE, as_device
from ._core.from_data import CREATION_HOOKS, infer_dtype
from ._tensor_methods import copy_of_data
from .ops import api
from .tensor import Tensor, wrap


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
           names=None) -> Tensor:
    """Copy ``data`` (numbers, nested lists, numpy arrays, tensors) into a new tensor (with dimension ``names``)."""
    if CREATION_HOOKS:
        for h in CREATION_HOOKS:
            h("tensor")
    if isinstance(data, np.ndarray) and dtype is None:
        d = _dt.from_numpy_dtype(data.dtype)
    elif isinstance(data, Tensor) and dtype is None:
        d = data.dtype
    else:
        d = _dt.as_dtype(dtype) if dtype is not None else infer_dtype(data)
    t = copy_of_data(data, d, device if device is not None else DEFAULT_DEVICE.device, requires_grad)
    if names is not None:
        t.names = names
    return t


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a numpy array or tensor when dtype and device already match."""
    if CREATION_HOOKS:
        for h in CREATION_HOOKS:
            h("as_tensor")
    if device is None and not isinstance(data, Tensor):
        device = DEFAULT_DEVICE.device
    if isinstance(data, Tensor):
        t = data
        if dtype is not None and _dt.as_dtype(dtype) is not t.dtype:
            t = t.to(_dt.as_dtype(dtype))
        return t if device is None else t.to(as_device(device))
    if isinstance(data, np.ndarray) and (dtype is None or _dt.as_dtype(dtype).np == data.dtype):
        t = from_numpy(data)
        return t if device is None else t.to(as_device(device))
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (zero copies): changes to one show in the other."""
    if CREATION_HOOKS:
        for h in CREATION_HOOKS:
            h("from_numpy")
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dt.from_numpy_dtype(ndarray.dtype)  # raises for unsupported dtypes
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array with "
            "array.copy().) "
        )
    if not ndarray.dtype.isnative:
        raise TypeError("given numpy array has byte order different from the native byte order.")
    return wrap(ndarray, None, CPU)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return tensor(s, dtype=dtype or _dt.get_default_dtype(), device=device, requires_grad=requires_grad)




zeros = api.function_for("zeros")
ones = api.function_for("ones")
zeros_like = api.function_for("zeros_like")
ones_like = api.function_for("ones_like")
