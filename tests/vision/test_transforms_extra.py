"""toolkit.vision.transforms: ToPILImage, Pad, RandomResizedCrop, RandomVerticalFlip, ColorJitter, Grayscale and
the color functionals, against torchvision's algorithms written out here with torch and Pillow."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image, ImageEnhance

import toolkit
from tests.conftest import assert_close
from toolkit.vision import transforms as T
from toolkit.vision.transforms import functional as F


def _tk(a):
    return toolkit.from_numpy(np.array(a, copy=True))


# ------------------------------------------------------------------------------------------- ToPILImage
def test_to_pil_image_modes():
    rng = np.random.default_rng(0)
    cases = [((1, 4, 5), np.uint8, "L"), ((2, 4, 5), np.uint8, "LA"), ((3, 4, 5), np.uint8, "RGB"),
             ((4, 4, 5), np.uint8, "RGBA"), ((1, 4, 5), np.int32, "I"), ((1, 4, 5), np.int16, "I;16")]
    for shape, dtype, mode in cases:
        a = (rng.random(shape) * 200).astype(dtype)
        img = T.ToPILImage()(_tk(a))
        assert img.mode == mode and img.size == (5, 4), (shape, dtype)
        back = np.asarray(img)
        np.testing.assert_array_equal(back.reshape(4, 5, -1).astype(dtype), a.transpose(1, 2, 0))
    # 2-D tensors and HWC arrays
    assert F.to_pil_image(_tk(np.zeros((3, 2), np.uint8))).mode == "L"
    assert F.to_pil_image(np.zeros((3, 2, 3), np.uint8)).size == (2, 3)
    # float tensors: x * 255 truncated to uint8, as torchvision's pic.mul(255).byte()
    f = rng.random((3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(F.to_pil_image(_tk(f))),
                                  torch.from_numpy(f).mul(255).byte().numpy().transpose(1, 2, 0))
    assert F.to_pil_image(_tk(f[:1])).mode == "L"  # float tensors become uint8 unless mode="F"
    img_f = F.to_pil_image(_tk(f[:1]), mode="F")
    assert img_f.mode == "F"
    np.testing.assert_array_equal(np.asarray(img_f), f[0])
    assert F.to_pil_image(f[0][:, :, None]).mode == "F"  # a float32 HWC array is not scaled
    # explicit modes: the bytes are read as that mode
    ycc = F.to_pil_image(_tk((f * 255).astype(np.uint8)), mode="YCbCr")
    assert ycc.mode == "YCbCr"
    np.testing.assert_array_equal(np.asarray(ycc), (f * 255).astype(np.uint8).transpose(1, 2, 0))
    assert F.to_pil_image(_tk(np.zeros((4, 2, 2), np.uint8)), mode="CMYK").mode == "CMYK"
    assert repr(T.ToPILImage()) == "ToPILImage()" and repr(T.ToPILImage("RGB")) == "ToPILImage(mode=RGB)"


def test_to_pil_image_errors():
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 4 dimensions."):
        F.to_pil_image(toolkit.zeros(1, 1, 2, 2))
    with pytest.raises(ValueError, match="pic should not have > 4 channels. Got 5 channels."):
        F.to_pil_image(toolkit.zeros(5, 2, 2))
    with pytest.raises(ValueError, match=r"Only modes \['RGB', 'YCbCr', 'HSV'\] are supported for 3D inputs"):
        F.to_pil_image(toolkit.zeros(3, 2, 2, dtype=toolkit.uint8), mode="RGBA")
    with pytest.raises(ValueError, match=r"Incorrect mode \(RGB\) supplied for input type uint8. Should be L"):
        F.to_pil_image(toolkit.zeros(1, 2, 2, dtype=toolkit.uint8), mode="RGB")
    with pytest.raises(TypeError, match="Input type int64 is not supported"):
        F.to_pil_image(toolkit.zeros(3, 2, 2, dtype=toolkit.int64))
    with pytest.raises(TypeError, match="pic should be Tensor or ndarray"):
        F.to_pil_image([[1]])


# ------------------------------------------------------------------------------------------- Pad, flips
def test_pad_transform():
    x = toolkit.arange(6, dtype=toolkit.float32).reshape(1, 2, 3)
    out = T.Pad((1, 2), fill=7)(x)
    np.testing.assert_array_equal(out.numpy(), torch.nn.functional.pad(torch.arange(6.).reshape(1, 2, 3),
                                                                       (1, 1, 2, 2), value=7).numpy())
    refl = T.Pad([1, 0, 2, 1], padding_mode="reflect")(x)
    np.testing.assert_array_equal(refl.numpy(), np.pad(x.numpy(), ((0, 0), (0, 1), (1, 2)), mode="reflect"))
    img = Image.fromarray(np.arange(12, dtype=np.uint8).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(T.Pad(2, padding_mode="edge")(img)),
                                  np.pad(np.asarray(img), 2, mode="edge"))
    assert repr(T.Pad(3)) == "Pad(padding=3, fill=0, padding_mode=constant)"
    with pytest.raises(TypeError, match="Got inappropriate padding arg"):
        T.Pad("3")
    with pytest.raises(ValueError, match="Padding mode should be either constant, edge, reflect or symmetric"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="Padding must be an int or a 1, 2, or 4 element tuple, not a 3 element"):
        T.Pad((1, 2, 3))


def test_random_vertical_flip_follows_rand():
    x = toolkit.arange(6.0).reshape(1, 3, 2)
    flip = T.RandomVerticalFlip(p=0.5)
    torch.manual_seed(4)
    draws = [bool(torch.rand(1) < 0.5) for _ in range(8)]
    toolkit.manual_seed(4)
    for flipped in draws:
        out = flip(x)
        np.testing.assert_array_equal(out.numpy(), x.numpy()[:, ::-1] if flipped else x.numpy())
    img = Image.fromarray(np.arange(6, dtype=np.uint8).reshape(3, 2))
    np.testing.assert_array_equal(np.asarray(F.vflip(img)), np.asarray(img)[::-1])


# ------------------------------------------------------------------------------------------- RandomResizedCrop
def _torchvision_rrc_params(height, width, scale, ratio):
    """torchvision.transforms.RandomResizedCrop.get_params on torch's generator."""
    area = height * width
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
        aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            i = torch.randint(0, height - h + 1, size=(1,)).item()
            j = torch.randint(0, width - w + 1, size=(1,)).item()
            return i, j, h, w
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


