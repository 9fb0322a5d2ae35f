"""The eager-mode helpers against torch.ao.quantization on twin models: the observer and fake-quant switches that
QAT recipes apply to a whole model, saving and restoring observer statistics, ``default_eval_fn``, and the fuser
functions (``fuse_conv_bn``...) called directly."""

import copy

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.quantization.twin_models import CONV_NET_FUSE, align_bn_sqrt, conv_net, twins
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = [pytest.mark.filterwarnings("ignore:Please use quant_min"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore:must run observer")]
tQ = torch.ao.quantization


def _batch(seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((4, 1, 7, 7)) * scale).astype(np.float32)


def _qat_twins(version: int):
    ours, theirs = twins(conv_net)
    ours = tq.fuse_modules_qat(ours.train(), CONV_NET_FUSE)
    theirs = tQ.fuse_modules_qat(theirs.train(), CONV_NET_FUSE)
    ours.qconfig = tq.get_default_qat_qconfig("x86", version)
    theirs.qconfig = tQ.get_default_qat_qconfig("x86", version)
    return tq.prepare_qat(ours), tQ.prepare_qat(theirs)


def _fake_quants(model, base) -> dict:
    return {name: m for name, m in model.named_modules() if isinstance(m, base)}


def _run(ours, theirs, x: np.ndarray):
    align_bn_sqrt(ours, theirs)
    y_ours, y_theirs = ours(toolkit.tensor(x)), theirs(torch.tensor(x))
    assert_close(y_ours, y_theirs, atol=1e-5, rtol=1e-5)
    return y_ours


def _apply_both(ours, theirs, switch: str) -> None:
    """``model.apply`` the switch of that name to each twin, from its own library."""
    ours.apply(getattr(tq, switch))
    theirs.apply(getattr(tQ, switch))


def _qparams(model, base) -> dict:
    return {name: (m.scale.numpy().copy(), m.zero_point.numpy().copy())
            for name, m in _fake_quants(model, base).items()}


# ------------------------------------------------------------------ enable/disable on a prepared QAT model
@pytest.mark.parametrize("version", [0, 1])
def test_disable_observer_freezes_qparams_as_torch(version):
    ours, theirs = _qat_twins(version)
    _run(ours, theirs, _batch(0))
    _apply_both(ours, theirs, "disable_observer")
    frozen = _qparams(ours, tq.FakeQuantizeBase)
    _run(ours, theirs, _batch(1, scale=5.0))  # a wider range would move every observer
    after = _qparams(ours, tq.FakeQuantizeBase)
    for name, (scale, zero_point) in frozen.items():
        np.testing.assert_array_equal(after[name][0], scale)
        np.testing.assert_array_equal(after[name][1], zero_point)
    t_fqs = _fake_quants(theirs, tQ.FakeQuantizeBase)
    for name, fq in _fake_quants(ours, tq.FakeQuantizeBase).items():
        assert_close(fq.observer_enabled, t_fqs[name].observer_enabled)
        assert_close(fq.scale, t_fqs[name].scale, rtol=1e-6)
        assert int(fq.observer_enabled[0]) == 0 and int(fq.fake_quant_enabled[0]) == 1
    _apply_both(ours, theirs, "enable_observer")
    _run(ours, theirs, _batch(2, scale=5.0))
    moved = _qparams(ours, tq.FakeQuantizeBase)
    assert any(not np.array_equal(moved[n][0], frozen[n][0]) for n in frozen)


@pytest.mark.parametrize("version", [0, 1])
def test_disable_fake_quant_passes_through_as_torch(version):
    ours, theirs = _qat_twins(version)
    _run(ours, theirs, _batch(0))
    _apply_both(ours, theirs, "disable_fake_quant")
    x = _batch(3)
    y = _run(ours, theirs, x)
    probe_model = copy.deepcopy(ours)
    probe_model.apply(tq.disable_observer)  # so that probing with any shape leaves the statistics alone
    for fq in _fake_quants(probe_model, tq.FakeQuantizeBase).values():
        assert int(fq.fake_quant_enabled[0]) == 0
        probe = toolkit.tensor(_batch(4))
        np.testing.assert_array_equal(fq(probe).numpy(), probe.numpy())  # exactly the input
    _apply_both(ours, theirs, "enable_fake_quant")
    y_quantized = _run(ours, theirs, x)
    assert not np.array_equal(y.detach().numpy(), y_quantized.detach().numpy())


def test_switches_ignore_other_modules():
    model = toolkit.nn.Sequential(toolkit.nn.Linear(3, 3), tq.default_fake_quant())
    for switch in (tq.disable_observer, tq.disable_fake_quant):
        model.apply(switch)
    assert int(model[1].observer_enabled[0]) == 0 and int(model[1].fake_quant_enabled[0]) == 0
    for switch in (tq.enable_observer, tq.enable_fake_quant):
        switch(model[0])  # not a fake-quantize module: nothing to do
        model.apply(switch)
    assert int(model[1].observer_enabled[0]) == 1 and int(model[1].fake_quant_enabled[0]) == 1


# ------------------------------------------------------------------ observer statistics: save and restore
def _calibrated(qconfig: str, batches=(0, 1)):
    ours, theirs = twins(conv_net)
    ours, theirs = ours.eval(), theirs.eval()
    ours.qconfig, theirs.qconfig = tq.get_default_qconfig(qconfig), tQ.get_default_qconfig(qconfig)
    ours, theirs = tq.prepare(ours), tQ.prepare(theirs)
    data = [(_batch(seed), None) for seed in batches]
    tq.default_eval_fn(ours, [(toolkit.tensor(x), t) for x, t in data])
    tQ.default_eval_fn(theirs, [(torch.tensor(x), t) for x, t in data])
    return ours, theirs


@pytest.mark.parametrize("qconfig", ["x86", "qnnpack"])
def test_observer_state_dict_matches_torch(qconfig):
    ours, theirs = _calibrated(qconfig)
    state, t_state = tq.get_observer_state_dict(ours), tQ.get_observer_state_dict(theirs)
    assert list(state) == list(t_state)
    assert all("activation_post_process" in k for k in state)
    for key, value in state.items():
        if key.endswith("histogram"):
            # the observed activations differ from torch's by float rounding, so a value lying on a bin edge
            # may be counted in the neighbouring bin: same total, a few bins apart
            diff = np.abs(value.numpy() - t_state[key].numpy())
            assert (diff > 0).sum() <= 4 and value.numpy().sum() == pytest.approx(t_state[key].numpy().sum())
        else:
            assert_close(value, t_state[key], atol=1e-5, rtol=1e-5)
    assert state._metadata.keys() == t_state._metadata.keys()


@pytest.mark.parametrize("qconfig", ["x86", "qnnpack"])
def test_observer_state_dict_round_trip(qconfig):
    ours, theirs = _calibrated(qconfig)
    fresh, t_fresh = _calibrated(qconfig, batches=(7,))
    tq.load_observer_state_dict(fresh, tq.get_observer_state_dict(ours))
    tQ.load_observer_state_dict(t_fresh, tQ.get_observer_state_dict(theirs))
    t_observers = dict(t_fresh.named_modules())
    for name, m in fresh.named_modules():
        if isinstance(m, tq.ObserverBase) and hasattr(m, "calculate_qparams"):
            scale, zero_point = m.calculate_qparams()
            t_scale, t_zero_point = t_observers[name].calculate_qparams()
            assert_close(scale, t_scale, atol=1e-6, rtol=1e-5)
            assert_close(zero_point, t_zero_point)
    # a state dict saved by torch loads too
    converted = {k: toolkit.tensor(v.numpy()) for k, v in tQ.get_observer_state_dict(theirs).items()}
    other, _ = _calibrated(qconfig, batches=(9,))
    tq.load_observer_state_dict(other, converted)
    for key, value in tq.get_observer_state_dict(other).items():
        assert_close(value, converted[key])


def test_observer_state_dict_round_trip_on_a_qat_model():
    ours, theirs = _qat_twins(0)
    _run(ours, theirs, _batch(0))
    fresh, t_fresh = _qat_twins(0)
    tq.load_observer_state_dict(fresh, tq.get_observer_state_dict(ours))
    tQ.load_observer_state_dict(t_fresh, tQ.get_observer_state_dict(theirs))
    t_state = tQ.get_observer_state_dict(t_fresh)
    state = tq.get_observer_state_dict(fresh)
    assert list(state) == list(t_state)
    for key, value in state.items():
        assert_close(value, t_state[key], atol=1e-6, rtol=1e-6)


def test_load_observer_state_dict_tolerates_partial_dicts_as_torch():
    """Observers load non-strictly, as in PyTorch: an empty dict, or one with an extra entry, changes nothing
    it does not name and raises nothing."""
    ours, theirs = _calibrated("x86")
    before = {k: v.numpy().copy() for k, v in tq.get_observer_state_dict(ours).items()}
    tq.load_observer_state_dict(ours, {})
    tQ.load_observer_state_dict(theirs, {})
    state = tq.get_observer_state_dict(ours)
    state["quant.activation_post_process.extra"] = toolkit.tensor([1.0])
    t_state = tQ.get_observer_state_dict(theirs)
    t_state["quant.activation_post_process.extra"] = torch.tensor([1.0])
    tq.load_observer_state_dict(ours, state)
    tQ.load_observer_state_dict(theirs, t_state)
    for key, value in tq.get_observer_state_dict(ours).items():
        np.testing.assert_array_equal(value.numpy(), before[key])


# ------------------------------------------------------------------ fuser functions
def _conv_bn(lib, transpose: bool = False):
    nn = lib.nn
    conv = nn.ConvTranspose2d(3, 4, 3) if transpose else nn.Conv2d(3, 4, 3, padding=1)
    return nn.Sequential(conv, nn.BatchNorm2d(4), nn.ReLU())


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_folds_like_torch(transpose):
    ours, theirs = twins(lambda lib: _conv_bn(lib, transpose))
    ours, theirs = ours.eval(), theirs.eval()
    fuse, t_fuse = (tq.fuse_convtranspose_bn, tQ.fuse_convtranspose_bn) if transpose else \
        (tq.fuse_conv_bn, tQ.fuse_conv_bn)
    fused, t_fused = fuse(False, ours[0], ours[1]), t_fuse(False, theirs[0], theirs[1])
    assert type(fused).__name__ == type(t_fused).__name__
    assert_close(fused.weight, t_fused.weight, atol=1e-6, rtol=1e-6)
    assert_close(fused.bias, t_fused.bias, atol=1e-6, rtol=1e-6)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_close(fused(toolkit.tensor(x)), t_fused(torch.tensor(x)), atol=1e-5, rtol=1e-5)


def test_fuse_conv_bn_relu_and_linear_bn_like_torch():
    ours, theirs = twins(_conv_bn)
    ours, theirs = ours.eval(), theirs.eval()
    fused, t_fused = tq.fuse_conv_bn_relu(False, *ours), tQ.fuse_conv_bn_relu(False, *theirs)
    assert type(fused).__name__ == type(t_fused).__name__ == "ConvReLU2d"
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_close(fused(toolkit.tensor(x)), t_fused(torch.tensor(x)), atol=1e-5, rtol=1e-5)
    qat = tq.fuse_conv_bn_relu(True, *twins(_conv_bn)[0].train())
    assert type(qat).__name__ == "ConvBnReLU2d"

    lin, t_lin = twins(lambda lib: lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.BatchNorm1d(4)))
    folded, t_folded = tq.fuse_linear_bn(False, *lin.eval()), tQ.fuse_linear_bn(False, *t_lin.eval())
    assert_close(folded.weight, t_folded.weight, atol=1e-6, rtol=1e-6)
    assert_close(folded.bias, t_folded.bias, atol=1e-6, rtol=1e-6)


def test_fuse_convtranspose_bn_refuses_qat_as_torch():
    ours, theirs = twins(lambda lib: _conv_bn(lib, transpose=True))
    with pytest.raises(Exception, match="Fusing ConvTranspose\\+BatchNorm not yet supported in QAT."):
        tq.fuse_convtranspose_bn(True, ours[0], ours[1])
    with pytest.raises(Exception, match="Fusing ConvTranspose\\+BatchNorm not yet supported in QAT."):
        tQ.fuse_convtranspose_bn(True, theirs[0], theirs[1])


def test_get_fuser_method_new_matches_wildcards_as_torch():
    def fuser(is_qat, *modules):
        return modules

    nn, t_nn = toolkit.nn, torch.nn
    wildcard, t_wildcard = tq.utils.MatchAllNode, tQ.utils.MatchAllNode
    mapping = {(nn.ReLU, wildcard): fuser, (nn.Linear, nn.ReLU): "exact"}
    t_mapping = {(t_nn.ReLU, t_wildcard): fuser, (t_nn.Linear, t_nn.ReLU): "exact"}
    assert tq.get_fuser_method_new((nn.ReLU, nn.Conv2d), mapping) is fuser
    assert tQ.get_fuser_method_new((t_nn.ReLU, t_nn.Conv2d), t_mapping) is fuser
    assert tq.get_fuser_method_new((nn.Linear, nn.ReLU), mapping) == "exact"
    with pytest.raises(AssertionError, match="did not find fuser method for: "):
        tq.get_fuser_method_new((nn.Tanh, nn.Conv2d), mapping)
    with pytest.raises(AssertionError, match="did not find fuser method for: "):
        tQ.get_fuser_method_new((t_nn.Tanh, t_nn.Conv2d), t_mapping)
