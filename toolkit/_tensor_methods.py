"""The Tensor's conversions and convenience constructors: methods that are not single ops.

Each one lands on registry ops (``_to_copy``, ``clone``, factories), so the
tracer and autograd see the ops, not these helpers. ``Tensor`` inherits them
from ``TensorConversions`` (toolkit/tensor.py).
"""

from __future__ import annotations

import numpy as np

from . import _dlpack_export
from ._core import dtypes as _dt
from ._core.device import as_device
from ._core.device import device as _device_cls
from ._core.from_data import to_array
from ._core.legacy_names import legacy_type, legacy_type_name
from ._core.tensor_base import TensorBase
from .ops import api
from .ops import runtime as _runtime


def _parse_to(args, kwargs):
    """Sort ``to``'s flexible arguments into (device, dtype, non_blocking, copy)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, TensorBase):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype) or a in (float, int, bool):
            dtype = _dt.as_dtype(a)
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            non_blocking = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got {type(a).__name__}")
    return (as_device(device) if device is not None else None), (_dt.as_dtype(dtype) if dtype is not None else None), non_blocking, copy




def copy_of_data(data, dtype, device, requires_grad: bool):
    """A new tensor holding a copy of ``data`` as ``dtype`` on ``device`` (None: the CPU), for ``toolkit.tensor``
    and ``Tensor.new_tensor``."""
    arr = to_array(data, dtype)
    t = _runtime.wrap(np.ascontiguousarray(arr) if arr.ndim else arr)
    if device is not None:
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _caster(dtype, name: str):
    def cast(self, memory_format=None):
        return self.to(dtype)

    cast.__name__ = name
    cast.__qualname__ = f"Tensor.{name}"
    cast.__doc__ = f"``self.to({dtype})``"
    return cast


def _new(factory, name: str):
    def new(self, *size, dtype=None, device=None, requires_grad: bool = False, **kw):
        return factory(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad, **kw)

    new.__name__ = name
    new.__qualname__ = f"Tensor.{name}"
    new.__doc__ = f"``{factory.__name__}(*size)`` with this tensor's dtype and device unless given."
    return new


class TensorConversions(TensorBase):
    """Conversions (``to``, ``type``, ``float``...), ``new_*`` constructors, ``T``/``mT``, DLPack export."""

    __slots__ = ()

    def to(self, *args, **kwargs):
        """Return ``self`` when nothing changes, else a copy with the new device and/or dtype (differentiable)."""
        device, dtype, non_blocking, copy = _parse_to(args, dict(kwargs))
        same_dev = device is None or device == self.device or (device.type == self.device.type and device.index is None)
        same_dt = dtype is None or dtype is self.dtype
        if same_dev and same_dt and not copy:
            return self
        return api._to_copy(self, dtype=dtype, device=None if same_dev else device, non_blocking=non_blocking)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """With no argument, the type string (``'torch.FloatTensor'``); with a dtype, type or string, a conversion."""
        if dtype is None:
            return legacy_type_name(self).replace("toolkit.", "torch.")
        legacy = legacy_type(dtype)
        if legacy is not None:
            d, dev = legacy
            return self.to(dev, d) if dev != self.device.type else self.to(d)
        if isinstance(dtype, str):
            raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype=dtype)

    def contiguous(self, memory_format=None):
        return self if self.is_contiguous() else api.clone(self)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None):
        d = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
        return self.to(d, non_blocking=non_blocking)

    float = _caster(_dt.float32, "float")
    double = _caster(_dt.float64, "double")
    half = _caster(_dt.float16, "half")
    long = _caster(_dt.int64, "long")
    int = _caster(_dt.int32, "int")
    short = _caster(_dt.int16, "short")
    char = _caster(_dt.int8, "char")
    byte = _caster(_dt.uint8, "byte")
    bool = _caster(_dt.bool, "bool")

    def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False):
        """A copy of ``data`` with this tensor's dtype and device unless given."""
        return copy_of_data(data, _dt.as_dtype(dtype) if dtype is not None else self.dtype, device or self.device,
                            requires_grad)

    new_zeros = _new(api.zeros, "new_zeros")
    new_ones = _new(api.ones, "new_ones")
    new_empty = _new(api.empty, "new_empty")

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False):
        return api.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                        requires_grad=requires_grad)

    def is_inference(self) -> bool:
        return bool(self._extra and self._extra.get("inference"))

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    @property
    def T(self):
        if self.ndim <= 2:
            return api.t(self) if self.ndim == 2 else self
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    def where(self, condition, other):
        """``self.where(condition, other)`` is ``where(condition, self, other)``."""
        return api.where(condition, self, other)

    __dlpack__ = _dlpack_export.dlpack
    __dlpack_device__ = _dlpack_export.dlpack_device
