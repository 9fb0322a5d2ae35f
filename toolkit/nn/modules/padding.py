"""Padding layers (reflection, replication, zero, constant, circular) over 1-d, 2-d and 3-d inputs.

Each is ``F.pad`` with a stored padding tuple, laid out as PyTorch's: an int pads every side,
a tuple lists (left, right[, top, bottom[, front, back]]).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


def _pad_tuple(padding: int | Sequence[int], n: int) -> tuple[int, ...]:
    """An int becomes ``2 * n`` copies of itself; a sequence is kept as a tuple."""
    if isinstance(padding, (list, tuple)):
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    """``F.pad(input, self.padding, mode)``; subclasses fix the mode and the number of padded dims."""

    __constants__ = ["padding"]
    _mode = "constant"
    _ndim = 1

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _pad_tuple(padding, self._ndim)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input: Tensor) -> None:
        dims = (self._ndim + 1, self._ndim + 2)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim with wrapped-around values."""

    _ndim = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims with wrapped-around values."""

    _ndim = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dims with wrapped-around values."""

    _ndim = 3


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant."""

    _ndim = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with a constant."""

    _ndim = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with a constant."""

    _ndim = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its reflection (the edge not repeated)."""

    _ndim = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dims with their reflection."""

    _ndim = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last three dims with their reflection."""

    _ndim = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values."""

    _ndim = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dims by repeating their edge values."""

    _ndim = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last three dims by repeating their edge values."""

    _ndim = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros."""

    _ndim = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last two dims with zeros."""

    _ndim = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last three dims with zeros."""

    _ndim = 3
