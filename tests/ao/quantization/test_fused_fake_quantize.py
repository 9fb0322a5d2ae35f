"""FusedMovingAvgObsFakeQuantize against torch's fused op: outputs, scale and zero point (the backend's
ChooseQuantizationParams, including its 6.1e-5 scale floor and the zero point of symmetric ranges that do not
straddle 0), gradients, and the switches."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq
from toolkit.ao.quantization.fused_fake_quantize import fused_per_channel_wt_fake_quant_range_neg_127_to_127

_NAMES = ["default_fused_act_fake_quant", "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant"]


def _batches(seed):
    rng = np.random.default_rng(seed)
    offsets = np.array([[1.0], [-3.0], [0.0], [5.0]])
    yield rng.standard_normal((4, 6)).astype(np.float32)
    yield (rng.standard_normal((4, 6)) * 2 + offsets).astype(np.float32)
    yield (rng.uniform(0, 1e-4, (4, 6))).astype(np.float32)  # a range under the scale floor
    yield np.zeros((4, 6), dtype=np.float32)


@pytest.mark.parametrize("name", _NAMES)
def test_matches_torch_over_batches(name):
    ours = getattr(tq, name)()
    theirs = getattr(torch.ao.quantization, name)()
    for x in _batches(len(name)):
        xa, xb = toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = ours(xa), theirs(xb)
        assert_close(ya, yb, rtol=0, atol=0)
        assert_close(ours.scale, theirs.scale, rtol=0, atol=0)
        assert_close(ours.zero_point, theirs.zero_point, rtol=0, atol=0)
        (ya * ya).sum().backward()
        (yb * yb).sum().backward()
        assert_close(xa.grad, xb.grad, rtol=0, atol=0)


def test_restricted_range_and_switches_match_torch():
    ours = fused_per_channel_wt_fake_quant_range_neg_127_to_127()
    theirs = torch.ao.quantization.fake_quantize.fused_per_channel_wt_fake_quant_range_neg_127_to_127()
    x = next(_batches(1))
    assert_close(ours(toolkit.tensor(x)), theirs(torch.tensor(x)), rtol=0, atol=0)
    ours.disable_fake_quant()
    theirs.disable_fake_quant()
    ours.disable_observer()
    theirs.disable_observer()
    x2 = x * 3
    assert_close(ours(toolkit.tensor(x2)), theirs(torch.tensor(x2)), rtol=0, atol=0)
    assert_close(ours.scale, theirs.scale, rtol=0, atol=0)
    assert ours.observer_enabled.dtype is toolkit.int64
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_refuses_other_observers():
    with pytest.raises(AssertionError, match="only works with MovingAverageMinMaxObserver"):
        tq.FusedMovingAvgObsFakeQuantize(observer=tq.MinMaxObserver)
