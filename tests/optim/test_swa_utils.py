"""``toolkit.optim.swa_utils`` against ``torch.optim.swa_utils``: averaged weights and buffers, BatchNorm
statistics recomputed by ``update_bn``, and the averaging functions' errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.optim

from ..conftest import assert_close

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 4)).astype(np.float32)


def _model(lib):
    """Linear -> BatchNorm1d -> Linear, with the same weights in either library."""
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    if lib is torch:
        return ref
    model = toolkit.nn.Sequential(toolkit.nn.Linear(4, 3), toolkit.nn.BatchNorm1d(3), toolkit.nn.Linear(3, 2))
    model.load_state_dict({k: toolkit.tensor(v.numpy().copy()) for k, v in ref.state_dict().items()})
    return model


def _train_a_little(lib, model, i):
    """Move the weights (a fixed nudge per round) and the BatchNorm statistics (a forward in train mode)."""
    with lib.no_grad():
        for j, p in enumerate(model.parameters()):
            p.add_(lib.tensor(np.sin(np.arange(p.numel()) + i + j).reshape(tuple(p.shape)).astype(np.float32)) * 0.1)
    model.train()
    model(lib.tensor(X * (1 + 0.2 * i)))


def _averaging_run(lib, **kwargs):
    model = _model(lib)
    swa = lib.optim.swa_utils
    resolved = {k: (getattr(swa, v[0])(*v[1:]) if isinstance(v, tuple) else v) for k, v in kwargs.items()}
    averaged = swa.AveragedModel(model, **resolved)
    out = []
    for i in range(5):
        _train_a_little(lib, model, i)
        averaged.update_parameters(model)
        out.append({k: v.detach().numpy().copy() for k, v in averaged.state_dict().items()})
    averaged.eval()
    out.append({"forward": averaged(lib.tensor(X)).detach().numpy()})
    return out


@pytest.mark.parametrize("kwargs", [
    {},
    {"use_buffers": True},
    {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.9)},
    {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.7), "use_buffers": True},
    {"multi_avg_fn": ("get_swa_multi_avg_fn",)},
    {"avg_fn": ("get_ema_avg_fn", 0.8)},
    {"avg_fn": ("get_swa_avg_fn",), "use_buffers": True},
], ids=["swa", "swa-buffers", "ema-multi", "ema-multi-buffers", "swa-multi", "ema", "swa-fn-buffers"])
def test_averaged_model_matches_torch(kwargs):
    ours, ref = _averaging_run(toolkit, **kwargs), _averaging_run(torch, **kwargs)
    for step, (a, b) in enumerate(zip(ours, ref)):
        assert sorted(a) == sorted(b)
        for key in b:
            assert_close(a[key], b[key], accum=8, msg=f"{key} after update {step}")


def test_update_bn_recomputes_running_statistics_like_torch():
    results = []
    for lib in (toolkit, torch):
        model = _model(lib)
        model.eval()
        loader = [lib.tensor(X[:3]), (lib.tensor(X[3:] * 2), lib.tensor([0, 1, 0]))]
        lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        results.append((bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                         int(bn.num_batches_tracked), bn.momentum, model.training))
    assert_close(results[0][0], results[1][0], accum=6)
    assert_close(results[0][1], results[1][1], accum=6)
    assert results[0][2:] == results[1][2:] == (2, 0.1, False)
    plain = toolkit.nn.Linear(2, 2)
    toolkit.optim.swa_utils.update_bn([toolkit.zeros(1, 2)], plain)  # no BatchNorm: nothing to do


@pytest.mark.parametrize(("call", "exc", "message"), [
    (lambda s: s.get_ema_multi_avg_fn(1.5), ValueError, r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\] range."),
    (lambda s: s.get_ema_avg_fn(-0.1), ValueError, r"Invalid decay value -0.1 provided"),
    (lambda s: s.AveragedModel(_lin(s), avg_fn=s.get_swa_avg_fn(), multi_avg_fn=s.get_swa_multi_avg_fn()),
     AssertionError, "Only one of avg_fn and multi_avg_fn should be provided"),
    (lambda s: s.SWALR(_opt(s), swa_lr=0.1, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda s: s.SWALR(_opt(s), swa_lr=0.1, anneal_epochs=-1), ValueError,
     "anneal_epochs must be equal or greater than 0, got -1"),
    (lambda s: s.SWALR(_opt(s), swa_lr=[0.1, 0.2]), ValueError,
     "swa_lr must have the same length as optimizer.param_groups"),
])
def test_errors_match_torch(call, exc, message):
    with pytest.raises(exc, match=message):
        call(torch.optim.swa_utils)
    with pytest.raises(exc, match=message):
        call(toolkit.optim.swa_utils)


def _lib(swa_module):
    return torch if swa_module.__name__.startswith("torch") else toolkit


def _lin(swa_module):
    return _lib(swa_module).nn.Linear(2, 2)


def _opt(swa_module):
    lib = _lib(swa_module)
    return lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.5)


def test_swalr_state_dict_leaves_out_the_anneal_function():
    opt = _opt(toolkit.optim.swa_utils)
    sched = toolkit.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_strategy="linear")
    topt = _opt(torch.optim.swa_utils)
    tsched = torch.optim.swa_utils.SWALR(topt, swa_lr=0.05, anneal_strategy="linear")
    assert sorted(sched.state_dict()) == sorted(tsched.state_dict())
    fresh = toolkit.optim.swa_utils.SWALR(_opt(toolkit.optim.swa_utils), swa_lr=0.05)
    fresh.load_state_dict(sched.state_dict())
    assert fresh.anneal_func is fresh._linear_anneal
