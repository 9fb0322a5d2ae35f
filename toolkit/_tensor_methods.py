"""Tensor methods that are not single ops: conversions and convenience constructors.

Each one lands on registry ops (``_to_copy``, ``clone``, factories), so the
tracer and autograd see the ops, not these helpers.
"""

from __future__ import annotations

from ._core import dtypes as _dt
from ._core.device import as_device
from ._core.device import device as _device_cls
from .ops import api
from .tensor import Tensor


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
        if isinstance(a, Tensor):
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


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """Return ``self`` when nothing changes, else a copy with the new device and/or dtype (differentiable)."""
    device, dtype, non_blocking, copy = _parse_to(args, dict(kwargs))
    same_dev = device is None or device == self.device or (device.type == self.device.type and device.index is None)
    same_dt = dtype is None or dtype is self.dtype
    if same_dev and same_dt and not copy:
        return self
    return api._to_copy(self, dtype=dtype, device=None if same_dev else device, non_blocking=non_blocking)


def type_(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """With no argument, the type string (``'torch.FloatTensor'``); with a dtype, type or string, a conversion."""
    if dtype is None:
        from .autograd.saved import legacy_type_name

        return legacy_type_name(self).replace("toolkit.", "torch.")
    from ._legacy import legacy_type

    legacy = legacy_type(dtype)
    if legacy is not None:
        d, dev = legacy
        return to(self, dev, d) if dev != self.device.type else to(self, d)
    if isinstance(dtype, str):
        raise ValueError(f"invalid type: '{dtype}'")
    return to(self, dtype=dtype)


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    return self if self.is_contiguous() else api.clone(self)


def cpu(self: Tensor, memory_format=None) -> Tensor:
    return to(self, "cpu")


def cuda(self: Tensor, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
    d = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
    return to(self, d, non_blocking=non_blocking)


def _caster(dtype):
    def cast(self: Tensor, memory_format=None) -> Tensor:
        return to(self, dtype)

    cast.__name__ = dtype.name
    cast.__doc__ = f"``self.to({dtype})``"
    return cast


def _new(factory):
    def new(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False, **kw):
        return factory(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad, **kw)

    return new


def new_tensor(self: Tensor, data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    from .factories import tensor

    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return api.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)


def is_inference(self: Tensor) -> bool:
    return bool(self._extra and self._extra.get("inference"))


def get_device(self: Tensor) -> int:
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


@property
def T(self: Tensor) -> Tensor:
    if self.ndim <= 2:
        return api.t(self) if self.ndim == 2 else self
    return self.permute(*reversed(range(self.ndim)))


@property
def mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return self.transpose(-2, -1)


def where(self: Tensor, condition, other) -> Tensor:
    """``self.where(condition, other)`` is ``where(condition, self, other)``."""
    return api.where(condition, self, other)


def install() -> None:
    """Attach these methods to Tensor (after the registry's methods are bound)."""
    methods = dict(
        to=to, type=type_, contiguous=contiguous, cpu=cpu, cuda=cuda, new_tensor=new_tensor,
        new_zeros=_new(api.zeros), new_ones=_new(api.ones), new_empty=_new(api.empty), new_full=new_full,
        is_inference=is_inference, get_device=get_device, T=T, mT=mT, where=where,
        float=_caster(_dt.float32), double=_caster(_dt.float64), half=_caster(_dt.float16),
        long=_caster(_dt.int64), int=_caster(_dt.int32), short=_caster(_dt.int16), char=_caster(_dt.int8),
        byte=_caster(_dt.uint8), bool=_caster(_dt.bool),
    )
    from .dlpack import dlpack, dlpack_device

    methods.update(__dlpack__=dlpack, __dlpack_device__=dlpack_device)
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
