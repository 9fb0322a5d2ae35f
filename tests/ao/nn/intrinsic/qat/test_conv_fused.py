"""The fused QAT convolutions against torch.ao.nn.intrinsic.qat: from_float, forward and backward with the
BatchNorm folded into the fake-quantized weight, running statistics, freezing, and to_float."""

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import align_bn_sqrt, assert_step_matches, twins
from tests.conftest import assert_close
from toolkit.ao import quantization as tq
from toolkit.ao.nn.intrinsic import qat as nniqat

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")
tnni, tnniqat = torch.ao.nn.intrinsic, torch.ao.nn.intrinsic.qat

_CASES = {
    "ConvBn1d": (lambda nn: [nn.Conv1d(2, 3, 3), nn.BatchNorm1d(3)], (4, 2, 7)),
    "ConvBn2d": (lambda nn: [nn.Conv2d(2, 3, 3, padding=1, bias=False), nn.BatchNorm2d(3)], (4, 2, 5, 5)),
    "ConvBn3d": (lambda nn: [nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3)], (2, 2, 3, 3, 3)),
    "ConvBnReLU1d": (lambda nn: [nn.Conv1d(2, 3, 3), nn.BatchNorm1d(3), nn.ReLU()], (4, 2, 7)),
    "ConvBnReLU2d": (lambda nn: [nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()], (4, 2, 5, 5)),
    "ConvBnReLU3d": (lambda nn: [nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), nn.ReLU()], (2, 2, 3, 3, 3)),
    "ConvReLU1d": (lambda nn: [nn.Conv1d(2, 3, 3), nn.ReLU()], (4, 2, 7)),
    "ConvReLU2d": (lambda nn: [nn.Conv2d(2, 3, 3), nn.ReLU()], (4, 2, 5, 5)),
    "ConvReLU3d": (lambda nn: [nn.Conv3d(2, 3, 2), nn.ReLU()], (2, 2, 3, 3, 3)),
}


def _qat_twins(name, qconfig="default_qat_qconfig"):
    parts, shape = _CASES[name]

    def build(lib):
        mod = toolkit.ao.nn.intrinsic if lib is toolkit else tnni
        return lib.nn.Sequential(getattr(mod, name)(*parts(lib.nn)))
    ours, theirs = twins(build)
    tq.propagate_qconfig_(ours, {"": getattr(tq, qconfig)})
    torch.ao.quantization.propagate_qconfig_(theirs, {"": getattr(torch.ao.quantization, qconfig)})
    return (getattr(nniqat, name).from_float(ours[0]), getattr(tnniqat, name).from_float(theirs[0]), shape)


@pytest.mark.parametrize("name", list(_CASES))
@pytest.mark.parametrize("qconfig", ["default_qat_qconfig", "default_qat_qconfig_v2"])
def test_training_steps_match_torch(name, qconfig):
    ours, theirs, shape = _qat_twins(name, qconfig)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(len(name))
    for step in range(3):
        align_bn_sqrt(ours, theirs)
        x = (rng.standard_normal(shape) * (step + 1)).astype(np.float32)
        assert_step_matches(ours, theirs, x)
    if hasattr(theirs, "bn"):
        assert_close(ours.bn.running_mean, theirs.bn.running_mean, atol=1e-6, rtol=1e-5)
        assert_close(ours.bn.running_var, theirs.bn.running_var, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", ["ConvBn2d", "ConvBnReLU2d"])
def test_freeze_bn_eval_and_to_float_match_torch(name):
    ours, theirs, shape = _qat_twins(name)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    align_bn_sqrt(ours, theirs)
    ours(toolkit.tensor(x))
    theirs(torch.tensor(x))
    ours.apply(nniqat.freeze_bn_stats)
    theirs.apply(tnniqat.freeze_bn_stats)
    ours.train()
    theirs.train()
    align_bn_sqrt(ours, theirs)
    assert ours.freeze_bn and not ours.bn.training
    mean = ours.bn.running_mean.clone()
    assert_close(ours(toolkit.tensor(x)), theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)
    assert_close(ours.bn.running_mean, mean)
    ours.apply(nniqat.update_bn_stats)
    assert ours.bn.training
    f_ours, f_theirs = ours.to_float(), theirs.to_float()
    assert type(f_ours).__name__ == type(f_theirs).__name__
    for (_n, p), (_, tp) in zip(f_ours.named_parameters(), f_theirs.named_parameters()):
        assert_close(p, tp, atol=1e-6, rtol=1e-5)


def test_from_float_checks():
    conv = toolkit.nn.Conv2d(1, 2, 1)
    with pytest.raises(AssertionError, match="only works for ConvBn2d"):
        nniqat.ConvBn2d.from_float(conv)
    fused = toolkit.ao.nn.intrinsic.ConvBn2d(conv, toolkit.nn.BatchNorm2d(2))
    with pytest.raises(AssertionError, match="must have qconfig defined"):
        nniqat.ConvBn2d.from_float(fused)
    with pytest.raises(AssertionError, match="qconfig must be provided"):
        nniqat.ConvBn2d(1, 2, 1)
