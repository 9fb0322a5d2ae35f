"""The eager-mode workflow against torch.ao.quantization on twin models: qconfig propagation, where prepare puts
observers (same names, same types, same hooks), calibrated qparams, prepare_qat's forward/backward numbers over
training steps, convert's module types and int8 weights, quantize_dynamic, and static quantization end to end.

Converting needs the int8 modules of ``toolkit.ao.nn.quantized`` (and ``.dynamic``); those tests skip, naming
the missing class, until it exists."""

import importlib

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import (
    CONV_NET_FUSE,
    align_bn_sqrt,
    assert_step_matches,
    conv_net,
    lstm_model,
    mlp,
    module_layout,
    twins,
)
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = [pytest.mark.filterwarnings("ignore:Please use quant_min"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")]
tQ = torch.ao.quantization


def _require(package: str, *names: str) -> None:
    """Skip unless ``toolkit.ao.nn.<package>`` defines every class in ``names``."""
    full = f"toolkit.ao.nn.{package}"
    mod = pytest.importorskip(full)
    for name in names:
        if not hasattr(mod, name):
            pytest.skip(f"{full}.{name} does not exist yet")


def _inputs(seed: int = 0, n: int = 3, shape=(8, 1, 7, 7)):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * (1 + i)).astype(np.float32) for i in range(n)]


def _prepared(qconfig_name: str = "x86", fuse: bool = True):
    ours, theirs = twins(conv_net)
    ours.eval()
    theirs.eval()
    if fuse:
        ours = tq.fuse_modules(ours, CONV_NET_FUSE)
        theirs = tQ.fuse_modules(theirs, CONV_NET_FUSE)
    if qconfig_name == "default":
        ours.qconfig, theirs.qconfig = tq.default_qconfig, tQ.default_qconfig
    else:
        ours.qconfig, theirs.qconfig = tq.get_default_qconfig(qconfig_name), tQ.get_default_qconfig(qconfig_name)
    return tq.prepare(ours), tQ.prepare(theirs)


def _observers(model):
    return {n: m for n, m in model.named_modules() if n.endswith("activation_post_process")}


# ------------------------------------------------------------------ propagation and placement
def test_propagate_qconfig_by_type_name_and_own_attribute():
    ours, theirs = twins(conv_net)
    for model, Q, lib in ((ours, tq, toolkit), (theirs, tQ, torch)):
        model.fc2.qconfig = None
        Q.propagate_qconfig_(model, {"": Q.default_qconfig, lib.nn.Conv2d: Q.default_per_channel_qconfig,
                                     "conv2": None})
    for (name, a), (_, b) in zip(ours.named_modules(), theirs.named_modules()):
        qa, qb = getattr(a, "qconfig", "missing"), getattr(b, "qconfig", "missing")
        if qb is None or qb == "missing":
            assert qa == qb, name
        else:
            assert qa is not None and qa.weight().__class__.__name__ == qb.weight().__class__.__name__, name


@pytest.mark.parametrize("qconfig_name", ["x86", "fbgemm", "qnnpack", "default"])
@pytest.mark.parametrize("fuse", [True, False])
def test_prepare_places_observers_as_torch(qconfig_name, fuse):
    ours, theirs = _prepared(qconfig_name, fuse)
    assert module_layout(ours) == module_layout(theirs)
    for (name, a), (_, b) in zip(ours.named_modules(), theirs.named_modules()):
        assert len(a._forward_hooks) == len(b._forward_hooks), name
        assert len(a._forward_pre_hooks) == len(b._forward_pre_hooks), name


def test_prepare_skips_none_qconfig_and_dropout_and_keeps_original():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1), nn.Sequential(nn.Linear(4, 3), nn.ReLU6()),
                             nn.Linear(3, 2))
    ours, theirs = twins(build)
    for model, Q in ((ours, tq), (theirs, tQ)):
        model.qconfig = Q.default_qconfig
        model[3].qconfig = None
    p_ours, p_theirs = tq.prepare(ours), tQ.prepare(theirs)
    assert module_layout(p_ours) == module_layout(p_theirs)
    assert module_layout(ours) == module_layout(theirs)  # not inplace: the originals have no observers
    assert not any(n.endswith("activation_post_process") for n, _ in ours.named_modules())
    assert tq.prepare(ours, inplace=True) is ours


def test_prepare_warns_without_qconfig():
    ours, _ = twins(conv_net)
    with pytest.warns(UserWarning, match="None of the submodule got qconfig applied"):
        tq.prepare(ours)


