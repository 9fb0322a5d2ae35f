"""Autograd through sparse COO tensors against PyTorch: sparse leaves get sparse gradients with their own
pattern, values get dense gradients, and ``sparse.mm`` differentiates in both arguments."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck

from ..conftest import assert_close

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 2], [2, 0, 2, 1]]
VALS = [3.0, 4.0, 5.0, -1.0]
D = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7


def leaves():
    s = toolkit.sparse_coo_tensor(IDX, VALS, (3, 3), requires_grad=True)
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS), (3, 3), requires_grad=True)
    return s, ts


def same_sparse_grad(a, b):
    assert a.is_sparse and b.is_sparse
    a, b = a.coalesce(), b.coalesce()
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    assert_close(a.values(), b.values(), accum=4)


def test_sparse_mm_backward_matches_torch():
    s, ts = leaves()
    d = toolkit.from_numpy(D.copy()).requires_grad_(True)
    td = torch.from_numpy(D.copy()).requires_grad_(True)
    out, tout = toolkit.sparse.mm(s, d), torch.sparse.mm(ts, td)
    assert_close(out, tout.detach(), accum=3)
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    (out * toolkit.from_numpy(w)).sum().backward()
    (tout * torch.from_numpy(w)).sum().backward()
    same_sparse_grad(s.grad, ts.grad)
    assert_close(d.grad, td.grad, accum=4)


def test_to_dense_backward_is_sparse_with_the_pattern():
    s, ts = leaves()
    w = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    (s.to_dense() * toolkit.from_numpy(w)).sum().backward()
    (ts.to_dense() * torch.from_numpy(w)).sum().backward()
    same_sparse_grad(s.grad, ts.grad)


def test_sparse_grads_accumulate():
    s, ts = leaves()
    for _ in range(2):
        s.to_dense().sum().backward()
        ts.to_dense().sum().backward()
    same_sparse_grad(s.grad, ts.grad)


def test_values_get_dense_gradient():
    v = toolkit.tensor(VALS, requires_grad=True)
    tv = torch.tensor(VALS, requires_grad=True)
    s = toolkit.sparse_coo_tensor(IDX, v, (3, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), tv, (3, 3))
    assert s.requires_grad and not s.is_leaf
    w = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    (toolkit.sparse.mm(s.coalesce(), toolkit.from_numpy(w)) ** 2).sum().backward()
    (torch.sparse.mm(ts.coalesce(), torch.from_numpy(w)) ** 2).sum().backward()
    assert_close(v.grad, tv.grad, accum=9)


def test_gradcheck_through_values():
    d = toolkit.from_numpy(D.astype(np.float64)).requires_grad_(True)
    v = toolkit.tensor(VALS, dtype=toolkit.float64, requires_grad=True)

    def f(values, dense):
        s = toolkit.sparse_coo_tensor(IDX, values, (3, 3))
        return toolkit.sparse.mm(s, dense) + (s * 2.0).to_dense().sum() + (-s).coalesce().to_dense()[:, :1]

    assert gradcheck(f, (v, d))


def test_grad_through_sum_and_add():
    s, ts = leaves()
    o = toolkit.sparse_coo_tensor([[0], [0]], [1.0], (3, 3))
    to = torch.sparse_coo_tensor(torch.tensor([[0], [0]]), torch.tensor([1.0]), (3, 3))
    (toolkit.sparse.sum(s + o) * 3).backward()
    (torch.sparse.sum(ts + to) * 3).backward()
    # PyTorch's add passes the sum's pattern through; toolkit's gradients keep the leaf's pattern: equal there.
    same_sparse_grad(s.grad, ts.grad.sparse_mask(ts.detach().coalesce()))
