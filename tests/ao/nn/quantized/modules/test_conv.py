"""``toolkit.ao.nn.quantized.Conv2d`` against ``torch.ao.nn.quantized.Conv2d`` after ``from_float`` of identical
observed float convolutions: weight, scale, zero point, output integers, state dict and repr. Outputs are compared
under PyTorch's fbgemm engine, whose requantization toolkit follows bit for bit (its default x86 engine sends
symmetric weights to oneDNN, which rounds an output near a half the other way now and then:
tests/quantization/test_quantized_conv.py)."""

import copy

import numpy as np
import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized as nnq

from .twins import assert_q_equal, observed_pair, state_dict_to_toolkit, tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions",
                                        "ignore:.*_empty_affine_quantized", "ignore:.*per_channel")


@pytest.fixture(autouse=True)
def fbgemm():
    before = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    yield
    torch.backends.quantized.engine = before


CONVS = [  # in, out, kernel, options
    (3, 8, 3, {}),
    (4, 6, (3, 2), {"stride": 2, "padding": 1, "groups": 2}),
    (2, 4, 3, {"padding": (2, 1), "dilation": 2, "bias": False}),
]


def _pair(i, per_channel):
    cin, cout, k, options = CONVS[i]
    calibration = np.random.default_rng(i).standard_normal((2, cin, 9, 8)).astype(np.float32)
    ours, theirs = observed_pair(lambda lib: lib.nn.Conv2d(cin, cout, k, **options), per_channel, calibration)
    return nnq.Conv2d.from_float(ours), torch.ao.nn.quantized.Conv2d.from_float(theirs)


@pytest.mark.parametrize("i", range(len(CONVS)))
@pytest.mark.parametrize("per_channel", [False, True])
def test_from_float_matches_torch(i, per_channel):
    ours, theirs = _pair(i, per_channel)
    assert_q_equal(ours.weight(), theirs.weight())
    assert (ours.bias() is None) == (theirs.bias() is None)
    assert (ours.scale, ours.zero_point) == (theirs.scale, theirs.zero_point)
    x = torch.quantize_per_tensor(torch.randn(2, CONVS[i][0], 9, 8), 0.03, 128, torch.quint8)
    assert_q_equal(ours(tk(x)), theirs(x))
    assert repr(ours) == repr(theirs)


def test_state_dict_round_trip_with_torch():
    ours, theirs = _pair(1, True)
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict()) == ["weight", "bias", "scale", "zero_point"]
    fresh = nnq.Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=2)
    fresh.load_state_dict(state_dict_to_toolkit(theirs.state_dict()))
    x = torch.quantize_per_tensor(torch.randn(1, 4, 7, 7), 0.05, 100, torch.quint8)
    assert_q_equal(fresh(tk(x)), theirs(x))
    assert_q_equal(copy.deepcopy(fresh)(tk(x)), theirs(x))


def test_errors_are_torchs():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nnq.Conv2d(3, 4, 1, groups=2)
    with pytest.raises(ValueError, match="'padding_mode' circular is not supported"):
        nnq.Conv2d(2, 2, 1, padding_mode="circular")
    with pytest.raises(ValueError, match=r"Input shape must be `\(N, C, H, W\)`!"):
        nnq.Conv2d(2, 2, 1)(toolkit.quantize_per_tensor(toolkit.randn(2, 3, 3), 0.1, 0, toolkit.quint8))
    with pytest.raises(AssertionError, match="only works for Conv2d"):
        nnq.Conv2d.from_float(toolkit.nn.Linear(2, 2))
