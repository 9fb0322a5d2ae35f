"""The fused float modules against torch.ao.nn.intrinsic: Sequential subclasses that compute what their parts
compute, with PyTorch's type checks."""

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import module_layout, twins
from tests.conftest import assert_close
from toolkit.ao.nn import intrinsic as nni

_CASES = {
    "ConvReLU1d": (lambda nn: [nn.Conv1d(2, 3, 3), nn.ReLU()], (2, 2, 6)),
    "ConvReLU2d": (lambda nn: [nn.Conv2d(2, 3, 3), nn.ReLU()], (2, 2, 5, 5)),
    "ConvReLU3d": (lambda nn: [nn.Conv3d(2, 3, 2), nn.ReLU()], (1, 2, 3, 3, 3)),
    "LinearReLU": (lambda nn: [nn.Linear(4, 3), nn.ReLU()], (2, 4)),
    "ConvBn1d": (lambda nn: [nn.Conv1d(2, 3, 3), nn.BatchNorm1d(3)], (2, 2, 6)),
    "ConvBn2d": (lambda nn: [nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)], (2, 2, 5, 5)),
    "ConvBn3d": (lambda nn: [nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3)], (1, 2, 3, 3, 3)),
    "ConvBnReLU1d": (lambda nn: [nn.Conv1d(2, 3, 3), nn.BatchNorm1d(3), nn.ReLU()], (2, 2, 6)),
    "ConvBnReLU2d": (lambda nn: [nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()], (2, 2, 5, 5)),
    "ConvBnReLU3d": (lambda nn: [nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), nn.ReLU()], (1, 2, 3, 3, 3)),
    "BNReLU2d": (lambda nn: [nn.BatchNorm2d(3), nn.ReLU()], (2, 3, 4, 4)),
    "BNReLU3d": (lambda nn: [nn.BatchNorm3d(3), nn.ReLU()], (1, 3, 2, 2, 2)),
    "LinearBn1d": (lambda nn: [nn.Linear(4, 3), nn.BatchNorm1d(3)], (5, 4)),
    "LinearLeakyReLU": (lambda nn: [nn.Linear(4, 3), nn.LeakyReLU(0.1)], (2, 4)),
    "LinearTanh": (lambda nn: [nn.Linear(4, 3), nn.Tanh()], (2, 4)),
}


@pytest.mark.parametrize("name", list(_CASES))
@pytest.mark.parametrize("training", [True, False])
def test_fused_module_computes_its_parts(name, training):
    parts, shape = _CASES[name]

    def build(lib):
        mod = (nni if lib is toolkit else torch.ao.nn.intrinsic)
        return lib.nn.Sequential(getattr(mod, name)(*parts(lib.nn)))
    ours, theirs = twins(build)
    ours.train(training)
    theirs.train(training)
    assert module_layout(ours) == module_layout(theirs)
    assert isinstance(ours[0], nni._FusedModule) and isinstance(ours[0], toolkit.nn.Sequential)
    x = np.random.default_rng(len(name)).standard_normal(shape).astype(np.float32)
    assert_close(ours(toolkit.tensor(x)), theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)


def test_wrong_part_types_are_refused():
    with pytest.raises(AssertionError, match="Incorrect types for input modules: Conv1d and ReLU"):
        nni.ConvReLU2d(toolkit.nn.Conv1d(1, 1, 1), toolkit.nn.ReLU())
    with pytest.raises(AssertionError, match="Incorrect types"):
        nni.ConvBnReLU2d(toolkit.nn.Conv2d(1, 1, 1), toolkit.nn.BatchNorm2d(1))


def test_conv_add_modules():
    conv = toolkit.nn.Conv2d(1, 2, 1)
    m = nni.ConvAddReLU2d(conv, lambda a, b: a + b, toolkit.nn.ReLU())
    x = toolkit.ones(1, 1, 2, 2)
    assert_close(m(x, -x), toolkit.nn.functional.relu(conv(x) - x))
    assert_close(nni.ConvAdd2d(conv, lambda a, b: a + b)(x, x), conv(x) + x)


def test_old_names():
    import toolkit.nn.intrinsic as old
    assert old.ConvReLU2d is nni.ConvReLU2d and old._FusedModule is nni._FusedModule
