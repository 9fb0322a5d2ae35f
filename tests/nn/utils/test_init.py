"""nn.utils.skip_init and the conv weight memory-format helpers."""

from __future__ import annotations

import pytest
import torch

import toolkit
from toolkit import nn

from .helpers import raises_like


def test_skip_init_builds_the_module_without_drawing_random_numbers():
    toolkit.manual_seed(0)
    m = nn.utils.skip_init(nn.Linear, 5, 3, bias=False)
    after = toolkit.rand(4)
    toolkit.manual_seed(0)
    assert toolkit.equal(after, toolkit.rand(4))
    assert isinstance(m, nn.Linear) and tuple(m.weight.shape) == (3, 5) and m.bias is None
    raises_like(lambda: nn.utils.skip_init(nn.ReLU), lambda: torch.nn.utils.skip_init(torch.nn.ReLU))

    class NotAModule:
        pass

    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        nn.utils.skip_init(NotAModule)


def test_convert_conv_weight_memory_format_keeps_values():
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.Sequential(nn.ConvTranspose2d(3, 2, 3)), nn.Linear(2, 2))
    before = [p.detach().clone() for p in m.parameters()]
    out = nn.utils.convert_conv2d_weight_memory_format(m, toolkit.channels_last)
    assert out is m
    for a, b in zip(m.parameters(), before):
        assert toolkit.equal(a.detach(), b)
    assert nn.utils.convert_conv3d_weight_memory_format(m, toolkit.channels_last_3d) is m
