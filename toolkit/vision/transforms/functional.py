"""Functional image transforms, as ``torchvision.transforms.functional``: each works on a PIL image or a tensor.

Tensors are images shaped ``(..., C, H, W)``; crops, flips, padding, resizing and normalization on tensors
use toolkit ops, so they keep autograd. PIL images go through Pillow, as in torchvision.

Resizing a tensor with ``BILINEAR`` and ``antialias=True`` uses the triangle filter widened by the
downscale factor, which is what ``torch.nn.functional.interpolate(..., mode="bilinear", antialias=True)``
(torchvision's tensor path) and Pillow's ``BILINEAR`` compute; with ``antialias=False`` it is plain
``interpolate(..., mode="bilinear", align_corners=False)``. Integer tensors are resized in float32 and
rounded, as torchvision does.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from enum import Enum

import numpy as np

from ..._core.dtypes import float32, get_default_dtype
from ...factories import as_tensor, from_numpy, tensor
from ...ops.api import cat, full
from ...tensor import Tensor
from ._color import (
    adjust_brightness,
    adjust_contrast,
    adjust_hue,
    adjust_saturation,
    convert_image_dtype,
    rgb_to_grayscale,
)

__all__ = ["InterpolationMode", "adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation",
           "center_crop", "convert_image_dtype", "crop", "get_dimensions", "hflip", "normalize", "pad",
           "pil_to_tensor", "resize", "resized_crop", "rgb_to_grayscale", "to_grayscale", "to_pil_image",
           "to_tensor", "vflip"]


class InterpolationMode(Enum):
    """Interpolation modes, spelled as torchvision spells them."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_CODES = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0, InterpolationMode.LANCZOS: 1,
              InterpolationMode.BILINEAR: 2, InterpolationMode.BICUBIC: 3, InterpolationMode.BOX: 4,
              InterpolationMode.HAMMING: 5}
_FROM_INT = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
             4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interpolation(mode) -> InterpolationMode:
    if isinstance(mode, int) and not isinstance(mode, bool):
        if mode not in _FROM_INT:
            raise ValueError(f"Unknown interpolation code {mode}")
        return _FROM_INT[mode]
    if not isinstance(mode, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant")
    return mode


def _is_pil(img) -> bool:
    try:
        from PIL import Image  # optional: PIL
    except ImportError:  # pragma: no cover - Pillow is a dependency
        return False
    return isinstance(img, Image.Image)


def _check_img(img) -> None:
    if isinstance(img, Tensor):
        if img.ndim < 2:
            raise TypeError(f"Tensor is not a torch image (expected at least 2 dimensions, got {img.ndim})")
    elif not _is_pil(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img) -> list[int]:
    """``[channels, height, width]`` of a PIL image or a ``(..., C, H, W)`` tensor."""
    _check_img(img)
    if isinstance(img, Tensor):
        channels = 1 if img.ndim == 2 else img.shape[-3]
        return [channels, img.shape[-2], img.shape[-1]]
    width, height = img.size
    return [len(img.getbands()), height, width]


# ------------------------------------------------------------------------------------------------ conversion
def to_tensor(pic) -> Tensor:
    """A PIL image or HWC numpy array as a CHW tensor; uint8 data becomes float in [0, 1] (default dtype)."""
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        arr = np.ascontiguousarray(pic.transpose((2, 0, 1)))
    elif _is_pil(pic):
        np_type = {"I": np.int32, "I;16": np.int16, "F": np.float32}.get(pic.mode, np.uint8)
        arr = np.array(pic, np_type, copy=True)
        if pic.mode == "1":
            arr = 255 * arr
        arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
        arr = np.ascontiguousarray(arr.transpose((2, 0, 1)))
    else:
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if arr.dtype == np.uint8:
        fdt = get_default_dtype().np
        return from_numpy(arr.astype(fdt) / fdt.type(255))
    return from_numpy(arr)


def to_pil_image(pic, mode: str | None = None):
    """A CHW tensor or HWC numpy array as a PIL image; float tensors are scaled by 255 to uint8 (unless
    ``mode="F"``). The mode defaults from the channel count and dtype as in torchvision: 1 channel gives
    ``L`` (uint8), ``I;16`` (16-bit), ``I`` (int32) or ``F`` (float32); 2 ``LA``; 3 ``RGB``; 4 ``RGBA``."""
    from PIL import Image  # optional: PIL

    if isinstance(pic, Tensor):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.transpose(pic.detach().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = np.expand_dims(pic, 2)
        if pic.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
        npimg = pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    channels = npimg.shape[2]
    if channels == 1:
        npimg = npimg[:, :, 0]
        expected = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.uint16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {npimg.dtype}. Should be {expected}")
        mode = expected
    else:
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for {channels}D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = permitted[0]
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    height, width = npimg.shape[:2]
    if mode == "I;16":
        return Image.frombytes(mode, (width, height), np.ascontiguousarray(npimg, dtype="<u2").tobytes())
    if mode in ("I", "F"):
        return Image.fromarray(np.ascontiguousarray(npimg, dtype={"I": "<i4", "F": "<f4"}[mode]))
    return Image.frombytes(mode, (width, height), np.ascontiguousarray(npimg).tobytes())


def pil_to_tensor(pic) -> Tensor:
    """A PIL image as a CHW tensor of its own dtype, without scaling."""
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))


