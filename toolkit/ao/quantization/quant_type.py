"""``QuantType``: which kind of quantization a module gets (dynamic, static, quantization-aware training, weight
only), an ``IntEnum`` whose values match PyTorch's C++ enum so the numbers stored in saved configurations agree."""

from __future__ import annotations

import enum

__all__ = ["QuantType"]


class QuantType(enum.IntEnum):
    """The quantization kinds, numbered as PyTorch numbers them::

        >>> QuantType.QAT, int(QuantType.STATIC)
        (<QuantType.QAT: 2>, 1)
    """

    DYNAMIC = 0
    STATIC = 1
    QAT = 2
    WEIGHT_ONLY = 3


_quant_type_to_str = {
    QuantType.STATIC: "static",
    QuantType.DYNAMIC: "dynamic",
    QuantType.QAT: "qat",
    QuantType.WEIGHT_ONLY: "weight_only",
}


def _get_quant_type_to_str(quant_type: QuantType) -> str:
    """The lower-case name configurations use for ``quant_type`` (``"static"``, ``"qat"``...)."""
    return _quant_type_to_str[quant_type]


def _quant_type_from_str(name: str) -> QuantType:
    """The ``QuantType`` a configuration's lower-case name stands for."""
    for quant_type, text in _quant_type_to_str.items():
        if name == text:
            return quant_type
    raise ValueError(f"Unknown QuantType name '{name}'")
