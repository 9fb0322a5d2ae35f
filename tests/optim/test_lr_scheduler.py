"""Learning-rate schedulers against torch.optim.lr_scheduler: lr (and momentum) sequences over 50 steps."""

from __future__ import annotations

import inspect
import sys
import warnings

import pytest
import torch

import toolkit
import toolkit.optim
from toolkit.optim import lr_scheduler

STEPS = 50


def _optimizer(lib, name="SGD", groups=2, **kwargs):
    specs = [{"params": [lib.zeros(1, requires_grad=True)], "lr": 0.1 * (i + 1)} for i in range(groups)]
    return getattr(lib.optim, name)(specs, **kwargs)


def _sequence(lib, make, name="SGD", opt_kwargs=None, metrics=None, key=None):
    opt = _optimizer(lib, name, **(opt_kwargs or {"momentum": 0.9} if name == "SGD" else opt_kwargs or {}))
    sched = make(lib.optim.lr_scheduler, opt)
    out = [(list(sched.get_last_lr()), [g[key] for g in opt.param_groups] if key else None)]
    for i in range(STEPS):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        out.append((list(sched.get_last_lr()), [g[key] for g in opt.param_groups] if key else None))
    return out


def _swa_utils(lr_scheduler_module):
    """``swa_utils`` beside the given ``lr_scheduler`` module (torch's or toolkit's)."""
    return sys.modules[lr_scheduler_module.__name__.rsplit(".", 1)[0] + ".swa_utils"]


def _scheduler_classes(lib):
    """Every scheduler class of ``lib.optim.lr_scheduler`` and ``lib.optim.swa_utils``, by name."""
    base = (lib.optim.lr_scheduler.LRScheduler, lib.optim.lr_scheduler.ReduceLROnPlateau)
    found = {}
    for module in (lib.optim.lr_scheduler, lib.optim.swa_utils):
        found.update({n: c for n, c in vars(module).items() if inspect.isclass(c) and issubclass(c, base)})
    return found


def _lam(epoch):
    return 0.95**epoch


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "CosineAnnealingLR-long": lambda m, o: m.CosineAnnealingLR(o, T_max=60),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lr_lambda=_lam),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, lr_lambda=[_lam, lambda e: 1.0 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lr_lambda=lambda e: 0.97),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=6),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler([m.ExponentialLR(o, gamma=0.97), m.StepLR(o, 10, 0.5)]),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=6, step_size_down=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.97),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=STEPS),
    "OneCycleLR-linear": lambda m, o: m.OneCycleLR(o, max_lr=0.5, epochs=5, steps_per_epoch=10,
                                                   anneal_strategy="linear", pct_start=0.25),
    "SequentialLR-three": lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.9),
            m.PolynomialLR(o, total_iters=15)], milestones=[6, 20]),
    "ChainedScheduler-optimizer": lambda m, o: m.ChainedScheduler(
        [m.LinearLR(o, start_factor=0.5, total_iters=10), m.MultiStepLR(o, [15, 30], 0.5)], optimizer=o),
    "SWALR": lambda m, o: _swa_utils(m).SWALR(o, swa_lr=0.05, anneal_epochs=8),
    "SWALR-linear": lambda m, o: _swa_utils(m).SWALR(o, swa_lr=[0.02, 0.3], anneal_epochs=5,
                                                     anneal_strategy="linear"),
    "SWALR-no-anneal": lambda m, o: _swa_utils(m).SWALR(o, swa_lr=0.01, anneal_epochs=0),
    "OneCycleLR-three_phase": lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=STEPS + 1, three_phase=True,
                                                        div_factor=10.0, final_div_factor=100.0),
}


# Tested elsewhere in this file: the bases (through every scheduler) and ReduceLROnPlateau (with metrics).
COVERED_ELSEWHERE = {"LRScheduler", "_LRScheduler", "ReduceLROnPlateau"}


def test_every_torch_scheduler_has_a_twin_with_its_signature_and_a_sequence_test():
    ours, ref = _scheduler_classes(toolkit), _scheduler_classes(torch)
    assert sorted(ours) == sorted(ref)
    for name, cls in ref.items():
        sig = [(p.name, p.kind, p.default) for p in inspect.signature(cls.__init__).parameters.values()]
        assert [(p.name, p.kind, p.default) for p in inspect.signature(ours[name].__init__).parameters.values()] == sig
        for method in ("step", "get_last_lr", "state_dict", "load_state_dict"):
            assert hasattr(ours[name], method), (name, method)
    assert set(ref) == {key.split("-")[0] for key in SCHEDULERS} | COVERED_ELSEWHERE


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_lr_sequence_matches_torch(name):
    key = "momentum" if name.startswith(("OneCycleLR", "CyclicLR")) else None
    ours = _sequence(toolkit, SCHEDULERS[name], key=key)
    ref = _sequence(torch, SCHEDULERS[name], key=key)
    assert ours == ref


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR"])
def test_cycle_momentum_uses_adam_beta1(name):
    make = SCHEDULERS[name]
    ours = _sequence(toolkit, make, name="Adam", opt_kwargs={"betas": (0.9, 0.99)}, key="betas")
    ref = _sequence(torch, make, name="Adam", opt_kwargs={"betas": (0.9, 0.99)}, key="betas")
    assert ours == ref
    assert ours[10][1][0][1] == 0.99


