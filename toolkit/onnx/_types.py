"""Dtype maps between toolkit and ONNX: ``TensorProto`` element types by toolkit dtype and back.

The numbers are ONNX's ``TensorProto.DataType`` enum, written out so that this module (and the lowerings
that ask it) never import onnx; ``tests/onnx`` checks them against ``onnx.TensorProto``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt

# TensorProto.DataType values (onnx/onnx.proto).
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = 10, 11, 12, 13, 14, 15, 16

_BY_NAME = {"float32": FLOAT, "float64": DOUBLE, "float16": FLOAT16, "bfloat16": BFLOAT16, "uint8": UINT8,
            "int8": INT8, "int16": INT16, "int32": INT32, "int64": INT64, "bool": BOOL,
            "complex64": COMPLEX64, "complex128": COMPLEX128}
_BY_CODE = {code: name for name, code in _BY_NAME.items()}


def onnx_type(dtype) -> int:
    """The ``TensorProto`` element type of a toolkit dtype (or a numpy dtype)."""
    name = dtype.name if hasattr(dtype, "name") else np.dtype(dtype).name
    if name not in _BY_NAME:
        raise TypeError(f"ONNX has no element type for {dtype}")
    return _BY_NAME[name]


def toolkit_dtype(code: int):
    """The toolkit dtype of a ``TensorProto`` element type."""
    return getattr(_dt, _BY_CODE[code])


def numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype toolkit stores ``dtype`` as (bfloat16 has none: it is written as float32 data)."""
    return np.dtype("float32" if dtype.name == "bfloat16" else dtype.name)


def constant_dtype(value, dtype=None):
    """The toolkit dtype a Python constant becomes: ``dtype`` if given, else PyTorch's default for the value
    (bool, int64, the default float dtype) or a numpy array's own dtype."""
    if dtype is not None:
        return dtype
    if isinstance(value, np.ndarray | np.generic):
        return getattr(_dt, value.dtype.name)
    if isinstance(value, list | tuple):
        values = list(np.ravel(np.array(value, dtype=object)))
        if not values:
            return _dt.int64
        kinds = {_dt.scalar_category(v) for v in values}
        return _dt.scalar_default_dtype({_dt.BOOL: True, _dt.INT: 1, _dt.FLOAT: 1.0}[max(kinds)])
    return _dt.scalar_default_dtype(value)


def wrapped_number_dtype(value, tensor_dtypes) -> object:
    """The dtype a Python number takes beside tensors of ``tensor_dtypes`` (PyTorch's wrapped numbers: the
    tensors' dtype unless the number is of a higher category, ``x_int + 0.5`` computing in float)."""
    known = [d for d in tensor_dtypes if d is not None]
    if not known:
        return _dt.scalar_default_dtype(value)
    return _dt.result_type_from(known, (), (value,))