@pytest.mark.parametrize("seed", range(6))
def test_random_resized_crop_params_follow_torchvision(seed):
    img = toolkit.zeros(3, 40, 60)
    torch.manual_seed(seed)
    expected = [_torchvision_rrc_params(40, 60, (0.08, 1.0), (3 / 4, 4 / 3)) for _ in range(5)]
    toolkit.manual_seed(seed)
    actual = [T.RandomResizedCrop.get_params(img, (0.08, 1.0), (3 / 4, 4 / 3)) for _ in range(5)]
    # the draws are uniform floats rounded to whole pixels: a last-bit difference in a float32 draw may
    # move one edge by a pixel, never more
    for a, e in zip(actual, expected):
        assert max(abs(p - q) for p, q in zip(a, e)) <= 1, (a, e)


def test_random_resized_crop_output_and_fallback():
    x = toolkit.rand(3, 30, 20)
    toolkit.manual_seed(0)
    i, j, h, w = T.RandomResizedCrop.get_params(x, (0.2, 0.9), (0.5, 2.0))
    toolkit.manual_seed(0)
    out = T.RandomResizedCrop(8, scale=(0.2, 0.9), ratio=(0.5, 2.0))(x)
    assert out.shape == (3, 8, 8)
    assert_close(out, F.resize(x[:, i:i + h, j:j + w], [8, 8]))
    # no crop can fit (scale above 1): the central crop clamped to the ratio
    assert T.RandomResizedCrop.get_params(toolkit.zeros(1, 10, 40), (5.0, 6.0), (1.0, 2.0)) == (0, 10, 10, 20)
    assert T.RandomResizedCrop.get_params(toolkit.zeros(1, 10, 12), (5.0, 6.0), (1.0, 2.0)) == (0, 0, 10, 12)
    pil = T.RandomResizedCrop((5, 7))(Image.new("RGB", (20, 20)))
    assert pil.size == (7, 5)
    assert repr(T.RandomResizedCrop(4)) == ("RandomResizedCrop(size=(4, 4), scale=(0.08, 1.0), ratio=(0.75, 1.3333), "
                                            "interpolation=bilinear, antialias=True)")
    with pytest.warns(UserWarning, match=r"Scale and ratio should be of kind \(min, max\)"):
        T.RandomResizedCrop(4, scale=(1.0, 0.5))


# ------------------------------------------------------------------------------------------- color
def _blend(img1, img2, ratio):
    bound = 1.0 if img1.is_floating_point() else 255.0
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def _gray(img):
    r, g, b = img.unbind(dim=-3)
    return (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)


def _torch_contrast(img, c):
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    mean = torch.mean(_gray(img).to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, c)


