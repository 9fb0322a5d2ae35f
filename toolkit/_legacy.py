"""Legacy tensor types (``toolkit.FloatTensor``...) so seed-era code runs unchanged.

``x.type(toolkit.FloatTensor)`` converts, ``toolkit.FloatTensor(2, 3)`` allocates,
and ``isinstance(x, toolkit.FloatTensor)`` checks dtype, as in PyTorch.
"""

from __future__ import annotations

from ._core import dtypes as _dt


class _LegacyTensorMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        from .tensor import Tensor

        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls.device_type

    def __call__(cls, *args, **kwargs):
        from .factories import tensor
        from .ops import api

        if args and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return api.zeros(args, dtype=cls.dtype, device=cls.device_type)
        if len(args) == 1:
            return tensor(args[0], dtype=cls.dtype, device=cls.device_type)
        if not args:
            return api.empty((0,), dtype=cls.dtype, device=cls.device_type)
        raise TypeError(f"{cls.__name__}(): expected sizes or data, got {args!r}")

    def __repr__(cls) -> str:
        prefix = "toolkit.cuda." if cls.device_type == "cuda" else "toolkit."
        return f"<class '{prefix}{cls.__name__}'>"


def _make(name: str, dtype, device_type: str):
    return _LegacyTensorMeta(name, (), {"dtype": dtype, "device_type": device_type, "is_cuda": device_type == "cuda"})


_NAMES = {
    "FloatTensor": _dt.float32, "DoubleTensor": _dt.float64, "HalfTensor": _dt.float16, "LongTensor": _dt.int64,
    "IntTensor": _dt.int32, "ShortTensor": _dt.int16, "CharTensor": _dt.int8, "ByteTensor": _dt.uint8,
    "BoolTensor": _dt.bool,
}

CPU_TYPES = {name: _make(name, d, "cpu") for name, d in _NAMES.items()}
CUDA_TYPES = {name: _make(name, d, "cuda") for name, d in _NAMES.items()}


def legacy_type(obj):
    """The (dtype, device type) a legacy type class or type string names, or None."""
    if isinstance(obj, _LegacyTensorMeta):
        return obj.dtype, obj.device_type
    if isinstance(obj, str):
        s = obj.replace("toolkit.", "torch.")
        device = "cuda" if s.startswith("torch.cuda.") else "cpu"
        name = s.rsplit(".", 1)[-1]
        if name in _NAMES:
            return _NAMES[name], device
    return None
