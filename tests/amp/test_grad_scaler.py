"""GradScaler("cpu") step for step against torch.amp.GradScaler: scales, skipped steps, parameters."""

from __future__ import annotations

import math
import pickle

import pytest
import torch

import toolkit

from ..conftest import assert_close


def _models():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    m = toolkit.nn.Sequential(toolkit.nn.Linear(4, 8), toolkit.nn.Tanh(), toolkit.nn.Linear(8, 1))
    m.load_state_dict({k: toolkit.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return m, tm


def _train(lib, model, use_amp: bool, steps: int, poison: int | None = None, **scaler_kw):
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", enabled=use_amp, **scaler_kw)
    gen = torch.Generator().manual_seed(1)
    scales, losses = [], []
    for i in range(steps):
        x = torch.randn(6, 4, generator=gen).numpy()
        y = torch.randn(6, 1, generator=gen).numpy()
        if i == poison:
            x[0, 0] = math.inf
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16, enabled=use_amp):
            loss = lib.nn.functional.mse_loss(model(lib.tensor(x)), lib.tensor(y))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        losses.append(loss.item())
    return scaler, scales, losses


@pytest.mark.parametrize("use_amp", [True, False])
def test_training_steps_match_torch(use_amp):
    m, tm = _models()
    s, scales, losses = _train(toolkit, m, use_amp, 5, growth_interval=2)
    ts, tscales, tlosses = _train(torch, tm, use_amp, 5, growth_interval=2)
    assert scales == tscales
    assert_close(toolkit.tensor(losses), torch.tensor(tlosses), rtol=2e-3, atol=1e-4)
    for p, tp in zip(m.parameters(), tm.parameters()):
        assert_close(p, tp.detach(), rtol=2e-3, atol=2e-4)
    assert s.state_dict() == ts.state_dict()


def test_inf_skips_the_step_and_backs_off():
    m, tm = _models()
    before = [p.detach().clone() for p in m.parameters()]
    s, scales, _ = _train(toolkit, m, True, 1, poison=0)
    ts, tscales, _ = _train(torch, tm, True, 1, poison=0)
    assert scales == tscales == [2.0**15]
    for p, b in zip(m.parameters(), before):
        assert_close(p.detach(), b)
    assert s._get_growth_tracker() == ts._get_growth_tracker() == 0


def test_disabled_scaler_passes_through():
    s = toolkit.amp.GradScaler("cpu", enabled=False)
    t = toolkit.ones(2)
    assert s.scale(t) is t and s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()


def test_state_dict_roundtrip_and_errors_as_torch():
    s = toolkit.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
    assert s.state_dict() == torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3).state_dict()
    s2 = toolkit.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    assert s2.get_scale() == 8.0 and s2.get_growth_interval() == 3
    assert pickle.loads(pickle.dumps(s2)).get_scale() == 8.0
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        s2.load_state_dict({})
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        toolkit.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        s2.step(toolkit.optim.SGD([toolkit.zeros(1, requires_grad=True)], lr=1.0))
    scaled = s2.scale([toolkit.ones(1), (toolkit.ones(1),)])
    assert scaled[0].item() == 8.0 and scaled[1][0].item() == 8.0


def test_unscale_then_step_and_double_unscale_refused():
    w = toolkit.ones(2, requires_grad=True)
    opt = toolkit.optim.SGD([w], lr=1.0)
    s = toolkit.amp.GradScaler("cpu", init_scale=4.0)
    s.scale((w * 3).sum()).backward()
    s.unscale_(opt)
    assert_close(w.grad, toolkit.full((2,), 3.0))
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    assert_close(w.detach(), toolkit.full((2,), -2.0))
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        s.step(opt)


def test_legacy_grad_scalers_warn():
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.GradScaler\(args...\)` is deprecated"):
        s = toolkit.cpu.amp.GradScaler(init_scale=2.0)
    assert s.get_scale() == 2.0
    if not toolkit.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
            assert not toolkit.amp.GradScaler().is_enabled()
