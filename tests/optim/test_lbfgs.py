"""LBFGS against torch.optim.LBFGS on Rosenbrock: iterates, loss and evaluation counts after every step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.optim


def _rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _run(lib, dtype, steps, **kwargs):
    dt = getattr(lib, dtype)
    x = lib.tensor([-1.5, 2.0], dtype=dt, requires_grad=True)
    y = lib.tensor([0.5, -0.5, 1.0], dtype=dt, requires_grad=True)
    opt = lib.optim.LBFGS([x, y], **kwargs)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x) + ((y - 0.3) ** 2).sum() * (1 + x[0] ** 2)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[x]
        out.append((float(loss.detach()), x.detach().numpy().copy(), y.detach().numpy().copy(), st["func_evals"], st["n_iter"]))
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "max_iter": 5, "history_size": 3},
    {"line_search_fn": "strong_wolfe", "max_iter": 7, "history_size": 4, "max_eval": 9},
    {"lr": 0.1, "max_iter": 3, "tolerance_change": 1e-5},
])
def test_lbfgs_iterates_match_torch(kwargs, dtype):
    # float32 rounding differences (1 ulp in a dot product) grow along the path of an unsafeguarded
    # quasi-Newton method, so float32 compares the first step (up to 20 iterations); float64 six steps.
    # Not the tolerance rule of tests/conftest.py: the error is amplified by the iteration (curvature pairs,
    # line search), not accumulated, so these bounds are what the method gives.
    steps = 6 if dtype == "float64" else 1
    ours = _run(toolkit, dtype, steps, **kwargs)
    ref = _run(torch, dtype, steps, **kwargs)
    rtol, atol = (1e-7, 1e-9) if dtype == "float64" else (1e-3, 2e-4)
    for i, (a, b) in enumerate(zip(ours, ref)):
        assert a[3:] == b[3:], f"step {i}: evaluation counts {a[3:]} != {b[3:]}"
        np.testing.assert_allclose(a[0], b[0], rtol=rtol, atol=atol, err_msg=f"loss, step {i}")
        np.testing.assert_allclose(a[1], b[1], rtol=rtol, atol=atol, err_msg=f"x, step {i}")
        np.testing.assert_allclose(a[2], b[2], rtol=rtol, atol=atol, err_msg=f"y, step {i}")


def test_lbfgs_converges_on_rosenbrock():
    x = toolkit.tensor([-1.5, 2.0], dtype=toolkit.float64, requires_grad=True)
    opt = toolkit.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=100)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-5)


def test_lbfgs_errors():
    p = toolkit.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        toolkit.optim.LBFGS([{"params": [p]}, {"params": [toolkit.zeros(1, requires_grad=True)]}])
    opt = toolkit.optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = ((p - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    assert toolkit.optim.LBFGS([p]).defaults["max_eval"] == 25


@pytest.mark.parametrize("lib", [torch, toolkit], ids=["torch", "toolkit"])
def test_lbfgs_step_without_a_closure_is_refused_as_pytorch_refuses_it(lib):
    opt = lib.optim.LBFGS([lib.zeros(2, requires_grad=True)])
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        opt.step(None)
