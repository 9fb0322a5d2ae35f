"""toolkit.vision.utils.make_grid and save_image against torchvision's algorithm, written out here with torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

import toolkit
from tests.conftest import assert_close
from toolkit.vision.utils import make_grid, save_image


def _torchvision_make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
                           pad_value=0.0):
    """torchvision.utils.make_grid, step for step."""
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t):
            if value_range is not None:
                norm_ip(t, value_range[0], value_range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each:
            for t in tensor:
                norm_range(t)
        else:
            norm_range(tensor)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding,
                                                                          width - padding).copy_(tensor[k])
            k += 1
    return grid


def test_make_grid_fixed_values():
    # 3 one-channel 2x2 images, 2 per row, padding 1 of 9: the layout written out by hand
    x = toolkit.arange(12, dtype=toolkit.float32).reshape(3, 1, 2, 2)
    grid = make_grid(x, nrow=2, padding=1, pad_value=9)
    assert grid.shape == (3, 7, 7)
    expected = np.array([[9, 9, 9, 9, 9, 9, 9],
                         [9, 0, 1, 9, 4, 5, 9],
                         [9, 2, 3, 9, 6, 7, 9],
                         [9, 9, 9, 9, 9, 9, 9],
                         [9, 8, 9, 9, 9, 9, 9],
                         [9, 10, 11, 9, 9, 9, 9],
                         [9, 9, 9, 9, 9, 9, 9]], np.float32)
    for c in range(3):
        np.testing.assert_array_equal(grid.numpy()[c], expected)
    norm = make_grid(x, nrow=3, padding=0, normalize=True)
    np.testing.assert_allclose(norm.numpy()[0], np.array([[0, 1, 4, 5, 8, 9], [2, 3, 6, 7, 10, 11]]) / 11, rtol=1e-6)


@pytest.mark.parametrize("kwargs", [
    {}, {"nrow": 3}, {"padding": 0}, {"padding": 3, "pad_value": 0.5}, {"normalize": True},
    {"normalize": True, "scale_each": True}, {"normalize": True, "value_range": (-0.5, 0.5)},
    {"normalize": True, "value_range": (-1.0, 1.0), "scale_each": True, "nrow": 2},
])
@pytest.mark.parametrize("shape", [(7, 3, 4, 5), (5, 1, 3, 3), (1, 3, 4, 4), (3, 4, 4), (1, 4, 4), (4, 6)])
def test_make_grid_matches_torchvision(kwargs, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    actual = make_grid(toolkit.from_numpy(x.copy()), **kwargs)
    expected = _torchvision_make_grid(torch.from_numpy(x.copy()), **kwargs)
    assert_close(actual, expected)


def test_make_grid_list_input_and_errors():
    imgs = [toolkit.full((3, 2, 2), float(i)) for i in range(4)]
    expected = _torchvision_make_grid([torch.full((3, 2, 2), float(i)) for i in range(4)], nrow=2)
    assert_close(make_grid(imgs, nrow=2), expected)
    with pytest.raises(TypeError, match="tensor or list of tensors expected, got a list containing"):
        make_grid([imgs[0], np.zeros((3, 2, 2))])
    with pytest.raises(TypeError, match="tensor or list of tensors expected, got <class 'numpy.ndarray'>"):
        make_grid(np.zeros((2, 3, 2, 2)))
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        make_grid(toolkit.rand(2, 3, 2, 2), normalize=True, value_range=[0, 1])


def test_make_grid_does_not_modify_input_or_record_grad():
    x = toolkit.randn(4, 3, 3, 3, requires_grad=True)
    before = x.detach().clone()
    grid = make_grid(x, normalize=True)
    assert toolkit.equal(x.detach(), before) and not grid.requires_grad


def test_save_image(tmp_path):
    x = np.random.default_rng(1).random((5, 3, 4, 4)).astype(np.float32)
    path = tmp_path / "grid.png"
    save_image(toolkit.from_numpy(x.copy()), str(path), nrow=3, padding=1)
    grid = _torchvision_make_grid(torch.from_numpy(x.copy()), nrow=3, padding=1)
    expected = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
    np.testing.assert_array_equal(np.asarray(Image.open(path)), expected)
    with open(tmp_path / "raw", "wb") as f:
        save_image(toolkit.from_numpy(x[0].copy()), f, format="PNG")
    assert np.asarray(Image.open(tmp_path / "raw")).shape == (4, 4, 3)