def test_memoryless_activation_observer_uses_a_pre_hook():
    ours, theirs = twins(mlp)
    for model, Q in ((ours, tq), (theirs, tQ)):
        model.qconfig = Q.QConfig(activation=Q.MovingAverageMinMaxObserver.with_args(averaging_constant=1),
                                  weight=Q.default_weight_observer)
    p_ours, p_theirs = tq.prepare(ours), tQ.prepare(theirs)
    assert len(p_ours[0]._forward_pre_hooks) == len(p_theirs[0]._forward_pre_hooks) == 1
    assert len(p_ours[0]._forward_hooks) == len(p_theirs[0]._forward_hooks) == 0


@pytest.mark.parametrize("qconfig_name", ["x86", "qnnpack", "default"])
def test_calibrated_qparams_match_torch(qconfig_name):
    ours, theirs = _prepared(qconfig_name)
    for x in _inputs():
        y_ours, y_theirs = ours(toolkit.tensor(x)), theirs(torch.tensor(x))
        assert_close(y_ours, y_theirs, atol=1e-5, rtol=1e-5)
    t_obs = _observers(theirs)
    for name, obs in _observers(ours).items():
        scale, zp = obs.calculate_qparams()
        t_scale, t_zp = t_obs[name].calculate_qparams()
        assert_close(scale, t_scale, rtol=1e-6, atol=0)
        assert_close(zp, t_zp, rtol=0, atol=0)


def test_add_quant_dequant_and_quant_wrapper():
    ours, theirs = twins(mlp)
    for model, Q in ((ours, tq), (theirs, tQ)):
        model[4].qconfig = Q.default_qconfig
    w_ours, w_theirs = tq.add_quant_dequant(ours), tQ.add_quant_dequant(theirs)
    assert module_layout(w_ours) == module_layout(w_theirs)
    assert type(w_ours[4]).__name__ == "QuantWrapper"
    x = _inputs(shape=(2, 8), n=1)[0]
    assert_close(w_ours(toolkit.tensor(x)), w_theirs(torch.tensor(x)), atol=1e-6, rtol=1e-6)


# ------------------------------------------------------------------ quantization-aware training
@pytest.mark.parametrize("version", [0, 1])
def test_prepare_qat_layout_and_training_steps_match_torch(version):
    ours, theirs = twins(conv_net)
    ours = tq.fuse_modules_qat(ours.train(), CONV_NET_FUSE)
    theirs = tQ.fuse_modules_qat(theirs.train(), CONV_NET_FUSE)
    ours.qconfig = tq.get_default_qat_qconfig("x86", version)
    theirs.qconfig = tQ.get_default_qat_qconfig("x86", version)
    ours, theirs = tq.prepare_qat(ours), tQ.prepare_qat(theirs)
    assert module_layout(ours) == module_layout(theirs)
    opt_ours = toolkit.optim.SGD(ours.parameters(), lr=0.05)
    opt_theirs = torch.optim.SGD(theirs.parameters(), lr=0.05)
    for x in _inputs(seed=3):
        align_bn_sqrt(ours, theirs)
        assert_step_matches(ours, theirs, x, weights=("conv1.weight", "fc1.weight", "fc2.weight"))
        for opt in (opt_ours, opt_theirs):
            opt.step()
            opt.zero_grad()
    assert_close(ours.conv1.bn.running_mean, theirs.conv1.bn.running_mean, atol=1e-6, rtol=1e-5)
    assert_close(ours.fc2.activation_post_process.scale, theirs.fc2.activation_post_process.scale, rtol=1e-5)


def test_prepare_qat_refuses_eval_mode_and_attaches_fixed_qparams_to_sigmoid():
    ours, _ = twins(mlp)
    with pytest.raises(AssertionError, match="training mode"):
        tq.prepare_qat(ours.eval())

    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Sigmoid())
    ours, theirs = twins(build)
    ours.qconfig, theirs.qconfig = tq.default_qat_qconfig, tQ.default_qat_qconfig
    p_ours, p_theirs = tq.prepare_qat(ours.train()), tQ.prepare_qat(theirs.train())
    assert module_layout(p_ours) == module_layout(p_theirs)
    assert type(p_ours[1].activation_post_process).__name__ == "FixedQParamsFakeQuantize"


