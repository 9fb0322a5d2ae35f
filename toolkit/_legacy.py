"""Legacy tensor types (``toolkit.FloatTensor``...) so seed-era code runs unchanged.

``x.type(toolkit.FloatTensor)`` converts, ``toolkit.FloatTensor(2, 3)`` allocates,
and ``isinstance(x, toolkit.FloatTensor)`` checks dtype (and device), as in PyTorch.
``toolkit.cuda.FloatTensor`` and the rest allocate on the GPU; where there is
none they raise the TypeError PyTorch raises without CUDA.
"""

from __future__ import annotations

from . import cuda
from ._core.legacy_names import DTYPES
from ._core.tensor_base import TensorBase
from .factories import tensor
from .ops import api


class _LegacyTensorMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TensorBase) and obj.dtype is cls.dtype and obj.device.type == cls.device_type

    def __call__(cls, *args, **kwargs):
        if cls.device_type == "cuda" and not cuda.is_available():
            raise TypeError(f"type toolkit.cuda.{cls.__name__} not available. CUDA is not available: numba.cuda "
                            "finds no GPU")
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


CPU_TYPES = {name: _make(name, d, "cpu") for name, d in DTYPES.items()}
CUDA_TYPES = {name: _make(name, d, "cuda") for name, d in DTYPES.items()}
