"""toolkit.vision.transforms against torchvision's documented behaviour, with torch as the numeric oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

import toolkit
from tests.conftest import assert_close
from toolkit.vision import transforms as T
from toolkit.vision.transforms import functional as F


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# ------------------------------------------------------------------------------------------- ToTensor
def test_to_tensor_uint8_hwc_scales_and_transposes(rng):
    a = rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    out = T.ToTensor()(a)
    expected = torch.from_numpy(a.transpose(2, 0, 1).copy()).to(torch.float32).div(255)
    assert_close(out, expected)
    assert out.is_contiguous()
    assert float(out.max()) <= 1.0 and float(out.min()) >= 0.0


def test_to_tensor_2d_array_gets_channel_dim(rng):
    a = rng.integers(0, 256, (4, 5), dtype=np.uint8)
    out = T.ToTensor()(a)
    assert out.shape == (1, 4, 5)
    assert_close(out, torch.from_numpy(a[None].astype(np.float32)) / 255)


def test_to_tensor_other_dtypes_not_scaled(rng):
    a = rng.random((3, 2, 2))
    out = T.ToTensor()(a)
    assert out.dtype == toolkit.float64
    np.testing.assert_array_equal(out.numpy(), a.transpose(2, 0, 1))
    i = rng.integers(-5, 300, (2, 3), dtype=np.int32)
    out = T.ToTensor()(i)
    assert out.dtype == toolkit.int32
    np.testing.assert_array_equal(out.numpy()[0], i)


def test_to_tensor_pil_modes(rng):
    rgb = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    out = T.ToTensor()(Image.fromarray(rgb))
    assert out.shape == (3, 4, 6) and out.dtype == toolkit.float32
    assert_close(out, torch.from_numpy(rgb.transpose(2, 0, 1).astype(np.float32)) / 255)
    gray = Image.fromarray(rgb[..., 0])
    assert T.ToTensor()(gray).shape == (1, 4, 6)
    binary = Image.fromarray(rgb[..., 0] > 128)
    assert binary.mode == "1"
    np.testing.assert_array_equal(T.ToTensor()(binary).numpy()[0], (rgb[..., 0] > 128).astype(np.float32))
    f = Image.fromarray(rng.random((2, 3)).astype(np.float32))
    assert f.mode == "F" and T.ToTensor()(f).dtype == toolkit.float32
    i = Image.fromarray(rng.integers(0, 1000, (2, 3)).astype(np.int32))
    out = T.ToTensor()(i)
    assert i.mode == "I" and out.dtype == toolkit.int32
    np.testing.assert_array_equal(out.numpy()[0], np.asarray(i))


def test_to_tensor_follows_default_dtype(rng):
    a = rng.integers(0, 256, (2, 2), dtype=np.uint8)
    toolkit.set_default_dtype(toolkit.float64)
    try:
        assert T.ToTensor()(a).dtype == toolkit.float64
    finally:
        toolkit.set_default_dtype(toolkit.float32)


def test_to_tensor_errors():
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        T.ToTensor()([[1, 2]])
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 4 dimensions"):
        T.ToTensor()(np.zeros((1, 1, 1, 1), np.uint8))


def test_pil_to_tensor_keeps_dtype(rng):
    a = rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    out = T.PILToTensor()(Image.fromarray(a))
    assert out.dtype == toolkit.uint8
    np.testing.assert_array_equal(out.numpy(), a.transpose(2, 0, 1))


# ------------------------------------------------------------------------------------------- Normalize
def test_normalize_matches_formula(rng):
    x = rng.random((3, 4, 5)).astype(np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 2.0)
    out = T.Normalize(mean, std)(toolkit.tensor(x))
    tx = torch.tensor(x)
    expected = (tx - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)
    assert_close(out, expected)


def test_normalize_batched_and_inplace(rng):
    x = toolkit.tensor(rng.random((2, 1, 3, 3)).astype(np.float32))
    before = x.clone()
    out = T.Normalize((0.5,), (0.5,))(x)
    assert out is not x
    assert_close(x, before)
    out2 = T.Normalize((0.5,), (0.5,), inplace=True)(x)
    assert out2 is x
    assert_close(x, (before - 0.5) / 0.5)


def test_normalize_errors():
    with pytest.raises(ValueError, match="std evaluates to zero after conversion to toolkit.float32"):
        T.Normalize((0.0, 0.0), (1.0, 0.0))(toolkit.zeros(2, 2, 2))
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got toolkit.uint8"):
        T.Normalize((0.0,), (1.0,))(toolkit.zeros(1, 2, 2, dtype=toolkit.uint8))
    with pytest.raises(ValueError, match="Expected tensor to be a tensor image of size"):
        T.Normalize((0.0,), (1.0,))(toolkit.zeros(2, 2))
    with pytest.raises(TypeError, match="img should be Tensor Image"):
        T.Normalize((0.0,), (1.0,))(np.zeros((1, 2, 2)))


def test_normalize_keeps_autograd(rng):
    x = toolkit.tensor(rng.random((1, 2, 2)), requires_grad=True)
    T.Normalize((0.5,), (4.0,))(x).sum().backward()
    assert_close(x.grad, torch.full((1, 2, 2), 0.25, dtype=torch.float64))


# ------------------------------------------------------------------------------------------- Resize
def _taps(n_in: int, n_out: int, antialias: bool) -> int:
    """How many inputs along one dim a bilinear resize from n_in to n_out weighs into each output (the
    antialiasing filter widens with the downscaling factor); the tolerance rule's accum is the product over dims."""
    scale = n_in / n_out
    return math.ceil(2 * scale) + 1 if antialias and scale > 1 else 2


