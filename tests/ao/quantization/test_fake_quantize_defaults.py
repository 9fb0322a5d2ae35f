"""The per-channel weight, dynamic and histogram fake-quantize configurations against torch's: what they build
and what they compute over a few batches."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")


@pytest.mark.parametrize("name", ["default_per_channel_weight_fake_quant", "default_dynamic_fake_quant",
                                  "default_histogram_fake_quant"])
def test_matches_torch(name):
    ours, theirs = getattr(tq, name)(), getattr(torch.ao.quantization, name)()
    assert type(ours.activation_post_process).__name__ == type(theirs.activation_post_process).__name__
    assert (ours.quant_min, ours.quant_max, ours.ch_axis, ours.is_dynamic) == \
        (theirs.quant_min, theirs.quant_max, theirs.ch_axis, theirs.is_dynamic)
    rng = np.random.default_rng(len(name))
    for step in range(3):
        x = (rng.standard_normal((4, 9)) * (step + 1)).astype(np.float32)
        assert_close(ours(toolkit.tensor(x)), theirs(torch.tensor(x)), rtol=0, atol=0)
        assert_close(ours.scale, theirs.scale, rtol=0, atol=0)
        assert_close(ours.zero_point, theirs.zero_point, rtol=0, atol=0)
