"""MovingAveragePerChannelMinMaxObserver against torch: the per-channel moving averages and qparams over
several batches, for several channel axes and schemes."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")


@pytest.mark.parametrize("ch_axis", [0, 1, -1])
@pytest.mark.parametrize("scheme", ["per_channel_affine", "per_channel_symmetric"])
@pytest.mark.parametrize("averaging_constant", [0.01, 0.5, 1])
def test_matches_torch(ch_axis, scheme, averaging_constant):
    kw = {"ch_axis": ch_axis, "averaging_constant": averaging_constant, "dtype": "qint8"}
    ours = tq.MovingAveragePerChannelMinMaxObserver(**{**kw, "dtype": tq.qint8, "qscheme": getattr(toolkit, scheme)})
    theirs = torch.ao.quantization.MovingAveragePerChannelMinMaxObserver(
        **{**kw, "dtype": torch.qint8, "qscheme": getattr(torch, scheme)})
    rng = np.random.default_rng(ch_axis + 5)
    for step in range(4):
        x = (rng.standard_normal((3, 4, 5)) * (step + 1) + step).astype(np.float32)
        a = toolkit.tensor(x)
        assert ours(a) is a
        theirs(torch.tensor(x))
        assert_close(ours.min_val, theirs.min_val, atol=1e-6, rtol=1e-6)
        assert_close(ours.max_val, theirs.max_val, atol=1e-6, rtol=1e-6)
    scale, zp = ours.calculate_qparams()
    t_scale, t_zp = theirs.calculate_qparams()
    assert_close(scale, t_scale, rtol=1e-6, atol=0)
    assert_close(zp, t_zp, rtol=0, atol=0)


def test_refusals():
    with pytest.raises(NotImplementedError, match="per_channel"):
        tq.MovingAveragePerChannelMinMaxObserver(qscheme=toolkit.per_tensor_affine)
    with pytest.raises(NotImplementedError, match="dynamic"):
        tq.MovingAveragePerChannelMinMaxObserver(is_dynamic=True)
