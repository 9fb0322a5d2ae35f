"""Color adjustments of PIL images and tensors, as ``torchvision.transforms.functional``.

Tensors follow torchvision's tensor formulas (blending with a black, gray or mean image and clamping to the
dtype's range; hue through HSV), so the numbers match torchvision's; PIL images go through
``PIL.ImageEnhance`` as torchvision's PIL path does.
"""

from __future__ import annotations

import numpy as np

from ..._core.dtypes import float32
from ...ops.api import arange, stack, where, zeros_like
from ...tensor import Tensor

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation", "convert_image_dtype",
           "rgb_to_grayscale"]


def _channels(img: Tensor) -> int:
    return 1 if img.ndim == 2 else img.shape[-3]


def _assert_channels(img: Tensor, permitted: list[int]) -> None:
    c = _channels(img)
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found {c}")


def _max_value(img: Tensor) -> float:
    if img.is_floating_point():
        return 1.0
    return float(np.iinfo(img.dtype.np).max)


def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
    ratio = float(ratio)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, _max_value(img1)).to(img1.dtype)


def convert_image_dtype(image: Tensor, dtype=float32) -> Tensor:
    """Convert between integer images in ``[0, max]`` and float images in ``[0, 1]`` (uint8 and floats)."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        eps = 1e-3
        max_val = float(np.iinfo(dtype.np).max)
        return image.mul(max_val + 1.0 - eps).to(dtype)
    if dtype.is_floating_point:
        return image.to(dtype) / float(np.iinfo(image.dtype.np).max)
    raise NotImplementedError(f"convert_image_dtype from {image.dtype} to {dtype}")


def _is_tensor(img) -> bool:
    if isinstance(img, Tensor):
        return True
    from PIL import Image  # optional: PIL

    if not isinstance(img, Image.Image):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    return False


def rgb_to_grayscale(img, num_output_channels: int = 1):
    """Luma ``0.2989 R + 0.587 G + 0.114 B`` (ITU-R 601-2), repeated to ``num_output_channels`` (1 or 3)."""
    if not _is_tensor(img):
        if num_output_channels == 1:
            return img.convert("L")
        if num_output_channels == 3:
            from PIL import Image  # optional: PIL

            gray = np.array(img.convert("L"), dtype=np.uint8)
            return Image.fromarray(np.dstack([gray, gray, gray]))
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def adjust_brightness(img, brightness_factor: float):
    """Scale intensities by ``brightness_factor`` (0 gives black, 1 the original)."""
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    if not _is_tensor(img):
        from PIL import ImageEnhance  # optional: PIL

        return ImageEnhance.Brightness(img).enhance(brightness_factor)
    _assert_channels(img, [1, 3])
    return _blend(img, zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    """Blend with the mean gray level (0 gives a solid gray image, 1 the original)."""
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    if not _is_tensor(img):
        from PIL import ImageEnhance  # optional: PIL

        return ImageEnhance.Contrast(img).enhance(contrast_factor)
    _assert_channels(img, [3, 1])
    dtype = img.dtype if img.is_floating_point() else float32
    gray = rgb_to_grayscale(img) if _channels(img) == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    """Blend with the grayscale image (0 gives gray, 1 the original, 2 doubles the saturation)."""
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    if not _is_tensor(img):
        from PIL import ImageEnhance  # optional: PIL

        return ImageEnhance.Color(img).enhance(saturation_factor)
    _assert_channels(img, [1, 3])
    if _channels(img) == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img: Tensor) -> Tensor:
    r, g, b = img.unbind(dim=-3)
    maxc = img.max(dim=-3).values
    minc = img.min(dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = maxc.new_ones(maxc.shape)
    s = cr / where(eqc, ones, maxc)
    cr_divisor = where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = ((hr + hg + hb) / 6.0 + 1.0).fmod(1.0)
    return stack((h, s, maxc), dim=-3)


def _hsv2rgb(img: Tensor) -> Tensor:
    h, s, v = img.unbind(dim=-3)
    i = (h * 6.0).floor()
    f = (h * 6.0) - i
    i = i.int() % 6
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    mask = (i.unsqueeze(dim=-3) == arange(6).view(-1, 1, 1)).to(img.dtype)  # one-hot sextant, (..., 6, H, W)
    a1 = stack((v, q, p, p, t, v), dim=-3)
    a2 = stack((t, v, v, q, p, p), dim=-3)
    a3 = stack((p, p, t, v, v, q), dim=-3)
    return stack([(mask * a).sum(dim=-3) for a in (a1, a2, a3)], dim=-3)


def adjust_hue(img, hue_factor: float):
    """Shift the hue by ``hue_factor`` turns of the color wheel, in ``[-0.5, 0.5]``."""
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not _is_tensor(img):
        from PIL import Image  # optional: PIL

        if img.mode in {"L", "1", "I", "F"}:
            return img
        h, s, v = img.convert("HSV").split()
        np_h = np.array(h, dtype=np.uint8)
        with np.errstate(over="ignore"):
            np_h += np.int8(hue_factor * 255).astype(np.uint8)
        return Image.merge("HSV", (Image.fromarray(np_h), s, v)).convert(img.mode)
    _assert_channels(img, [1, 3])
    if _channels(img) == 1:
        return img
    orig_dtype = img.dtype
    h, s, v = _rgb2hsv(convert_image_dtype(img, float32)).unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    return convert_image_dtype(_hsv2rgb(stack((h, s, v), dim=-3)), orig_dtype)