@pytest.mark.parametrize("size", [(5, 7), (40, 31), (9, 50), (17, 23)])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_tensor_bilinear_matches_interpolate(rng, size, antialias):
    a = rng.random((2, 3, 17, 23)).astype(np.float32)
    out = T.Resize(size, antialias=antialias)(toolkit.tensor(a))
    expected = torch.nn.functional.interpolate(torch.tensor(a), size=size, mode="bilinear", align_corners=False,
                                               antialias=antialias)
    assert_close(out, expected, accum=_taps(17, size[0], antialias) * _taps(23, size[1], antialias))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_resize_tensor_nearest_matches_interpolate(rng, mode):
    a = rng.random((1, 2, 9, 13)).astype(np.float32)
    out = T.Resize((7, 30), interpolation=T.InterpolationMode(mode))(toolkit.tensor(a))
    assert_close(out, torch.nn.functional.interpolate(torch.tensor(a), size=(7, 30), mode=mode))


def test_resize_uint8_tensor_rounds(rng):
    u = rng.integers(0, 256, (3, 17, 23), dtype=np.uint8)
    out = T.Resize((5, 7))(toolkit.tensor(u))
    assert out.dtype == toolkit.uint8
    expected = torch.nn.functional.interpolate(torch.tensor(u)[None], size=(5, 7), mode="bilinear",
                                               antialias=True)[0]
    assert np.abs(out.numpy().astype(int) - expected.numpy().astype(int)).max() <= 1


def test_resize_int_size_keeps_aspect_ratio():
    x = toolkit.zeros(1, 10, 20)
    assert T.Resize(5)(x).shape == (1, 5, 10)
    assert T.Resize([5])(toolkit.zeros(1, 20, 10)).shape == (1, 10, 5)
    assert T.Resize(4, max_size=6)(x).shape == (1, 3, 6)
    assert T.Resize(7)(toolkit.zeros(3, 10, 15)).shape == (3, 7, 10)  # int(7 * 15 / 10) == 10
    same = toolkit.ones(1, 4, 4)
    assert T.Resize(4)(same) is same


def test_resize_pil_uses_pillow_bilinear(rng):
    u = rng.integers(0, 256, (17, 23), dtype=np.uint8)
    img = Image.fromarray(u)
    out = T.Resize((5, 7))(img)
    assert out.size == (7, 5)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(img.resize((7, 5), Image.Resampling.BILINEAR)))
    tensor_out = T.Resize((5, 7))(toolkit.tensor(u[None]))
    assert np.abs(tensor_out.numpy()[0].astype(int) - np.asarray(out).astype(int)).max() <= 1
    assert T.Resize(10)(img).size == (13, 10)


