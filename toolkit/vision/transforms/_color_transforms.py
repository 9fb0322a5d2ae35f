"""Color transform classes: ``ColorJitter``, ``Grayscale``, ``RandomGrayscale``, as torchvision's."""

from __future__ import annotations

import numbers

from ...ops.api import empty, rand, randperm
from . import functional as F
from ._base import _Transform

__all__ = ["ColorJitter", "Grayscale", "RandomGrayscale"]


class ColorJitter(_Transform):
    """Random brightness, contrast, saturation and hue changes, applied in a random order.

    Each of ``brightness``/``contrast``/``saturation`` is ``x`` (a factor drawn from ``[max(0, 1 - x), 1 + x]``)
    or ``(min, max)``; ``hue`` is ``x`` (from ``[-x, x]``, ``x <= 0.5``) or ``(min, max)``.
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0) -> None:
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name: str, center: float = 1, bound=(0, float("inf")), clip_first_on_zero: bool = True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """The order (a permutation of 0..3) and the factors (``None`` for an adjustment that is off)."""
        fn_idx = randperm(4)
        b = None if brightness is None else float(empty(1).uniform_(brightness[0], brightness[1]))
        c = None if contrast is None else float(empty(1).uniform_(contrast[0], contrast[1]))
        s = None if saturation is None else float(empty(1).uniform_(saturation[0], saturation[1]))
        h = None if hue is None else float(empty(1).uniform_(hue[0], hue[1]))
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class Grayscale(_Transform):
    """To grayscale with 1 or 3 output channels."""

    def __init__(self, num_output_channels: int = 1) -> None:
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(_Transform):
    """To grayscale with probability ``p``, keeping the number of channels."""

    def __init__(self, p: float = 0.1) -> None:
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if bool(rand(1) < self.p):
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"