# ------------------------------------------------------------------ convert
def test_convert_with_an_empty_mapping_only_removes_observers():
    ours, theirs = _prepared("x86")
    c_ours = tq.convert(ours, mapping={})
    c_theirs = tQ.convert(theirs, mapping={})
    assert module_layout(c_ours) == module_layout(c_theirs)
    assert not hasattr(c_ours.fc2, "qconfig") and not c_ours.fc2._forward_hooks
    kept = tq.convert(ours, mapping={}, remove_qconfig=False)
    assert hasattr(kept.fc2, "activation_post_process") and hasattr(kept.fc2, "qconfig")


def _int8_module_pairs(ours, theirs):
    t_mods = dict(theirs.named_modules())
    for name, m in ours.named_modules():
        if hasattr(t_mods[name], "weight") and callable(t_mods[name].weight):
            yield name, m, t_mods[name]


@pytest.mark.parametrize("qconfig_name", ["x86", "default"])
def test_convert_gives_torch_module_types_and_int8_weights(qconfig_name):
    _require("quantized", "Quantize", "DeQuantize", "Linear", "Conv2d")
    _require("intrinsic.quantized", "ConvReLU2d", "LinearReLU")
    ours, theirs = _prepared(qconfig_name)
    for x in _inputs():
        ours(toolkit.tensor(x))
        theirs(torch.tensor(x))
    c_ours, c_theirs = tq.convert(ours), tQ.convert(theirs)
    assert module_layout(c_ours) == module_layout(c_theirs)
    for _name, a, b in _int8_module_pairs(c_ours, c_theirs):
        assert_close(a.weight().int_repr(), b.weight().int_repr(), rtol=0, atol=0)
    x = _inputs(seed=9, n=1)[0]
    out_ours = c_ours.quant(toolkit.tensor(x))
    out_theirs = c_theirs.quant(torch.tensor(x))
    assert_close(out_ours.int_repr(), out_theirs.int_repr(), rtol=0, atol=0)


def test_static_quantization_of_a_conv_net_gives_torch_int8_outputs():
    _require("quantized", "Quantize", "DeQuantize", "Linear", "Conv2d")
    _require("intrinsic.quantized", "ConvReLU2d", "LinearReLU")
    ours, theirs = twins(conv_net)
    ours = tq.fuse_modules(ours.eval(), CONV_NET_FUSE)
    theirs = tQ.fuse_modules(theirs.eval(), CONV_NET_FUSE)
    ours.qconfig, theirs.qconfig = tq.get_default_qconfig("x86"), tQ.get_default_qconfig("x86")
    batches = _inputs(seed=4)

    def calibrate(model, lib):
        for x in batches:
            model(lib.tensor(x))

    q_ours = tq.quantize(ours, calibrate, [toolkit])
    q_theirs = tQ.quantize(theirs, calibrate, [torch])
    assert module_layout(q_ours) == module_layout(q_theirs)
    x = _inputs(seed=11, n=1)[0]
    assert_close(q_ours(toolkit.tensor(x)), q_theirs(torch.tensor(x)), rtol=0, atol=0)
    q_ours.dequant, q_theirs.dequant = toolkit.nn.Identity(), torch.nn.Identity()  # keep the int8 output
    assert_close(q_ours(toolkit.tensor(x)).int_repr(), q_theirs(torch.tensor(x)).int_repr(), rtol=0, atol=0)


