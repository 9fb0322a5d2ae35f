"""qat.Linear and qat.Conv1d/2d/3d against torch.ao.nn.qat: from_float shares the float parameters, the forward
fake-quantizes the weight (per tensor or per channel), gradients, to_float, and the checks."""

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import assert_step_matches, twins
from tests.conftest import assert_close
from toolkit.ao import quantization as tq
from toolkit.ao.nn import qat as nnqat

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")

_CASES = {
    "Linear": (lambda nn: nn.Linear(5, 4), (3, 5)),
    "Conv1d": (lambda nn: nn.Conv1d(2, 3, 3, padding=1), (2, 2, 6)),
    "Conv2d": (lambda nn: nn.Conv2d(2, 3, 3, stride=2, bias=False), (2, 2, 7, 7)),
    "Conv3d": (lambda nn: nn.Conv3d(2, 3, 2, groups=1), (1, 2, 3, 3, 3)),
}


@pytest.mark.parametrize("name", list(_CASES))
@pytest.mark.parametrize("qconfig", ["default_qat_qconfig", "per_channel"])
def test_matches_torch(name, qconfig):
    build, shape = _CASES[name]
    ours, theirs = twins(lambda lib: lib.nn.Sequential(build(lib.nn)))
    if qconfig == "per_channel":
        ours[0].qconfig = tq.get_default_qat_qconfig("x86", 0)
        theirs[0].qconfig = torch.ao.quantization.get_default_qat_qconfig("x86", 0)
    else:
        ours[0].qconfig, theirs[0].qconfig = tq.default_qat_qconfig, torch.ao.quantization.default_qat_qconfig
    q_ours = getattr(nnqat, name).from_float(ours[0])
    q_theirs = getattr(torch.ao.nn.qat, name).from_float(theirs[0])
    assert q_ours.weight is ours[0].weight
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_step_matches(q_ours, q_theirs, x)
    assert_close(q_ours.weight_fake_quant.scale, q_theirs.weight_fake_quant.scale, rtol=0, atol=0)
    f_ours = q_ours.to_float()
    assert type(f_ours) is getattr(toolkit.nn, name)
    assert_close(f_ours.weight, q_ours.weight)


def test_checks():
    with pytest.raises(AssertionError, match="qconfig must be provided for QAT module"):
        nnqat.Linear(2, 2)
    with pytest.raises(AssertionError, match="only works for Linear"):
        nnqat.Linear.from_float(toolkit.nn.Conv2d(1, 1, 1))
    with pytest.raises(AssertionError, match="must have qconfig defined"):
        nnqat.Conv2d.from_float(toolkit.nn.Conv2d(1, 1, 1))


def test_old_name():
    import toolkit.nn.qat as old
    assert old.Conv2d is nnqat.Conv2d