def _rgb2hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = torch.max(img, dim=-3).values
    minc = torch.min(img, dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_divisor = torch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_divisor, (maxc - g) / cr_divisor, (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod(((hr + hg + hb) / 6.0 + 1.0), 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(dtype=torch.int32)
    p = torch.clamp((v * (1.0 - s)), 0.0, 1.0)
    q = torch.clamp((v * (1.0 - s * f)), 0.0, 1.0)
    t = torch.clamp((v * (1.0 - s * (1.0 - f))), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == torch.arange(6).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    a2 = torch.stack((t, v, v, q, p, p), dim=-3)
    a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    a4 = torch.stack((a1, a2, a3), dim=-4)
    return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)


def _torch_hue(img, hue_factor):
    orig = img.dtype
    if orig == torch.uint8:
        img = img.to(torch.float32) / 255
    h, s, v = _rgb2hsv(img).unbind(dim=-3)
    out = _hsv2rgb(torch.stack(((h + hue_factor) % 1.0, s, v), dim=-3))
    return out.mul(255 + 1.0 - 1e-3).to(torch.uint8) if orig == torch.uint8 else out


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_color_functionals_match_torchvision_tensor_formulas(dtype):
    rng = np.random.default_rng(3)
    a = rng.random((2, 3, 5, 6)).astype(np.float32)
    if dtype == np.uint8:
        a = (a * 255).astype(np.uint8)
    x, t = _tk(a), torch.from_numpy(a.copy())
    np.testing.assert_array_equal(F.rgb_to_grayscale(x).numpy(), _gray(t).numpy())
    assert F.rgb_to_grayscale(x, 3).shape == (2, 3, 5, 6)
    for factor in (0.0, 0.5, 1.7):
        assert_close(F.adjust_brightness(x, factor), _blend(t, torch.zeros_like(t), factor))
        assert_close(F.adjust_saturation(x, factor), _blend(t, _gray(t), factor))
        # the mean gray level is a sum over C*H*W values
        assert_close(F.adjust_contrast(x, factor), _torch_contrast(t, factor), accum=30,
                     atol=1 if dtype == np.uint8 else None)  # uint8: the mean may round differently by one
    for hue in (-0.5, -0.2, 0.0, 0.3):
        assert_close(F.adjust_hue(x, hue), _torch_hue(t, hue), atol=1 if dtype == np.uint8 else 1e-5)


def test_color_functionals_pil_use_pillow():
    img = Image.fromarray((np.random.default_rng(4).random((6, 7, 3)) * 255).astype(np.uint8))
    for fn, enhancer in ((F.adjust_brightness, ImageEnhance.Brightness), (F.adjust_contrast, ImageEnhance.Contrast),
                         (F.adjust_saturation, ImageEnhance.Color)):
        np.testing.assert_array_equal(np.asarray(fn(img, 1.3)), np.asarray(enhancer(img).enhance(1.3)))
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8) + np.int8(0.25 * 255).astype(np.uint8)
    expected = Image.merge("HSV", (Image.fromarray(np_h), s, v)).convert("RGB")
    np.testing.assert_array_equal(np.asarray(F.adjust_hue(img, 0.25)), np.asarray(expected))
    assert F.adjust_hue(img.convert("L"), 0.25).mode == "L"
    gray3 = T.Grayscale(3)(img)
    assert gray3.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(gray3)[:, :, 2], np.asarray(img.convert("L")))
    assert T.Grayscale()(img).mode == "L"


def test_color_errors():
    x = toolkit.rand(3, 2, 2)
    with pytest.raises(ValueError, match=r"brightness_factor \(-1\) is not non-negative."):
        F.adjust_brightness(x, -1)
    with pytest.raises(ValueError, match=r"hue_factor \(0.6\) is not in \[-0.5, 0.5\]."):
        F.adjust_hue(x, 0.6)
    with pytest.raises(TypeError, match=r"permitted channel values are \[1, 3\], but found 2"):
        F.adjust_saturation(toolkit.rand(2, 2, 2), 0.5)
    with pytest.raises(ValueError, match="num_output_channels should be either 1 or 3"):
        F.rgb_to_grayscale(x, 2)
    with pytest.raises(ValueError, match="If brightness is a single number, it must be non negative."):
        T.ColorJitter(brightness=-0.1)
    with pytest.raises(ValueError, match=r"hue values should be between \(-0.5, 0.5\)"):
        T.ColorJitter(hue=0.7)
    with pytest.raises(TypeError, match="contrast should be a single number or a list/tuple with length 2."):
        T.ColorJitter(contrast=(1, 2, 3))


def test_color_jitter_follows_torchvision_draws():
    cj = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0.3, hue=0.1)
    assert repr(cj) == "ColorJitter(brightness=(0.6, 1.4), contrast=(0.5, 1.5), saturation=(0.7, 1.3), hue=(-0.1, 0.1))"
    assert T.ColorJitter().brightness is None and T.ColorJitter(brightness=1.5).brightness == (0.0, 2.5)
    a = np.random.default_rng(5).random((3, 6, 6)).astype(np.float32)
    torch.manual_seed(7)
    order = torch.randperm(4).tolist()
    factors = [float(torch.empty(1).uniform_(lo, hi)) for lo, hi in ((0.6, 1.4), (0.5, 1.5), (0.7, 1.3), (-0.1, 0.1))]
    t = torch.from_numpy(a.copy())
    steps = [lambda t, f: _blend(t, torch.zeros_like(t), f), _torch_contrast,
             lambda t, f: _blend(t, _gray(t), f), _torch_hue]
    for k in order:
        t = steps[k](t, factors[k])
    toolkit.manual_seed(7)
    out = cj(_tk(a))
    assert_close(out, t, atol=1e-5, rtol=1e-5)  # four float32 steps, one of them a mean over 108 values
    assert T.RandomGrayscale(p=1.0)(_tk(a)).shape == (3, 6, 6)
    assert repr(T.Grayscale(3)) == "Grayscale(num_output_channels=3)"
