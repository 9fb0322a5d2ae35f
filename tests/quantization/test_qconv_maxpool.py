"""The compiled 2x2, stride-2 quantized max pool (``_qconv_maxpool``) against PyTorch, integer for integer: the
ways of asking for it, planar and channels-last inputs (a quantized convolution's output), and the shapes it
leaves to the general kernel (odd sizes, other windows)."""

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry as R

from .torch_twins import tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")
F, TF = toolkit.nn.functional, torch.nn.functional

CALLS = [((2,), {}), ((2, 2), {}), (((2, 2), (2, 2), 0, 1), {}), ((2,), {"ceil_mode": True}), ((2, 1), {}),
         (((2, 2), None), {})]


def _equal(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())


@pytest.mark.parametrize("call", range(len(CALLS)))
@pytest.mark.parametrize("dtype,zp", [(torch.quint8, 100), (torch.qint8, -3)])
@pytest.mark.parametrize("shape", [(2, 3, 8, 10), (2, 3, 9, 10), (1, 1, 2, 2)])
def test_max_pool_2x2_matches_torch(call, dtype, zp, shape):
    args, kwargs = CALLS[call]
    g = torch.Generator().manual_seed(call)
    x = torch.quantize_per_tensor(torch.randn(*shape, generator=g) * 3, 0.05, zp, dtype)
    _equal(F.max_pool2d(tk(x), *args, **kwargs), TF.max_pool2d(x, *args, **kwargs))


def test_max_pool_2x2_of_a_channels_last_convolution_output():
    g = torch.Generator().manual_seed(0)
    x = torch.quantize_per_tensor(torch.rand(3, 4, 12, 10, generator=g), 0.01, 3, torch.quint8)
    w = torch.quantize_per_channel(torch.randn(6, 4, 3, 3, generator=g) * 0.2, torch.full((6,), 0.01,
                                   dtype=torch.float64), torch.zeros(6, dtype=torch.long), 0, torch.qint8)
    b = torch.randn(6, generator=g)
    y = torch.ops.quantized.conv2d(x, torch.ops.quantized.conv2d_prepack(w, b, [1, 1], [0, 0], [1, 1], 1), 0.05, 7)
    packed = R.get("quantized::conv2d_prepack")(tk(w), tk(b), [1, 1], [0, 0], [1, 1], 1)
    ours = R.get("quantized::conv2d.new")(tk(x), packed, 0.05, 7)
    assert ours._data.strides[1] == 1  # channels last, as the convolution writes it
    _equal(F.max_pool2d(ours, 2), TF.max_pool2d(y, 2))
