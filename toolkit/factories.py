"""Tensors from Python data and numpy: ``tensor``, ``as_tensor``, ``from_numpy``.

Registry factories (``zeros``, ``arange``...) are ops; these are not, because
they take arbitrary Python data rather than sizes and values.
"""

from __future__ import annotations

import numpy as np

from ._core import dtypes as _dt
from ._core.device import CPU, as_device
from .ops import api
from .tensor import Tensor, wrap

# Called with the function's name ("tensor", "as_tensor", "from_numpy") while a tracer listens (toolkit.jit).
CREATION_HOOKS: list = []


def _infer_dtype(data) -> _dt.dtype:
    """PyTorch's inference: numpy scalars/arrays and tensors keep their dtype, Python bools -> bool,
    ints -> int64, floats -> default dtype; a sequence promotes its items' dtypes (empty -> default)."""
    result = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        d = _item_dtype(x)
        result = d if result is None else _dt.promote_types(result, d)
    return _dt.get_default_dtype() if result is None else result


def _item_dtype(x) -> _dt.dtype:
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind == "c":
            raise TypeError("tensor(): complex numbers are not supported")
        return _dt.from_numpy_dtype(x.dtype)
    if isinstance(x, bool):
        return _dt.bool
    if isinstance(x, int):
        return _dt.int64
    if isinstance(x, float):
        return _dt.get_default_dtype()
    if isinstance(x, complex):
        raise TypeError("tensor(): complex numbers are not supported")
    raise TypeError(f"tensor(): Could not infer dtype of {type(x).__name__}")


def _scan_kind(data) -> str:
    stack, kind = [data], "b"
    seen_any = False
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            seen_any = True
            k = x._data.dtype.kind
            kind = _max_kind(kind, "f" if k == "f" else "i" if k in "iu" else "b")
        elif isinstance(x, np.ndarray):
            seen_any = True
            k = x.dtype.kind
            kind = _max_kind(kind, "f" if k == "f" else "i" if k in "iu" else "b")
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (bool, np.bool_)):
            seen_any = True
        elif isinstance(x, (int, np.integer)):
            seen_any = True
            kind = _max_kind(kind, "i")
        elif isinstance(x, (float, np.floating)):
            seen_any = True
            kind = "f"
        elif isinstance(x, complex):
            raise TypeError("tensor(): complex numbers are not supported")
        else:
            raise TypeError(f"tensor(): Could not infer dtype of {type(x).__name__}")
    return kind if seen_any else "f"


def _max_kind(a: str, b: str) -> str:
    order = "bif"
    return a if order.index(a) >= order.index(b) else b


def _to_array(data, dtype: _dt.dtype) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.array(data._data, dtype=dtype.np)
    if isinstance(data, (list, tuple)):
        data = _unwrap_nested(data)
    try:
        if dtype.is_floating_point or not _has_float(data):
            arr = np.array(data, dtype=dtype.np)
        else:
            if dtype is not _dt.bool:
                _check_ints(data, dtype)
            arr = np.array(np.array(data, dtype=np.float64), dtype=dtype.np)
    except OverflowError:
        if dtype.is_floating_point or dtype is _dt.bool:
            raise
        _check_ints(data, dtype)
        arr = np.array(np.array(data, dtype=np.int64), dtype=dtype.np)  # unsigned dtypes wrap negatives
    except ValueError as e:
        raise ValueError(f"tensor(): expected sequence of equal-length lists: {e}") from None
    if arr.dtype == object:
        raise TypeError("tensor(): could not convert the data to a tensor")
    return arr


def _check_ints(data, dtype: _dt.dtype) -> None:
    """PyTorch's checks of the Python ints stored into an integer dtype: each is read as a 64-bit integer
    (``ValueError`` beyond), then must fit the dtype; unsigned dtypes take negatives down to ``-max``, which
    wrap around (``tensor([-1], dtype=uint8)`` is 255)."""
    info = np.iinfo(dtype.np)
    low = -int(info.max) if info.min == 0 else int(info.min)
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, int) and not isinstance(x, bool):
            if not -(2**63) <= x < 2**63:
                raise ValueError("Overflow when unpacking long long")
            if not low <= x <= info.max:
                raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _has_float(data) -> bool:
    return _scan_kind(data) == "f"


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        if data._data.size != 1 and data._data.ndim == 0:
            return data._data
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Copy ``data`` (numbers, nested lists, numpy arrays, tensors) into a new tensor."""
    if CREATION_HOOKS:
        for h in CREATION_HOOKS:
            h("tensor")
    if isinstance(data, np.ndarray) and dtype is None:
        d = _dt.from_numpy_dtype(data.dtype)
    elif isinstance(data, Tensor) and dtype is None:
        d = data.dtype
    else:
        d = _dt.as_dtype(dtype) if dtype is not None else _infer_dtype(data)
    arr = _to_array(data, d)
    t = _to_device(wrap(np.ascontiguousarray(arr) if arr.ndim else arr, None, CPU), device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _to_device(t: Tensor, device) -> Tensor:
    dev = as_device(device)
    if dev.type == "cpu":
        return t
    return t.to(dev)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a numpy array or tensor when dtype and device already match."""
    if CREATION_HOOKS:
        for h in CREATION_HOOKS:
            h("as_tensor")
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


def _legacy_tensor_init(self: Tensor, data=None, *args, **kwargs) -> None:
    """``Tensor(2, 3)`` allocates; ``Tensor([1, 2])`` copies data as float32 (the legacy constructor)."""
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    if data is None:
        arr = np.empty((0,), dtype=_dt.get_default_dtype().np)
    elif isinstance(data, int) and not isinstance(data, bool):
        sizes = (data, *args)
        arr = np.zeros(tuple(int(s) for s in sizes), dtype=_dt.get_default_dtype().np)
    else:
        arr = _to_array(data, _dt.get_default_dtype())
    t = wrap(np.ascontiguousarray(arr), None, as_device(device))
    for slot in Tensor.__slots__:
        if slot != "__weakref__":
            setattr(self, slot, getattr(t, slot))


zeros = api.function_for("zeros")
ones = api.function_for("ones")
zeros_like = api.function_for("zeros_like")
ones_like = api.function_for("ones_like")