@pytest.mark.parametrize("kwargs", [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2, "cooldown": 3},
    {"threshold_mode": "abs", "threshold": 0.05, "patience": 1, "min_lr": [0.02, 0.05]},
    {"mode": "max", "threshold_mode": "abs", "patience": 0, "factor": 0.7, "eps": 1e-3},
])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [1.0 / (i + 1) if i < 10 else 0.1 + 0.01 * ((i * 7) % 5) for i in range(STEPS)]
    make = lambda m, o: m.ReduceLROnPlateau(o, **kwargs)  # noqa: E731
    assert _sequence(toolkit, make, metrics=metrics) == _sequence(torch, make, metrics=metrics)
    metrics_t = [toolkit.tensor(v) for v in metrics]
    assert _sequence(toolkit, make, metrics=metrics_t) == _sequence(torch, make, metrics=metrics)


def test_step_before_optimizer_step_warns():
    opt = _optimizer(toolkit)
    sched = lr_scheduler.StepLR(opt, 3)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        sched.step()
    opt = _optimizer(toolkit)
    sched = lr_scheduler.StepLR(opt, 3)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_state_dict_round_trip():
    opt = _optimizer(toolkit)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    topt = _optimizer(torch)
    tsched = torch.optim.lr_scheduler.CosineAnnealingLR(topt, T_max=10)
    for _ in range(4):
        opt.step(), sched.step(), topt.step(), tsched.step()
    sd = sched.state_dict()
    assert sorted(sd) == sorted(tsched.state_dict())
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    opt2 = _optimizer(toolkit)
    opt2.load_state_dict(opt.state_dict())
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
    sched2.load_state_dict(sd)
    for _ in range(6):
        opt.step(), sched.step(), opt2.step(), sched2.step(), topt.step(), tsched.step()
        assert sched.get_last_lr() == sched2.get_last_lr() == tsched.get_last_lr()


def test_epoch_argument_uses_closed_form():
    def run(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 3, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(7)
        return sched.get_last_lr()

    assert run(toolkit) == run(torch)


@pytest.mark.parametrize(("make", "exc", "message"), [
    (lambda m, o: m.StepLR(object(), 3), TypeError, "object is not an Optimizer"),
    (lambda m, o: m.StepLR(o, 3, last_epoch=4), KeyError, "param 'initial_lr' is not specified in param_groups"),
    (lambda m, o: m.LambdaLR(o, [_lam]), ValueError, "Expected 2 lr_lambdas, but got 1"),
    (lambda m, o: m.ConstantLR(o, factor=2.0), ValueError, "Constant multiplicative factor expected to be between"),
    (lambda m, o: m.LinearLR(o, start_factor=0), ValueError, "Starting multiplicative factor expected to be greater"),
    (lambda m, o: m.ReduceLROnPlateau(o, factor=1.0), ValueError, r"Factor should be < 1.0."),
    (lambda m, o: m.ReduceLROnPlateau(o, mode="median"), ValueError, "mode median is unknown!"),
    (lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="x"), ValueError, "threshold mode x is unknown!"),
    (lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "expected 2 min_lrs, got 1"),
    (lambda m, o: m.OneCycleLR(o, max_lr=1.0), ValueError, r"You must define either total_steps OR"),
    (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError, "Expected positive integer total_steps"),
    (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=9, pct_start=1), ValueError,
     "Expected float between 0 and 1 pct_start, but got 1"),
    (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=9, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda m, o: m.OneCycleLR(o, max_lr=[1.0], total_steps=9), ValueError,
     "max_lr must have the same length as optimizer.param_groups. max_lr has 1 values, param_groups has 2."),
    (lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2)], milestones=[3]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more"),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "Expected positive integer T_0, but got 0"),
    (lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="foo"), ValueError, "mode is invalid and scale_fn is None"),
])
def test_errors_match_torch(make, exc, message):
    with pytest.raises(exc, match=message):
        make(torch.optim.lr_scheduler, _optimizer(torch))
    with pytest.raises(exc, match=message):
        make(lr_scheduler, _optimizer(toolkit))


def test_one_cycle_past_total_steps_and_momentum_requirement():
    opt = _optimizer(toolkit)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
        sched.step()
    opt = _optimizer(toolkit, "Adagrad")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_state_dict_keys_match_torch_and_reload_continues(name):
    """Every scheduler: ``state_dict()`` has torch's keys, and a fresh twin that loads it goes on identically."""
    make = SCHEDULERS[name]
    opt, topt = _optimizer(toolkit, momentum=0.9), _optimizer(torch, momentum=0.9)
    sched, tsched = make(lr_scheduler, opt), make(torch.optim.lr_scheduler, topt)
    for _ in range(12):
        opt.step(), sched.step(), topt.step(), tsched.step()
    sd = sched.state_dict()
    assert sorted(sd) == sorted(tsched.state_dict())
    opt2 = _optimizer(toolkit, momentum=0.9)
    sched2 = make(lr_scheduler, opt2)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sd)
    for _ in range(20):
        opt.step(), sched.step(), opt2.step(), sched2.step(), topt.step(), tsched.step()
        assert sched.get_last_lr() == sched2.get_last_lr() == tsched.get_last_lr()


def _warnings_of_first_steps(lib, make, optimizer_first):
    opt = _optimizer(lib, momentum=0.9)
    sched = make(lib.optim.lr_scheduler, opt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            if optimizer_first:
                opt.step()
            sched.step()
        try:
            sched.get_lr()
            outcome = None
        except NotImplementedError:  # SequentialLR and ChainedScheduler have no get_lr of their own
            outcome = NotImplementedError
    return [(w.category, str(w.message)) for w in caught], outcome


@pytest.mark.parametrize("optimizer_first", [False, True], ids=["scheduler-first", "optimizer-first"])
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_warnings_match_torch(name, optimizer_first):
    """Every scheduler warns as torch does: ``step()`` before ``optimizer.step()``, ``get_lr()`` outside ``step``."""
    ours = _warnings_of_first_steps(toolkit, SCHEDULERS[name], optimizer_first)
    assert ours == _warnings_of_first_steps(torch, SCHEDULERS[name], optimizer_first)