def test_resize_errors_and_repr():
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize(2.5)
    with pytest.raises(ValueError, match="If size is a sequence, it should have 1 or 2 values"):
        T.Resize((1, 2, 3))
    with pytest.raises(ValueError, match="max_size should only be passed if size specifies the length of the smaller"):
        T.Resize((4, 4), max_size=8)(toolkit.zeros(1, 2, 2))
    with pytest.raises(ValueError, match="must be strictly greater than the requested size"):
        T.Resize(8, max_size=8)(toolkit.zeros(1, 2, 4))
    assert repr(T.Resize(32)) == "Resize(size=32, interpolation=bilinear, max_size=None, antialias=True)"
    assert repr(T.Resize((3, 4), interpolation=T.InterpolationMode.NEAREST)) == (
        "Resize(size=(3, 4), interpolation=nearest, max_size=None, antialias=True)")


def test_resize_keeps_autograd(rng):
    x = toolkit.tensor(rng.random((1, 1, 6, 6)), requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    T.Resize((3, 4))(x).pow(2).sum().backward()
    torch.nn.functional.interpolate(tx, size=(3, 4), mode="bilinear", antialias=True).pow(2).sum().backward()
    assert_close(x.grad, tx.grad, accum=_taps(6, 3, True) * _taps(6, 4, True))


# ------------------------------------------------------------------------------------------- CenterCrop
def test_center_crop_tensor_and_pil():
    x = toolkit.arange(2 * 6 * 7).reshape(2, 6, 7)
    out = T.CenterCrop(4)(x)
    # top = round((6 - 4) / 2) = 1, left = round((7 - 4) / 2) = round(1.5) = 2
    np.testing.assert_array_equal(out.numpy(), x.numpy()[:, 1:5, 2:6])
    out = T.CenterCrop((3, 2))(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy()[:, 2:5, 2:4])  # round(1.5) == 2, round(2.5) == 2
    img = Image.fromarray(np.arange(42, dtype=np.uint8).reshape(6, 7))
    np.testing.assert_array_equal(np.asarray(T.CenterCrop(4)(img)), np.asarray(img)[1:5, 2:6])


def test_center_crop_larger_than_image_zero_pads():
    x = toolkit.ones(1, 2, 3)
    out = T.CenterCrop((5, 6))(x)
    expected = np.zeros((1, 5, 6), np.float32)
    expected[:, 1:3, 1:4] = 1  # padding left (6-3)//2 = 1, top (5-2)//2 = 1
    np.testing.assert_array_equal(out.numpy(), expected)
    img = Image.fromarray(np.full((2, 3), 9, np.uint8))
    np.testing.assert_array_equal(np.asarray(T.CenterCrop((5, 6))(img)), expected[0].astype(np.uint8) * 9)


def test_center_crop_repr_and_errors():
    assert repr(T.CenterCrop(4)) == "CenterCrop(size=(4, 4))"
    assert repr(T.CenterCrop([3])) == "CenterCrop(size=(3, 3))"
    with pytest.raises(ValueError, match="Please provide only two dimensions"):
        T.CenterCrop((1, 2, 3))


# ------------------------------------------------------------------------------------------- RandomCrop
def _torch_crop_offsets(seed, h, w, th, tw, n):
    torch.manual_seed(seed)
    out = []
    for _ in range(n):
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        out.append((i, j))
    return out


def test_random_crop_draws_like_torchvision():
    x = toolkit.arange(3 * 9 * 11.0).reshape(3, 9, 11)
    crop = T.RandomCrop((4, 5))
    toolkit.manual_seed(7)
    outs = [crop(x) for _ in range(6)]
    for out, (i, j) in zip(outs, _torch_crop_offsets(7, 9, 11, 4, 5, 6)):
        np.testing.assert_array_equal(out.numpy(), x.numpy()[:, i:i + 4, j:j + 5])
    toolkit.manual_seed(7)
    again = [crop(x) for _ in range(6)]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(outs, again))


