"""fuse_modules / fuse_modules_qat against torch: eval-mode folding of BatchNorm into conv and linear weights
(the folded weights and the outputs), the nni fused types for each sequence in eval and train mode, hook
transfer, nested names, and the refusals."""

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import module_layout, twins
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

tQ = torch.ao.quantization

# (sequence builder, input shape)
_SEQUENCES = {
    "conv1d_bn": (lambda nn: [nn.Conv1d(3, 4, 3), nn.BatchNorm1d(4)], (2, 3, 9)),
    "conv1d_bn_relu": (lambda nn: [nn.Conv1d(3, 4, 3), nn.BatchNorm1d(4), nn.ReLU()], (2, 3, 9)),
    "conv2d_bn": (lambda nn: [nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4)], (2, 3, 6, 6)),
    "conv2d_bn_relu": (lambda nn: [nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()], (2, 3, 6, 6)),
    "conv3d_bn": (lambda nn: [nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3)], (1, 2, 4, 4, 4)),
    "conv3d_bn_relu": (lambda nn: [nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), nn.ReLU()], (1, 2, 4, 4, 4)),
    "conv1d_relu": (lambda nn: [nn.Conv1d(3, 4, 3), nn.ReLU()], (2, 3, 9)),
    "conv2d_relu": (lambda nn: [nn.Conv2d(3, 4, 3), nn.ReLU()], (2, 3, 6, 6)),
    "conv3d_relu": (lambda nn: [nn.Conv3d(2, 3, 2), nn.ReLU()], (1, 2, 4, 4, 4)),
    "linear_bn": (lambda nn: [nn.Linear(5, 4), nn.BatchNorm1d(4)], (3, 5)),
    "linear_relu": (lambda nn: [nn.Linear(5, 4), nn.ReLU()], (3, 5)),
    "bn2d_relu": (lambda nn: [nn.BatchNorm2d(3), nn.ReLU()], (2, 3, 4, 4)),
    "bn3d_relu": (lambda nn: [nn.BatchNorm3d(2), nn.ReLU()], (1, 2, 3, 3, 3)),
    "convtranspose2d_bn": (lambda nn: [nn.ConvTranspose2d(3, 4, 3), nn.BatchNorm2d(4)], (2, 3, 5, 5)),
}


def _sequence_twins(key):
    build, shape = _SEQUENCES[key]
    ours, theirs = twins(lambda lib: lib.nn.Sequential(*build(lib.nn)))
    names = [str(i) for i in range(len(ours))]
    x = np.random.default_rng(len(key)).standard_normal(shape).astype(np.float32)
    return ours, theirs, names, x


@pytest.mark.parametrize("key", list(_SEQUENCES))
def test_eval_fusion_matches_torch(key):
    ours, theirs, names, x = _sequence_twins(key)
    f_ours = tq.fuse_modules(ours.eval(), names)
    f_theirs = tQ.fuse_modules(theirs.eval(), names)
    assert module_layout(f_ours) == module_layout(f_theirs)
    for (name, p), (t_name, t_p) in zip(f_ours.named_parameters(), f_theirs.named_parameters()):
        assert name == t_name
        assert_close(p, t_p, atol=1e-6, rtol=1e-6)
    assert_close(f_ours(toolkit.tensor(x)), f_theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)
    assert_close(f_ours(toolkit.tensor(x)), ours(toolkit.tensor(x)), atol=1e-5, rtol=1e-4)  # fusion keeps the math


@pytest.mark.parametrize("key", [k for k in _SEQUENCES if not k.startswith("convtranspose")])
def test_qat_fusion_gives_torch_types_and_outputs(key):
    ours, theirs, names, x = _sequence_twins(key)
    f_ours = tq.fuse_modules_qat(ours.train(), names)
    f_theirs = tQ.fuse_modules_qat(theirs.train(), names)
    assert module_layout(f_ours) == module_layout(f_theirs)
    assert isinstance(f_ours[0], toolkit.ao.nn.intrinsic._FusedModule) == isinstance(
        f_theirs[0], torch.ao.nn.intrinsic._FusedModule)
    assert_close(f_ours(toolkit.tensor(x)), f_theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)


def test_convtranspose_bn_refused_for_qat():
    ours, _, names, _ = _sequence_twins("convtranspose2d_bn")
    with pytest.raises(Exception, match="not yet supported in QAT"):
        tq.fuse_modules_qat(ours.train(), names)


def test_nested_names_several_groups_and_inplace():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU()),
                             nn.Flatten(), nn.Linear(8, 3), nn.ReLU())
    ours, theirs = twins(build)
    groups = [["0.0", "0.1", "0.2"], ["2", "3"]]
    f_ours = tq.fuse_modules(ours.eval(), groups)
    f_theirs = tQ.fuse_modules(theirs.eval(), groups)
    assert module_layout(f_ours) == module_layout(f_theirs)
    assert type(ours[0][0]) is toolkit.nn.Conv2d  # a copy unless inplace
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    assert_close(f_ours(toolkit.tensor(x)), f_theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)
    assert tq.fuse_modules(ours, groups, inplace=True) is ours
    assert module_layout(ours) == module_layout(f_theirs)


def test_hooks_move_to_the_fused_module():
    ours, _, names, x = _sequence_twins("conv2d_relu")
    calls = []
    ours[0].register_forward_pre_hook(lambda m, inp: calls.append("pre"))
    ours[1].register_forward_hook(lambda m, inp, out: calls.append("post"))
    fused = tq.fuse_modules(ours.eval(), names)
    fused(toolkit.tensor(x))
    assert calls == ["pre", "post"]
    assert not fused[1]._forward_hooks


def test_refusals_match_torch():
    ours, _, _, _ = _sequence_twins("conv2d_bn")
    with pytest.raises(AssertionError, match="did not find fuser method"):
        tq.fuse_modules(ours.eval(), ["1", "0"])
    ours[1].train()
    with pytest.raises(AssertionError, match="same mode"):
        tq.fuse_modules(ours, ["0", "1"])


def test_custom_fuser_method_mapping():
    ours, _, names, x = _sequence_twins("linear_relu")

    def fuse(is_qat, linear, relu):
        return toolkit.nn.Sequential(linear, toolkit.nn.ReLU6())
    fused = tq.fuse_modules(ours.eval(), names, fuse_custom_config_dict={
        "additional_fuser_method_mapping": {(toolkit.nn.Linear, toolkit.nn.ReLU): fuse}})
    assert type(fused[0][1]) is toolkit.nn.ReLU6 and type(fused[1]) is toolkit.nn.Identity
