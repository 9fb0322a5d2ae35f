"""``optim.SparseAdam`` against PyTorch, step by step, on the sparse gradients of ``nn.Embedding(sparse=True)``."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

from ..conftest import assert_close

torch = pytest.importorskip("torch")

W = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)


@pytest.mark.parametrize("options", [{}, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}, {"lr": 0.01,
                                                                                         "maximize": True}])
def test_steps_match_torch(options):
    m = toolkit.nn.Embedding(8, 3, sparse=True)
    tm = torch.nn.Embedding(8, 3, sparse=True)
    with toolkit.no_grad():
        m.weight.copy_(toolkit.from_numpy(W))
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(W))
    opt, topt = toolkit.optim.SparseAdam(m.parameters(), **options), torch.optim.SparseAdam(tm.parameters(),
                                                                                            **options)
    rng = np.random.default_rng(0)
    for _ in range(4):
        idx = rng.integers(0, 8, size=(2, 3))
        target = rng.standard_normal((2, 3, 3)).astype(np.float32)
        opt.zero_grad()
        topt.zero_grad()
        ((m(toolkit.from_numpy(idx)) - toolkit.from_numpy(target)) ** 2).sum().backward()
        ((tm(torch.from_numpy(idx)) - torch.from_numpy(target)) ** 2).sum().backward()
        opt.step()
        topt.step()
        assert_close(m.weight, tm.weight.detach())
        state, tstate = opt.state[m.weight], topt.state[tm.weight]
        assert state["step"] == tstate["step"]
        assert_close(state["exp_avg"], tstate["exp_avg"])
        assert_close(state["exp_avg_sq"], tstate["exp_avg_sq"])


def test_dense_gradient_refused_as_torch():
    p, tp = toolkit.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    (p * 2).sum().backward()
    (tp * 2).sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        torch.optim.SparseAdam([tp]).step()
    with pytest.raises(RuntimeError) as ours:
        toolkit.optim.SparseAdam([p]).step()
    assert str(ours.value) == str(theirs.value)
