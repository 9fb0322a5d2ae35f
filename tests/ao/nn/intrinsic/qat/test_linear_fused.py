"""LinearReLU and LinearBn1d for QAT against torch.ao.nn.intrinsic.qat: forward, backward, BatchNorm statistics
and to_float."""

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import align_bn_sqrt, assert_step_matches, twins
from tests.conftest import assert_close
from toolkit.ao import quantization as tq
from toolkit.ao.nn.intrinsic import qat as nniqat

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")


@pytest.mark.parametrize("name", ["LinearReLU", "LinearBn1d"])
def test_matches_torch(name):
    def build(lib):
        nn = lib.nn
        mod = toolkit.ao.nn.intrinsic if lib is toolkit else torch.ao.nn.intrinsic
        second = nn.ReLU() if name == "LinearReLU" else nn.BatchNorm1d(4)
        return nn.Sequential(getattr(mod, name)(nn.Linear(5, 4), second))
    ours, theirs = twins(build)
    tq.propagate_qconfig_(ours, {"": tq.default_qat_qconfig})
    torch.ao.quantization.propagate_qconfig_(theirs, {"": torch.ao.quantization.default_qat_qconfig})
    ours = getattr(nniqat, name).from_float(ours[0])
    theirs = getattr(torch.ao.nn.intrinsic.qat, name).from_float(theirs[0])
    rng = np.random.default_rng(2)
    for step in range(3):
        align_bn_sqrt(ours, theirs)
        x = (rng.standard_normal((6, 5)) * (step + 1)).astype(np.float32)
        assert_step_matches(ours, theirs, x)
    f_ours, f_theirs = ours.to_float(), theirs.to_float()
    assert type(f_ours).__name__ == type(f_theirs).__name__
    x = rng.standard_normal((2, 5)).astype(np.float32)
    assert_close(f_ours.eval()(toolkit.tensor(x)), f_theirs.eval()(torch.tensor(x)), atol=1e-5, rtol=1e-5)
