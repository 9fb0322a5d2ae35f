"""What the transform classes share: the callable base and the size argument's parsing."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

__all__ = ["_Transform", "_setup_size"]


def _setup_size(size, error_msg: str):
    """``(h, w)`` from an int, a 1-sequence or a 2-sequence."""
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


class _Transform:
    """Transforms are callables; ``forward`` is the same call, as on torchvision's ``nn.Module`` transforms."""

    def __call__(self, img):
        return self.forward(img)

    def forward(self, img):  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"
