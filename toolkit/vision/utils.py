"""``make_grid`` and ``save_image``: a batch of images tiled into one, as ``torchvision.utils``."""

from __future__ import annotations

import math
import os
from typing import IO

from ..autograd import no_grad
from ..ops.api import cat, stack
from ..tensor import Tensor

__all__ = ["make_grid", "save_image"]


def _normalize_(img: Tensor, low: float, high: float) -> None:
    img.clamp_(min=low, max=high)
    img.sub_(low).div_(max(high - low, 1e-5))


def _normalize_range_(t: Tensor, value_range: tuple[float, float] | None) -> None:
    if value_range is not None:
        _normalize_(t, value_range[0], value_range[1])
    else:
        _normalize_(t, float(t.min()), float(t.max()))


@no_grad()
def make_grid(tensor: Tensor | list[Tensor], nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: tuple[float, float] | None = None, scale_each: bool = False,
              pad_value: float = 0.0) -> Tensor:
    """Tile a ``(B, C, H, W)`` batch (or a list of ``(C, H, W)`` images) into one ``(C, H', W')`` image,
    ``nrow`` images per row with ``padding`` pixels of ``pad_value`` around each.

    One-channel images become three-channel. ``normalize`` shifts and scales to ``[0, 1]`` using
    ``value_range`` (clamping to it first) or the data's min and max, per image when ``scale_each``.
    """
    if not isinstance(tensor, Tensor):
        if isinstance(tensor, list):
            for t in tensor:
                if not isinstance(t, Tensor):
                    raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if isinstance(tensor, list):
        tensor = stack(tensor, dim=0)
    if tensor.dim() == 2:  # a single image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # a single image
        if tensor.size(0) == 1:
            tensor = cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = cat((tensor, tensor, tensor), 1)
    if normalize is True:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        if scale_each is True:
            for i in range(tensor.size(0)):
                _normalize_range_(tensor[i], value_range)
        else:
            _normalize_range_(tensor, value_range)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


@no_grad()
def save_image(tensor: Tensor | list[Tensor], fp: str | os.PathLike | IO[bytes], format: str | None = None,
               **kwargs) -> None:
    """Write ``make_grid(tensor, **kwargs)`` as an image file; values in ``[0, 1]`` map to ``0..255``
    (rounded to nearest), and ``format`` overrides the one the file name implies."""
    from PIL import Image  # optional: PIL

    grid = make_grid(tensor, **kwargs)
    ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).byte().numpy()
    Image.fromarray(ndarr).save(fp, format=format)