def test_random_crop_same_size_draws_nothing():
    x = toolkit.ones(1, 4, 4)
    toolkit.manual_seed(0)
    T.RandomCrop(4)(x)
    state = toolkit.get_rng_state()
    toolkit.manual_seed(0)
    assert toolkit.equal(state, toolkit.get_rng_state())


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_random_crop_padding_modes(mode):
    a = np.arange(2 * 4 * 5, dtype=np.float32).reshape(2, 4, 5)
    crop = T.RandomCrop((4, 5), padding=(2, 1), fill=-1, padding_mode=mode)
    toolkit.manual_seed(3)
    out = crop(toolkit.tensor(a))
    ((i, j),) = _torch_crop_offsets(3, 6, 9, 4, 5, 1)
    kwargs = {"constant_values": -1} if mode == "constant" else {}
    padded = np.pad(a, ((0, 0), (1, 1), (2, 2)), mode=mode, **kwargs)
    np.testing.assert_array_equal(out.numpy(), padded[:, i:i + 4, j:j + 5])


def test_random_crop_pil_with_padding():
    a = np.arange(20, dtype=np.uint8).reshape(4, 5)
    toolkit.manual_seed(1)
    out = T.RandomCrop(3, padding=[1, 2, 3, 4], fill=255)(Image.fromarray(a))
    ((i, j),) = _torch_crop_offsets(1, 4 + 2 + 4, 5 + 1 + 3, 3, 3, 1)
    padded = np.pad(a, ((2, 4), (1, 3)), constant_values=255)
    np.testing.assert_array_equal(np.asarray(out), padded[i:i + 3, j:j + 3])


def test_random_crop_pad_if_needed():
    x = toolkit.ones(1, 2, 3)
    out = T.RandomCrop((4, 5), pad_if_needed=True)(x)
    assert out.shape == (1, 4, 5)
    assert float(out.sum()) == 6.0
    with pytest.raises(ValueError, match=r"Required crop size \(4, 5\) is larger than input image size \(2, 3\)"):
        T.RandomCrop((4, 5))(x)


def test_random_crop_repr():
    assert repr(T.RandomCrop(32, padding=4)) == "RandomCrop(size=(32, 32), padding=4)"


def test_pad_reflect_too_large():
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(toolkit.ones(1, 2, 2), 2, padding_mode="reflect")
    with pytest.raises(ValueError, match="Padding mode should be either constant, edge, reflect or symmetric"):
        F.pad(toolkit.ones(1, 2, 2), 1, padding_mode="wrap")


# ------------------------------------------------------------------------------------------- flips, Lambda, Compose
def test_random_horizontal_flip_follows_rand():
    x = toolkit.arange(12.0).reshape(1, 3, 4)
    flip = T.RandomHorizontalFlip(p=0.5)
    toolkit.manual_seed(11)
    outs = [flip(x) for _ in range(8)]
    torch.manual_seed(11)
    draws = [bool(torch.rand(1) < 0.5) for _ in range(8)]
    assert any(draws) and not all(draws)
    for out, flipped in zip(outs, draws):
        np.testing.assert_array_equal(out.numpy(), x.numpy()[..., ::-1] if flipped else x.numpy())
    img = Image.fromarray(np.arange(12, dtype=np.uint8).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(T.RandomHorizontalFlip(p=1.0)(img)), np.asarray(img)[:, ::-1])
    assert T.RandomHorizontalFlip(p=0.0)(img) is img
    assert repr(T.RandomHorizontalFlip()) == "RandomHorizontalFlip(p=0.5)"


def test_lambda_and_compose():
    pipeline = T.Compose([T.ToTensor(), T.Lambda(lambda t: t * 2), T.Normalize((1.0,), (1.0,))])
    a = np.full((2, 2), 255, np.uint8)
    np.testing.assert_allclose(pipeline(a).numpy(), np.ones((1, 2, 2)))
    assert repr(pipeline) == "Compose(\n    ToTensor()\n    Lambda()\n    Normalize(mean=(1.0,), std=(1.0,))\n)"
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)


def test_transform_rejects_non_images():
    with pytest.raises(TypeError, match="img should be PIL Image or Tensor"):
        T.CenterCrop(2)(np.zeros((3, 3)))
