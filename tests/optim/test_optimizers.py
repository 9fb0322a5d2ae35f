"""Optimizers against torch.optim: the same problem, the same initial parameters, parameters compared every step."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import toolkit
import toolkit.optim

from ..conftest import assert_close

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 3))
Y = RNG.standard_normal((8, 2))
W0 = RNG.standard_normal((3, 2)) * 0.5
B0 = RNG.standard_normal((2,)) * 0.1


def _params(lib, dtype):
    dt = getattr(lib, dtype)
    return [lib.tensor(W0.copy(), dtype=dt, requires_grad=True), lib.tensor(B0.copy(), dtype=dt, requires_grad=True)]


def _loss(lib, params, dtype):
    """A small least-squares problem plus a quartic term, so curvature changes along the path."""
    w, b = params
    x = lib.tensor(X, dtype=getattr(lib, dtype))
    y = lib.tensor(Y, dtype=getattr(lib, dtype))
    r = x @ w + b - y
    return (r * r).mean() + 0.05 * (w**4).sum()


def _trajectory(lib, name, kwargs, dtype, steps=20, groups=None):
    params = _params(lib, dtype)
    spec = params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
    opt = getattr(lib.optim, name)(spec, **kwargs)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, params, dtype).backward()
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out, opt, params


# The tolerance rule's accum for one step: the gradient sums x @ w over 3 features, then over the 8 rows.
STEP = 3 + 8


def _assert_trajectories(a, b):
    for step, (pa, pb) in enumerate(zip(a, b)):
        for x, y in zip(pa, pb):  # after k steps a parameter has summed k updates
            assert_close(x, y, accum=(step + 1) * STEP, msg=f"step {step}")


CASES = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1, "eps": 1e-6}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.02, "maximize": True, "amsgrad": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.05, "foreach": False, "capturable": False, "differentiable": False}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.3}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-6, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5}),
    ("RMSprop", {"lr": 0.01, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.3, "maximize": True, "eps": 1e-4}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_steps_match_torch(name, kwargs, dtype):
    ours, _, _ = _trajectory(toolkit, name, kwargs, dtype)
    ref, _, _ = _trajectory(torch, name, kwargs, dtype)
    _assert_trajectories(ours, ref)


@pytest.mark.parametrize(("name", "kwargs"), [("SGD", {"momentum": 0.9}), ("Adam", {}), ("RMSprop", {"centered": True})])
def test_param_groups_with_their_own_options(name, kwargs):
    groups = [{"params": [0], "lr": 0.05}, {"params": [1], "lr": 0.003, "weight_decay": 0.1}]
    ours, opt, _ = _trajectory(toolkit, name, dict(kwargs, lr=0.01), "float64", groups=groups)
    ref, topt, _ = _trajectory(torch, name, dict(kwargs, lr=0.01), "float64", groups=groups)
    _assert_trajectories(ours, ref)
    assert [g["lr"] for g in opt.param_groups] == [0.05, 0.003]
    assert opt.param_groups[0]["weight_decay"] == topt.param_groups[0]["weight_decay"]


def test_skips_params_without_grad_and_step_returns_closure_loss():
    a = toolkit.tensor([1.0, 2.0], requires_grad=True)
    b = toolkit.tensor([3.0], requires_grad=True)
    opt = toolkit.optim.SGD([a, b], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0
    assert_close(a.detach(), np.array([0.8, 1.6], np.float32))
    assert b.grad is None and b.tolist() == [3.0]
    assert toolkit.is_grad_enabled()


def test_step_bumps_version_and_keeps_identity():
    p = toolkit.tensor([1.0, -1.0], requires_grad=True)
    opt = toolkit.optim.Adam([p])
    (p * p).sum().backward()
    v = p._version
    data_before = p
    opt.step()
    assert p._version > v and p is data_before and p.requires_grad and p.grad_fn is None


def test_zero_grad():
    p = toolkit.tensor([1.0, 2.0], requires_grad=True)
    opt = toolkit.optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


@pytest.mark.parametrize(("name", "kwargs"), [("SGD", {"lr": 0.05, "momentum": 0.9}), ("Adam", {"lr": 0.05, "amsgrad": True}),
                                              ("AdamW", {"lr": 0.05}), ("Adagrad", {"lr": 0.1}),
                                              ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5})])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    dtype = "float64"
    _, opt, params = _trajectory(toolkit, name, kwargs, dtype, steps=7)
    _, topt, tparams = _trajectory(torch, name, kwargs, dtype, steps=7)
    sd = opt.state_dict()
    tsd = topt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"] == tsd["param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"]) == [0, 1]
    for i in sd["state"]:
        assert sorted(sd["state"][i]) == sorted(tsd["state"][i])
        for k, v in sd["state"][i].items():
            assert_close(v, tsd["state"][i][k], accum=7 * STEP)  # running sums over 7 steps' gradients
            assert str(v.dtype).split(".")[1] == str(tsd["state"][i][k].dtype).split(".")[1]
    # a fresh optimizer over copies of the parameters picks up where the first left off
    fresh = [toolkit.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    opt2 = getattr(toolkit.optim, name)(fresh, **kwargs)
    opt2.load_state_dict(copy.deepcopy(sd))
    for _ in range(5):
        for o, ps in ((opt, params), (opt2, fresh), (topt, tparams)):
            o.zero_grad()
            _loss(toolkit if ps is not tparams else torch, ps, dtype).backward()
            o.step()
        for a, b, c in zip(params, fresh, tparams):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
            assert_close(a.detach(), c.detach(), accum=12 * STEP)


def test_load_state_dict_casts_state_to_param_dtype_and_checks_sizes():
    p64 = toolkit.tensor(W0, dtype=toolkit.float64, requires_grad=True)
    opt = toolkit.optim.Adam([p64])
    (p64 * p64).sum().backward()
    opt.step()
    sd = opt.state_dict()
    p32 = toolkit.tensor(W0, dtype=toolkit.float32, requires_grad=True)
    opt32 = toolkit.optim.Adam([p32])
    opt32.load_state_dict(sd)
    st = opt32.state[p32]
    assert st["exp_avg"].dtype == toolkit.float32 and st["step"].dtype == toolkit.float32
    assert opt32.param_groups[0]["params"][0] is p32
    two = toolkit.optim.Adam([toolkit.zeros(2, requires_grad=True), toolkit.zeros(2, requires_grad=True)])
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        two.load_state_dict(sd)
    grouped = toolkit.optim.Adam([{"params": [toolkit.zeros(1, requires_grad=True)]},
                                  {"params": [toolkit.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        grouped.load_state_dict(sd)


def test_repr_matches_torch():
    kw = {"lr": 0.1, "momentum": 0.9}
    ours = toolkit.optim.SGD([toolkit.zeros(2, requires_grad=True)], **kw)
    ref = torch.optim.SGD([torch.zeros(2, requires_grad=True)], **kw)
    assert repr(ours) == repr(ref)
    ours = toolkit.optim.Adam([{"params": [toolkit.zeros(1, requires_grad=True)]},
                               {"params": [toolkit.zeros(1, requires_grad=True)], "lr": 0.5}])
    ref = torch.optim.Adam([{"params": [torch.zeros(1, requires_grad=True)]},
                            {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5}])
    assert repr(ours) == repr(ref)


def test_add_param_group_and_errors():
    a, b = toolkit.zeros(2, requires_grad=True), toolkit.zeros(2, requires_grad=True)
    opt = toolkit.optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([a])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {toolkit.zeros(1, requires_grad=True)}})
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got toolkit.Tensor"):
        toolkit.optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        toolkit.optim.Adam([])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        toolkit.optim.SGD([1], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        toolkit.optim.SGD([a * 2], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        toolkit.optim.SGD([a, a], lr=0.1)
    named = toolkit.optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


@pytest.mark.parametrize(("name", "kwargs", "message"), [
    ("SGD", {"lr": -1.0}, "Invalid learning rate: -1.0"),
    ("SGD", {"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
    ("SGD", {"lr": 0.1, "weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("SGD", {"lr": 0.1, "nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", {"lr": 0.1, "nesterov": True, "momentum": 0.9, "dampening": 0.1},
     "Nesterov momentum requires a momentum and zero dampening"),
    ("Adam", {"lr": -0.1}, "Invalid learning rate: -0.1"),
    ("Adam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
    ("Adam", {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0"),
    ("AdamW", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
    ("AdamW", {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
    ("Adam", {"betas": (0.9, 1)}, "Invalid beta parameter at index 1: 1"),
    ("Adagrad", {"lr_decay": -1.0}, "Invalid lr_decay value: -1.0"),
    ("Adagrad", {"initial_accumulator_value": -1.0}, "Invalid initial_accumulator_value value: -1.0"),
    ("RMSprop", {"alpha": -0.5}, "Invalid alpha value: -0.5"),
    ("RMSprop", {"momentum": -0.5}, "Invalid momentum value: -0.5"),
    ("LBFGS", {"lr": -1.0}, "Invalid learning rate: -1.0"),
])
def test_invalid_arguments_match_torch(name, kwargs, message):
    with pytest.raises(ValueError) as ref:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    assert str(ref.value) == message
    with pytest.raises(ValueError) as ours:
        getattr(toolkit.optim, name)([toolkit.zeros(1, requires_grad=True)], **kwargs)
    assert str(ours.value) == message


def test_step_hooks():
    p = toolkit.zeros(1, requires_grad=True)
    opt = toolkit.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    g = toolkit.optim.optimizer.register_optimizer_step_post_hook(lambda o, args, kwargs: calls.append("global"))
    opt.step()
    assert calls == ["pre", "post", "global"]
    h1.remove()
    h2.remove()
    g.remove()
    opt.step()
    assert calls == ["pre", "post", "global"]


def test_tensor_lr_and_parameters():
    """A 1-element tensor lr acts like the number; ``nn.Parameter`` stays a Parameter through steps."""
    ours, _, _ = _trajectory(toolkit, "Adam", {"lr": toolkit.tensor(0.05, dtype=toolkit.float64)}, "float64", 5)
    ref, _, _ = _trajectory(torch, "Adam", {"lr": torch.tensor(0.05, dtype=torch.float64)}, "float64", 5)
    _assert_trajectories(ours, ref)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        toolkit.optim.SGD([toolkit.zeros(1, requires_grad=True)], lr=toolkit.tensor([0.1, 0.2]))
    p = toolkit.nn.Parameter(toolkit.tensor([1.0, -2.0]))
    opt = toolkit.optim.SGD([p], lr=0.5, momentum=0.9)
    (p * p).sum().backward()
    opt.step()
    assert isinstance(p, toolkit.nn.Parameter) and p.tolist() == [0.0, 0.0]