def normalize(tensor: Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> Tensor:
    """``(tensor - mean) / std`` per channel of a float ``(..., C, H, W)`` tensor."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(
            f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = {tensor.size()}"
        )
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean_t = as_tensor(mean, dtype=dtype)
    std_t = as_tensor(std, dtype=dtype)
    if bool((std_t == 0).any()):
        raise ValueError(f"std evaluates to zero after conversion to {dtype}, leading to division by zero.")
    if mean_t.ndim == 1:
        mean_t = mean_t.view(-1, 1, 1)
    if std_t.ndim == 1:
        std_t = std_t.view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)


# ------------------------------------------------------------------------------------------------ geometry
def hflip(img):
    """Flip left to right."""
    _check_img(img)
    if isinstance(img, Tensor):
        return img.flip(-1)
    from PIL import Image  # optional: PIL

    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    """Flip top to bottom."""
    _check_img(img)
    if isinstance(img, Tensor):
        return img.flip(-2)
    from PIL import Image  # optional: PIL

    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def to_grayscale(img, num_output_channels: int = 1):
    """A PIL image in grayscale (``rgb_to_grayscale`` for PIL images, torchvision's older name)."""
    if not _is_pil(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")
    return rgb_to_grayscale(img, num_output_channels)


def _parse_padding(padding) -> tuple[int, int, int, int]:
    """``(left, top, right, bottom)`` from an int or a sequence of 1, 2 or 4 ints."""
    if isinstance(padding, numbers.Number) and not isinstance(padding, bool):
        if not isinstance(padding, int):
            raise TypeError("Got inappropriate padding arg")
        return padding, padding, padding, padding
    if not isinstance(padding, (tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if len(padding) == 1:
        return (padding[0],) * 4
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    return tuple(padding)


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """Pad the borders; ``padding`` is an int, ``(lr, tb)`` or ``(left, top, right, bottom)``."""
    _check_img(img)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _parse_padding(padding)
    _, h, w = get_dimensions(img)
    if min(left, top, right, bottom) < 0:  # negative padding crops
        cl, ct, cr, cb = (-min(v, 0) for v in (left, top, right, bottom))
        img = crop(img, ct, cl, h - ct - cb, w - cl - cr)
        left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
    if isinstance(img, Tensor):
        return _pad_tensor(img, left, top, right, bottom, fill, padding_mode)
    return _pad_pil(img, left, top, right, bottom, fill, padding_mode)


def _pad_tensor(img: Tensor, left: int, top: int, right: int, bottom: int, fill, mode: str) -> Tensor:
    if not left and not top and not right and not bottom:
        return img
    if mode == "constant":
        if not isinstance(fill, (int, float)):
            raise TypeError(f"fill should be int or float for a tensor image, got {type(fill).__name__}")
        shape = list(img.shape)
        if left or right:
            parts = []
            if left:
                parts.append(full(shape[:-1] + [left], fill, dtype=img.dtype))
            parts.append(img)
            if right:
                parts.append(full(shape[:-1] + [right], fill, dtype=img.dtype))
            img = cat(parts, -1)
            shape = list(img.shape)
        if top or bottom:
            parts = []
            if top:
                parts.append(full(shape[:-2] + [top, shape[-1]], fill, dtype=img.dtype))
            parts.append(img)
            if bottom:
                parts.append(full(shape[:-2] + [bottom, shape[-1]], fill, dtype=img.dtype))
            img = cat(parts, -2)
        return img
    np_mode = "edge" if mode == "edge" else mode
    h, w = img.shape[-2], img.shape[-1]
    if mode == "reflect" and (max(left, right) >= w or max(top, bottom) >= h):
        raise RuntimeError(
            f"Padding size should be less than the corresponding input dimension, but got: padding ({left}, {right}) "
            f"at dimension {img.ndim - 1} and ({top}, {bottom}) at dimension {img.ndim - 2} of input {list(img.shape)}"
        )
    cols = np.pad(np.arange(w), (left, right), mode=np_mode)
    rows = np.pad(np.arange(h), (top, bottom), mode=np_mode)
    return img.index_select(-1, tensor(cols)).index_select(-2, tensor(rows))


def _pad_pil(img, left: int, top: int, right: int, bottom: int, fill, mode: str):
    from PIL import Image  # optional: PIL

    arr = np.asarray(img)
    if mode == "constant":
        out = np.empty((arr.shape[0] + top + bottom, arr.shape[1] + left + right) + arr.shape[2:], arr.dtype)
        out[...] = fill if arr.ndim == 3 or np.ndim(fill) == 0 else fill[0]
        out[top:top + arr.shape[0], left:left + arr.shape[1]] = arr
    else:
        widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
        out = np.pad(arr, widths, mode=mode)
    result = Image.fromarray(out)
    if img.mode == "P":  # padding acts on palette indices; the palette carries over
        result.putpalette(img.getpalette())
    return result


def crop(img, top: int, left: int, height: int, width: int):
    """The ``height`` x ``width`` region at ``(top, left)``; regions beyond the border are zero-filled."""
    _check_img(img)
    if not isinstance(img, Tensor):
        return img.crop((left, top, left + width, top + height))
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], ltrb, fill=0)
    return img[..., top:bottom, left:right]


def center_crop(img, output_size):
    """The central region of ``output_size`` (an int or ``(h, w)``), zero-padding images that are smaller."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


# ------------------------------------------------------------------------------------------------ resizing
def _resized_size(h: int, w: int, size: list[int], max_size: int | None) -> list[int]:
    if len(size) == 2:
        if max_size is not None:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller edge, i.e. size should "
                "be an int or a sequence of length 1 in torchscript mode."
            )
        return [size[0], size[1]]
    short, long = (w, h) if w <= h else (h, w)
    requested = size[0]
    new_short, new_long = requested, int(requested * long / short)
    if max_size is not None:
        if max_size <= requested:
            raise ValueError(
                f"max_size = {max_size} must be strictly greater than the requested size for the smaller edge size = "
                f"{size}"
            )
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return [new_h, new_w]


def linear_weights(in_size: int, out_size: int, antialias: bool) -> np.ndarray:
    """The ``(out_size, in_size)`` matrix of bilinear weights along one axis (align_corners=False)."""
    scale = in_size / out_size
    w = np.zeros((out_size, in_size), dtype=np.float64)
    if antialias and scale > 1.0:
        support = scale  # triangle filter of radius 1, widened by the downscale factor
        for i in range(out_size):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), in_size)
            j = np.arange(lo, hi)
            k = np.clip(1.0 - np.abs((j - center + 0.5) / scale), 0.0, None)
            w[i, lo:hi] = k / k.sum()
        return w
    src = np.maximum((np.arange(out_size) + 0.5) * scale - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    lam = src - i0
    rows = np.arange(out_size)
    np.add.at(w, (rows, i0), 1.0 - lam)
    np.add.at(w, (rows, i1), lam)
    return w


def _nearest_index(in_size: int, out_size: int, exact: bool) -> np.ndarray:
    scale = in_size / out_size
    offset = 0.5 if exact else 0.0
    return np.minimum(np.floor((np.arange(out_size) + offset) * scale).astype(np.int64), in_size - 1)


def _resize_tensor(img: Tensor, oh: int, ow: int, mode: InterpolationMode, antialias: bool) -> Tensor:
    h, w = img.shape[-2], img.shape[-1]
    if mode in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT):
        exact = mode is InterpolationMode.NEAREST_EXACT
        rows = tensor(_nearest_index(h, oh, exact))
        cols = tensor(_nearest_index(w, ow, exact))
        return img.index_select(-2, rows).index_select(-1, cols)
    if mode is not InterpolationMode.BILINEAR:
        raise NotImplementedError(f"resize of tensors supports nearest, nearest-exact and bilinear, not {mode.value}")
    out_dtype = img.dtype
    x = img if img.is_floating_point() else img.to(float32)
    wh = tensor(linear_weights(h, oh, antialias), dtype=x.dtype)
    ww = tensor(linear_weights(w, ow, antialias).T.copy(), dtype=x.dtype)
    out = wh.matmul(x).matmul(ww)
    if not out_dtype.is_floating_point:
        info = np.iinfo(out_dtype.np) if out_dtype.np.kind in "iu" else None
        out = out.round()
        if info is not None:
            out = out.clamp(info.min, info.max)
        out = out.to(out_dtype)
    return out


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size: int | None = None,
           antialias: bool | None = True):
    """Resize to ``size``: ``(h, w)``, or an int matching the smaller edge and keeping the aspect ratio."""
    mode = _interpolation(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list")
        size = list(size)
    elif isinstance(size, int):
        size = [size]
    else:
        raise TypeError(f"Size should be int or sequence. Got {type(size)}")
    _, h, w = get_dimensions(img)
    oh, ow = _resized_size(h, w, size, max_size)
    if [h, w] == [oh, ow]:
        return img
    if isinstance(img, Tensor):
        return _resize_tensor(img, oh, ow, mode, bool(antialias))
    if mode is InterpolationMode.NEAREST_EXACT:
        raise ValueError("nearest-exact is not supported for PIL images")
    if antialias is False and mode is not InterpolationMode.NEAREST:
        warnings.warn("Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.",
                      stacklevel=2)
    return img.resize((ow, oh), _PIL_CODES[mode])



def resized_crop(img, top: int, left: int, height: int, width: int, size, interpolation=InterpolationMode.BILINEAR,
                 antialias: bool | None = True):
    """``crop`` then ``resize`` to ``size`` (what ``RandomResizedCrop`` applies)."""
    _check_img(img)
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)
