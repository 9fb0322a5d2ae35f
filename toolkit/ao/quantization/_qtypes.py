"""The quantized dtypes (``quint8``, ``qint8``, ``qint32``) and quantization schemes the observers name (the
core's objects), grouped the way observers ask about them, with the integer range of each dtype."""

from __future__ import annotations

from ..._core.dtypes import qint8, qint32, quint4x2, quint8  # noqa: F401
from ..._core.qscheme import (  # noqa: F401
    per_channel_affine,
    per_channel_affine_float_qparams,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
)

PER_TENSOR = (per_tensor_affine, per_tensor_symmetric)
PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)
SYMMETRIC = (per_tensor_symmetric, per_channel_symmetric)

# The integer range of each dtype an observer may target (PyTorch's iinfo of the quantized dtypes).
_RANGES = {"qint8": (-128, 127), "int8": (-128, 127), "quint8": (0, 255), "uint8": (0, 255),
           "quint4x2": (0, 15),
           "qint32": (-(2 ** 31), 2 ** 31 - 1), "int32": (-(2 ** 31), 2 ** 31 - 1),
           "int16": (-(2 ** 15), 2 ** 15 - 1), "uint16": (0, 2 ** 16 - 1)}


def name_of(dtype) -> str:
    """``qint8`` for ``toolkit.qint8`` (core dtype or stand-in) and ``int8`` for ``toolkit.int8``."""
    return getattr(dtype, "name", str(dtype).rsplit(".", 1)[-1])


def allowed(dtype) -> bool:
    """Whether observers can target ``dtype``."""
    return name_of(dtype) in _RANGES


def int_range(dtype) -> tuple[int, int]:
    """``(min, max)`` of ``dtype``'s integer values."""
    return _RANGES[name_of(dtype)]