def test_quantize_qat_converts_to_torch_int8_model():
    _require("quantized", "Quantize", "DeQuantize", "Linear", "Conv2d")
    _require("intrinsic.quantized", "ConvReLU2d", "LinearReLU")
    ours, theirs = twins(conv_net)
    ours = tq.fuse_modules_qat(ours.train(), CONV_NET_FUSE)
    theirs = tQ.fuse_modules_qat(theirs.train(), CONV_NET_FUSE)
    ours.qconfig = tq.get_default_qat_qconfig("x86", 0)
    theirs.qconfig = tQ.get_default_qat_qconfig("x86", 0)

    ours, theirs = tq.prepare_qat(ours), tQ.prepare_qat(theirs)
    opt_ours = toolkit.optim.SGD(ours.parameters(), lr=0.02)
    opt_theirs = torch.optim.SGD(theirs.parameters(), lr=0.02)
    for x in _inputs(seed=5, n=2):  # the two trainings in lockstep, the BatchNorm variances kept aligned
        align_bn_sqrt(ours, theirs)
        for model, lib, opt in ((ours, toolkit, opt_ours), (theirs, torch, opt_theirs)):
            model(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
    align_bn_sqrt(ours, theirs)
    q_ours, q_theirs = tq.convert(ours.eval()), tQ.convert(theirs.eval())
    assert module_layout(q_ours) == module_layout(q_theirs)
    for _name, a, b in _int8_module_pairs(q_ours, q_theirs):
        assert_close(a.weight().int_repr(), b.weight().int_repr(), rtol=0, atol=0)
    x = _inputs(seed=12, n=1)[0]
    assert_close(q_ours(toolkit.tensor(x)), q_theirs(torch.tensor(x)), rtol=0, atol=0)


def test_quantize_qat_runs_the_training_function_then_converts():
    _require("quantized", "Quantize", "DeQuantize", "Linear", "Conv2d")
    ours, _ = twins(mlp)
    model = toolkit.nn.Sequential(tq.QuantStub(), ours, tq.DeQuantStub())
    model.qconfig = tq.default_qat_qconfig
    seen = []

    def train(prepared, steps):
        seen.append((prepared.training, type(prepared[1][0]).__name__, type(prepared[1][0]).__module__))
        for x in _inputs(shape=(4, 8), n=steps):
            prepared(toolkit.tensor(x))
    quantized = tq.quantize_qat(model.eval(), train, [2])
    assert seen == [(True, "Linear", "toolkit.ao.nn.qat.modules.linear")]
    assert type(quantized[1][0]).__name__ == "Linear" and "quantized" in type(quantized[1][0]).__module__
    assert type(model[1][0]) is toolkit.nn.Linear  # not inplace


# ------------------------------------------------------------------ dynamic quantization
def test_quantize_dynamic_mlp_matches_torch():
    _require("quantized.dynamic", "Linear")
    ours, theirs = twins(mlp)
    q_ours = tq.quantize_dynamic(ours)
    q_theirs = tQ.quantize_dynamic(theirs)
    assert module_layout(q_ours) == module_layout(q_theirs)
    for _name, a, b in _int8_module_pairs(q_ours, q_theirs):
        assert_close(a.weight().int_repr(), b.weight().int_repr(), rtol=0, atol=0)
    x = _inputs(shape=(5, 8), n=1)[0]
    assert_close(q_ours(toolkit.tensor(x)), q_theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)
    assert type(ours[0]).__name__ == "Linear" and type(ours[0]) is toolkit.nn.Linear  # not inplace


def test_quantize_dynamic_with_a_set_and_a_dict():
    _require("quantized.dynamic", "Linear")
    ours, theirs = twins(mlp)
    q_ours = tq.quantize_dynamic(ours, {"0", "4"})
    q_theirs = tQ.quantize_dynamic(theirs, {"0", "4"})
    assert module_layout(q_ours) == module_layout(q_theirs)
    q_ours = tq.quantize_dynamic(ours, {toolkit.nn.Linear: tq.per_channel_dynamic_qconfig})
    q_theirs = tQ.quantize_dynamic(theirs, {torch.nn.Linear: tQ.per_channel_dynamic_qconfig})
    assert module_layout(q_ours) == module_layout(q_theirs)
    x = _inputs(shape=(3, 8), n=1)[0]
    assert_close(q_ours(toolkit.tensor(x)), q_theirs(torch.tensor(x)), atol=1e-5, rtol=1e-5)


def test_quantize_dynamic_lstm_model_matches_torch():
    _require("quantized.dynamic", "Linear", "LSTM")
    ours, theirs = twins(lstm_model)
    q_ours, q_theirs = tq.quantize_dynamic(ours), tQ.quantize_dynamic(theirs)
    assert module_layout(q_ours) == module_layout(q_theirs)
    x = _inputs(shape=(4, 2, 6), n=1)[0]
    assert_close(q_ours(toolkit.tensor(x)), q_theirs(torch.tensor(x)), atol=1e-4, rtol=1e-4)


def test_quantize_dynamic_refuses_unknown_dtypes():
    ours, _ = twins(mlp)
    with pytest.raises(ValueError, match="Don't know how to quantize"):
        tq.quantize_dynamic(ours, dtype=toolkit.qint32)


def test_mappings_resolve_when_the_quantized_package_exists():
    mod = importlib.util.find_spec("toolkit.ao.nn.quantized")
    if mod is None:
        pytest.skip("toolkit.ao.nn.quantized does not exist yet")
    _require("quantized", "Linear")
    assert tq.get_default_static_quant_module_mappings()[toolkit.nn.Linear].__name__ == "Linear"


def test_quantize_dynamic_float16_is_refused_clearly():
    _require("quantized.dynamic", "Linear")
    ours, _ = twins(mlp)
    with pytest.raises(NotImplementedError, match="float16"):
        tq.quantize_dynamic(ours, dtype=toolkit.float16)
