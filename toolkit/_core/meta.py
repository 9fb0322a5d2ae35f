"""Tensor metadata without data: what meta rules read and return.

Eager dispatch hands real tensors to meta rules (they have the same
attributes), and the JIT hands its tensor types; both get ``TensorMeta`` back.
"""

from __future__ import annotations

from .device import CPU


class TensorMeta:
    """Shape, dtype and device of a tensor that need not exist yet."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, shape, dtype, device=CPU):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"TensorMeta(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TensorMeta)
            and self.shape == other.shape
            and self.dtype is other.dtype
            and self.device == other.device
        )

    __hash__ = None
