"""Nested Python data (numbers, lists, tuples, numpy arrays, tensors) to a numpy array, with PyTorch's dtype rules.

``toolkit.tensor(data)``, ``Tensor.new_tensor(data)`` and the legacy constructor
``Tensor(data)`` all read data this way: the dtype inferred as PyTorch infers it,
and the checks PyTorch makes of Python ints stored into integer dtypes.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .tensor_base import TensorBase

# Called with the function's name ("tensor", "as_tensor", "from_numpy") when a tensor is made from data while a
# tracer listens (toolkit.jit warns that the data becomes a constant).
CREATION_HOOKS: list = []

def infer_dtype(data) -> _dt.dtype:
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
    if isinstance(x, TensorBase):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return _dt.from_numpy_dtype(x.dtype)
    if isinstance(x, bool):
        return _dt.bool
    if isinstance(x, int):
        return _dt.int64
    if isinstance(x, float):
        return _dt.get_default_dtype()
    if isinstance(x, complex):
        return _dt.get_default_dtype().to_complex()
    raise TypeError(f"tensor(): Could not infer dtype of {type(x).__name__}")


def _scan_kind(data) -> str:
    stack, kind = [data], "b"
    seen_any = False
    while stack:
        x = stack.pop()
        if isinstance(x, TensorBase):
            seen_any = True
            k = x._data.dtype.kind
            kind = _max_kind(kind, k if k in "fc" else "i" if k in "iu" else "b")
        elif isinstance(x, np.ndarray):
            seen_any = True
            k = x.dtype.kind
            kind = _max_kind(kind, k if k in "fc" else "i" if k in "iu" else "b")
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (bool, np.bool_)):
            seen_any = True
        elif isinstance(x, (int, np.integer)):
            seen_any = True
            kind = _max_kind(kind, "i")
        elif isinstance(x, (float, np.floating)):
            seen_any = True
            kind = _max_kind(kind, "f")
        elif isinstance(x, (complex, np.complexfloating)):
            seen_any = True
            kind = "c"
        else:
            raise TypeError(f"tensor(): Could not infer dtype of {type(x).__name__}")
    return kind if seen_any else "f"


def _max_kind(a: str, b: str) -> str:
    order = "bifc"
    return a if order.index(a) >= order.index(b) else b


def to_array(data, dtype: _dt.dtype) -> np.ndarray:
    if isinstance(data, TensorBase):
        return np.array(data._data, dtype=dtype.np)
    if isinstance(data, (list, tuple)):
        data = _unwrap_nested(data)
    try:
        if dtype.is_floating_point or dtype.is_complex or not _has_float(data):
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
    return _scan_kind(data) in "fc"


def _unwrap_nested(data):
    if isinstance(data, TensorBase):
        if data._data.size != 1 and data._data.ndim == 0:
            return data._data
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(x) for x in data]
    return data
