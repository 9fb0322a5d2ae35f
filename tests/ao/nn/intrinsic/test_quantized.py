"""The int8 fused modules against torch.ao.nn.intrinsic.quantized (and .dynamic): from_float of observed fused
float modules and QAT modules, and their int8 outputs."""

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import align_bn_sqrt, twins
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = [pytest.mark.filterwarnings("ignore:Please use quant_min"),
              pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]
nniq = pytest.importorskip("toolkit.ao.nn.intrinsic.quantized")
tQ = torch.ao.quantization

_CASES = {
    "ConvReLU2d": (lambda nn: [nn.Conv2d(2, 3, 3, padding=1), nn.ReLU()], (2, 2, 5, 5)),
    "LinearReLU": (lambda nn: [nn.Linear(5, 4), nn.ReLU()], (3, 5)),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_from_observed_fused_module_matches_torch(name):
    parts, shape = _CASES[name]

    def build(lib):
        nni = toolkit.ao.nn.intrinsic if lib is toolkit else torch.ao.nn.intrinsic
        Q = tq if lib is toolkit else tQ
        return lib.nn.Sequential(Q.QuantStub(), getattr(nni, name)(*parts(lib.nn)), Q.DeQuantStub())
    ours, theirs = twins(build)
    ours.qconfig, theirs.qconfig = tq.get_default_qconfig(), tQ.get_default_qconfig()
    ours, theirs = tq.prepare(ours.eval()), tQ.prepare(theirs.eval())
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = rng.standard_normal(shape).astype(np.float32)
        ours(toolkit.tensor(x))
        theirs(torch.tensor(x))
    q_ours, q_theirs = tq.convert(ours), tQ.convert(theirs)
    assert type(q_ours[1]) is getattr(nniq, name)
    assert q_ours[1]._get_name() == q_theirs[1]._get_name()
    assert_close(q_ours[1].weight().int_repr(), q_theirs[1].weight().int_repr(), rtol=0, atol=0)
    x = rng.standard_normal(shape).astype(np.float32)
    qx_ours, qx_theirs = q_ours[0](toolkit.tensor(x)), q_theirs[0](torch.tensor(x))
    assert_close(q_ours[1](qx_ours).int_repr(), q_theirs[1](qx_theirs).int_repr(), rtol=0, atol=0)


def test_conv_bn_relu_qat_module_converts_with_its_bn_folded():
    def build(lib):
        nni = toolkit.ao.nn.intrinsic if lib is toolkit else torch.ao.nn.intrinsic
        Q = tq if lib is toolkit else tQ
        nn = lib.nn
        return nn.Sequential(Q.QuantStub(), nni.ConvBnReLU2d(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()),
                             Q.DeQuantStub())
    ours, theirs = twins(build)
    ours.qconfig, theirs.qconfig = tq.get_default_qat_qconfig("x86", 0), tQ.get_default_qat_qconfig("x86", 0)
    ours, theirs = tq.prepare_qat(ours.train()), tQ.prepare_qat(theirs.train())
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype(np.float32)
    align_bn_sqrt(ours, theirs)
    ours(toolkit.tensor(x))
    theirs(torch.tensor(x))
    align_bn_sqrt(ours, theirs)
    q_ours, q_theirs = tq.convert(ours.eval()), tQ.convert(theirs.eval())
    assert type(q_ours[1]) is nniq.ConvReLU2d
    assert_close(q_ours[1].weight().int_repr(), q_theirs[1].weight().int_repr(), rtol=0, atol=0)
    # the output range was observed on a training-mode forward (batch statistics): equal to float32 rounding
    assert q_ours[1].scale == pytest.approx(q_theirs[1].scale, rel=1e-6)
    assert q_ours[1].zero_point == q_theirs[1].zero_point
    out_ours = q_ours[1](q_ours[0](toolkit.tensor(x)))
    out_theirs = q_theirs[1](q_theirs[0](torch.tensor(x)))
    assert_close(out_ours.int_repr(), out_theirs.int_repr(), rtol=0, atol=1)


def test_dynamic_linear_relu_matches_torch():
    def build(lib):
        nni = toolkit.ao.nn.intrinsic if lib is toolkit else torch.ao.nn.intrinsic
        return lib.nn.Sequential(nni.LinearReLU(lib.nn.Linear(6, 4), lib.nn.ReLU()), lib.nn.Linear(4, 2))
    ours, theirs = twins(build)
    q_ours = tq.quantize_dynamic(ours, {toolkit.ao.nn.intrinsic.LinearReLU, toolkit.nn.Linear})
    q_theirs = tQ.quantize_dynamic(theirs, {torch.ao.nn.intrinsic.LinearReLU, torch.nn.Linear})
    assert q_ours[0]._get_name() == q_theirs[0]._get_name() == "DynamicQuantizedLinearReLU"
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    assert_close(q_ours(toolkit.tensor(x)), q_theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)
