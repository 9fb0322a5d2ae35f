"""The global names of PyTorch's checkpoints and the toolkit objects they stand for, in both directions.

``toolkit.save`` writes exactly the names ``torch.save`` writes (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``, ``torch.Size``, ...), so ``torch.load(path, weights_only=True)`` reads
toolkit's files; ``toolkit.load`` maps those names back onto toolkit's objects (:data:`TORCH_GLOBALS`).
PyTorch dtypes toolkit lacks (``bfloat16``, complex, quantized) still have their names here, so a file holding
them is refused with a message naming the dtype rather than as an unknown global.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any

from .._core import dtypes as _dt
from .._core import qscheme as _qs
from .._core.device import device
from .._core.shape import Size
from ..nn.parameter import Parameter
from ..tensor import Tensor
from . import rebuild
from .format import _Corrupt

#: PyTorch's legacy storage class per dtype name, as ``torch.save`` names a tensor's storage in its pickle.
STORAGE_CLASS = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage", "int64": "LongStorage",
    "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "bfloat16": "BFloat16Storage", "complex128": "ComplexDoubleStorage",
    "complex64": "ComplexFloatStorage", "qint8": "QInt8Storage", "qint32": "QInt32Storage",
    "quint8": "QUInt8Storage", "quint4x2": "QUInt4x2Storage", "quint2x4": "QUInt2x4Storage",
}
#: PyTorch dtypes beyond :data:`STORAGE_CLASS` that may name a tensor's dtype (``_rebuild_tensor_v3``).
_OTHER_DTYPES = ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                 "float8_e5m2fnuz", "float8_e8m0fnu", "complex32", "bits8", "bits16", "bits1x8", "bits2x4",
                 "bits4x2", "float4_e2m1fn_x2", *(f"uint{n}" for n in range(1, 8)), *(f"int{n}" for n in range(1, 8)))

UNTYPED_STORAGE = "torch.storage.UntypedStorage"
REBUILD_TENSOR_V2 = "torch._utils._rebuild_tensor_v2"
REBUILD_PARAMETER = "torch._utils._rebuild_parameter"
REBUILD_PARAMETER_WITH_STATE = "torch._utils._rebuild_parameter_with_state"
REBUILD_QTENSOR = "torch._utils._rebuild_qtensor"


class UnsupportedDtype:
    """A PyTorch dtype named in a file that toolkit has no equivalent of; using it says so."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def refuse(self) -> _Corrupt:
        return _Corrupt(f"the file holds the dtype torch.{self.name}, which toolkit does not support")


def storage_class_name(dt: _dt.dtype) -> str:
    """``torch.FloatStorage`` for float32: the global ``torch.save`` writes for a tensor's storage."""
    return f"torch.{STORAGE_CLASS[dt.name]}"


def _storage_types() -> dict[str, rebuild.StorageType]:
    out = {}
    for name, cls in STORAGE_CLASS.items():
        dt = _dt._NAMES.get(name)
        out[f"torch.{cls}"] = rebuild.StorageType(f"torch.{cls}", dt if dt is not None and dt.name == name else None)
    out[UNTYPED_STORAGE] = rebuild.StorageType(UNTYPED_STORAGE, _dt.uint8)
    return out


def _dtypes() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in (*STORAGE_CLASS, *_OTHER_DTYPES):
        dt = _dt._NAMES.get(name)
        out[f"torch.{name}"] = dt if dt is not None and dt.name == name else UnsupportedDtype(name)
    return out


def _unsupported_rebuilders() -> dict[str, Any]:
    kinds = {"_rebuild_sparse_tensor": "sparse tensors",
             "_rebuild_meta_tensor_no_storage": "meta tensors", "_rebuild_nested_tensor": "nested tensors",
             "_rebuild_wrapper_subclass": "tensor subclasses",
             "_rebuild_device_tensor_from_numpy": "tensors of a device without storages",
             "_rebuild_device_tensor_from_cpu_tensor": "tensors of a device without storages"}
    return {f"torch._utils.{name}": rebuild.unsupported(what) for name, what in kinds.items()}


#: Every global a PyTorch checkpoint may name for tensors, storages, dtypes and their containers, and what it
#: is in toolkit. These are what ``toolkit.load(..., weights_only=True)`` allows by default, besides the few
#: builtins in :mod:`.allowlist`.
TORCH_GLOBALS: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "torch.nn.parameter.Parameter": Parameter,
    "torch.Size": Size,
    "torch.Tensor": Tensor,
    "torch.device": device,
    "torch._utils._rebuild_tensor": rebuild.rebuild_tensor,
    REBUILD_TENSOR_V2: rebuild.rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": rebuild.rebuild_tensor_v3,
    REBUILD_PARAMETER: rebuild.rebuild_parameter,
    REBUILD_PARAMETER_WITH_STATE: rebuild.rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": rebuild.rebuild_from_type_v2,
    REBUILD_QTENSOR: rebuild.rebuild_qtensor,
    **{f"torch.{name}": scheme for name, scheme in _qs._NAMES.items()},
    **_unsupported_rebuilders(),
    **_storage_types(),
    **_dtypes(),
}
