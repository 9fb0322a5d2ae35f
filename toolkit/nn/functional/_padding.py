"""``F.pad``: PyTorch's Python signature over the registry's ``pad`` op (constant, reflect, replicate, circular)."""

from __future__ import annotations

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["pad"]


def pad(input: Tensor, pad: list[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions (``pad`` lists the last dimension's (left, right) first).

    Example: ``F.pad(x, (1, 1, 2, 0), mode="reflect")`` pads W by 1 on each side and H by 2 on top.
    Negative entries crop.
    """
    return _api.pad(input, list(pad), mode, value)
