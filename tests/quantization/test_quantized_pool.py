"""Pooling on quantized tensors (``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d``) and ``flatten`` against
PyTorch, integer for integer, contiguous and channels-last PyTorch inputs alike."""

import numpy as np
import pytest
import torch

import toolkit

from .torch_twins import tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")
F, TF = toolkit.nn.functional, torch.nn.functional


def _equal(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())


CALLS = [
    ("max_pool2d", (3, 2, 1), {}),
    ("max_pool2d", ((2, 3), 1, 0, 2, True), {}),
    ("avg_pool2d", (3, 2, 1), {}),
    ("avg_pool2d", (3, 2, 1), {"count_include_pad": False}),
    ("avg_pool2d", (2, 3, 0, True, True, 5), {}),
    ("adaptive_avg_pool2d", (1,), {}),
    ("adaptive_avg_pool2d", ((3, 4),), {}),
    ("adaptive_avg_pool2d", ((4, 7),), {}),
]


@pytest.mark.parametrize("call", range(len(CALLS)))
@pytest.mark.parametrize("dtype,zp", [(torch.quint8, 100), (torch.quint8, 101), (torch.qint8, -3)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_pooling_matches_torch(call, dtype, zp, channels_last):
    name, args, kwargs = CALLS[call]
    g = torch.Generator().manual_seed(call)
    for shape in ((2, 3, 9, 10), (3, 8, 8)):
        x = torch.quantize_per_tensor(torch.randn(*shape, generator=g) * 3, 0.05, zp, dtype)
        theirs_in = x.contiguous(memory_format=torch.channels_last) if channels_last and x.dim() == 4 else x
        _equal(getattr(F, name)(tk(x), *args, **kwargs), getattr(TF, name)(theirs_in, *args, **kwargs))


def test_flatten_keeps_parameters():
    x = torch.quantize_per_tensor(torch.randn(2, 3, 4), 0.05, 100, torch.quint8)
    _equal(toolkit.flatten(tk(x), 1), torch.flatten(x, 1))
    _equal(tk(x).reshape(6, 4), x.reshape(6, 4))
