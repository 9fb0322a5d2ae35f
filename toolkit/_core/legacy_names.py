"""The legacy tensor type names (``FloatTensor``, ``torch.cuda.LongTensor``...) and the dtypes they stand for.

Seed-era code names types by these strings and classes: ``x.type()`` returns
one, ``x.type('torch.DoubleTensor')`` converts by one, and autograd's
version-check error names a tensor by one, as PyTorch's do.
"""

from __future__ import annotations

from . import dtypes as _dt

#: legacy class name -> dtype
DTYPES = {
    "FloatTensor": _dt.float32, "DoubleTensor": _dt.float64, "HalfTensor": _dt.float16, "LongTensor": _dt.int64,
    "IntTensor": _dt.int32, "ShortTensor": _dt.int16, "CharTensor": _dt.int8, "ByteTensor": _dt.uint8,
    "BoolTensor": _dt.bool,
}
_BY_DTYPE = {**{d.name: name for name, d in DTYPES.items()}, "bfloat16": "BFloat16Tensor",
             "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def legacy_type_name(t) -> str:
    """The legacy type of tensor ``t``, such as ``'toolkit.cuda.FloatTensor'``."""
    prefix = "toolkit.cuda." if t.is_cuda else "toolkit."
    return prefix + _BY_DTYPE.get(t.dtype.name, "Tensor")


def legacy_type(obj):
    """The (dtype, device type) that a legacy type class (``toolkit.FloatTensor``) or type string names, or None."""
    if isinstance(obj, type) and isinstance(getattr(obj, "dtype", None), _dt.dtype) and hasattr(obj, "device_type"):
        return obj.dtype, obj.device_type
    if isinstance(obj, str):
        s = obj.replace("toolkit.", "torch.")
        device = "cuda" if s.startswith("torch.cuda.") else "cpu"
        name = s.rsplit(".", 1)[-1]
        if name in DTYPES:
            return DTYPES[name], device
    return None
