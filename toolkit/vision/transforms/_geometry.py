"""Geometric transform classes: ``Pad``, ``RandomResizedCrop``, ``RandomVerticalFlip``, as torchvision's.

Random choices draw from toolkit's default generator in torchvision's order, so a seeded pipeline repeats.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

from ...factories import tensor
from ...ops.api import empty, rand, randint
from . import functional as F
from ._base import _setup_size, _Transform
from .functional import InterpolationMode

__all__ = ["Pad", "RandomResizedCrop", "RandomVerticalFlip"]


class Pad(_Transform):
    """Pad every border by ``padding`` (an int, ``(lr, tb)`` or ``(l, t, r, b)``) with ``fill`` or a mode."""

    def __init__(self, padding, fill=0, padding_mode: str = "constant") -> None:
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError(
                f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple"
            )
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class RandomVerticalFlip(_Transform):
    """Flip top to bottom with probability ``p`` (one ``rand(1)`` draw per call)."""

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def forward(self, img):
        if bool(rand(1) < self.p):
            return F.vflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomResizedCrop(_Transform):
    """Crop a random area fraction in ``scale`` with aspect ratio in ``ratio`` (log-uniform), resized to ``size``.

    Ten tries at a crop that fits, then a central crop clamped to ``ratio``, as torchvision.
    """

    def __init__(self, size, scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0), interpolation=InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.interpolation = F._interpolation(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale: Sequence[float], ratio: Sequence[float]) -> tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random crop."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = tensor(ratio).log()
        for _ in range(10):
            target_area = area * empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = empty(1).uniform_(float(log_ratio[0]), float(log_ratio[1])).exp().item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = randint(0, height - h + 1, size=(1,)).item()
                j = randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")
