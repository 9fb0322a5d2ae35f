"""FixedQParamsObserver and FixedQParamsFakeQuantize against torch: the fixed parameters, fake quantization
with them, and the sigmoid/tanh defaults."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq


@pytest.mark.parametrize("name", ["default_fixed_qparams_range_0to1_fake_quant",
                                  "default_fixed_qparams_range_neg1to1_fake_quant"])
def test_fake_quant_matches_torch(name):
    ours, theirs = getattr(tq, name)(), getattr(torch.ao.quantization, name)()
    x = np.random.default_rng(0).uniform(-1.5, 1.5, (3, 7)).astype(np.float32)
    assert_close(ours(toolkit.tensor(x)), theirs(torch.tensor(x)), rtol=0, atol=0)
    scale, zp = ours.calculate_qparams()
    t_scale, t_zp = theirs.calculate_qparams()
    assert_close(scale, t_scale, rtol=0, atol=0)
    assert_close(zp, t_zp, rtol=0, atol=0)
    assert ours.scale is ours.activation_post_process.scale
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_observer_passes_through_and_refuses_dynamic():
    obs = tq.default_fixed_qparams_range_0to1_observer()
    x = toolkit.tensor([0.5])
    assert obs(x) is x
    with pytest.raises(NotImplementedError, match="dynamic"):
        tq.FixedQParamsObserver(0.1, 0, is_dynamic=True)
    with pytest.raises(AssertionError, match="must be a FixedQParamsObserver"):
        tq.FixedQParamsFakeQuantize(observer=tq.MinMaxObserver)
