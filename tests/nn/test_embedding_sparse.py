"""``nn.Embedding(sparse=True)`` against PyTorch: an uncoalesced sparse weight gradient with one row per
lookup (padding rows dropped), its accumulation, and SGD steps on it."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from ..conftest import assert_close

torch = pytest.importorskip("torch")

IDX = [[1, 2, 4], [4, 3, 1]]
W = np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)


def modules(**kw):
    m = nn.Embedding(6, 3, sparse=True, **kw)
    tm = torch.nn.Embedding(6, 3, sparse=True, **kw)
    with toolkit.no_grad():
        m.weight.copy_(toolkit.from_numpy(W))
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(W))
    return m, tm


def same_grad(a, b):
    assert a.is_sparse and b.is_sparse
    assert a.is_coalesced() == b.is_coalesced()
    np.testing.assert_array_equal(a._indices().numpy(), b._indices().numpy())
    assert_close(a._values(), b._values())
    a, b = a.coalesce(), b.coalesce()
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    assert_close(a.values(), b.values())


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}])
def test_sparse_weight_grad_matches_torch(kw):
    m, tm = modules(**kw)
    g = np.arange(18.0, dtype=np.float32).reshape(2, 3, 3)
    out, tout = m(toolkit.tensor(IDX)), tm(torch.tensor(IDX))
    assert_close(out, tout.detach())
    (out * toolkit.from_numpy(g)).sum().backward()
    (tout * torch.from_numpy(g)).sum().backward()
    same_grad(m.weight.grad, tm.weight.grad)


def test_scale_grad_by_freq_refused_in_backward():
    m, tm = modules(scale_grad_by_freq=True)
    with pytest.raises(RuntimeError) as theirs:
        tm(torch.tensor(IDX)).sum().backward()
    with pytest.raises(RuntimeError) as ours:
        m(toolkit.tensor(IDX)).sum().backward()
    assert str(ours.value) == str(theirs.value)


def test_functional_and_accumulation():
    w = toolkit.from_numpy(W.copy()).requires_grad_(True)
    tw = torch.from_numpy(W.copy()).requires_grad_(True)
    for _ in range(2):
        F.embedding(toolkit.tensor(IDX), w, sparse=True).sum().backward()
        torch.nn.functional.embedding(torch.tensor(IDX), tw, sparse=True).sum().backward()
    same_grad(w.grad, tw.grad)


@pytest.mark.parametrize("options", [{"lr": 0.1}, {"lr": 0.1, "momentum": 0.9}, {"lr": 0.1, "momentum": 0.9,
                                                                              "nesterov": True}])
def test_sgd_steps_on_sparse_grads(options):
    m, tm = modules()
    opt, topt = toolkit.optim.SGD(m.parameters(), **options), torch.optim.SGD(tm.parameters(), **options)
    for step in range(3):
        idx = [[step, 5 - step], [1, 1]]
        opt.zero_grad()
        topt.zero_grad()
        (m(toolkit.tensor(idx)) ** 2).sum().backward()
        (tm(torch.tensor(idx)) ** 2).sum().backward()
        opt.step()
        topt.step()
        assert_close(m.weight, tm.weight.detach())


def test_sgd_weight_decay_refuses_sparse_grads():
    m, tm = modules()
    m(toolkit.tensor(IDX)).sum().backward()
    tm(torch.tensor(IDX)).sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        torch.optim.SGD(tm.parameters(), lr=0.1, weight_decay=0.1).step()
    with pytest.raises(RuntimeError) as ours:
        toolkit.optim.SGD(m.parameters(), lr=0.1, weight_decay=0.1).step()
    assert str(ours.value) == str(theirs.value)

