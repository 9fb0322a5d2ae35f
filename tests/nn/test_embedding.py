"""Embedding against PyTorch: initialisation with the same seed, lookups, weight gradients, padding, max_norm."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from ..conftest import assert_close

IDX = [[1, 2, 4, 1], [4, 3, 2, 0]]


def test_init_matches_torch_with_same_seed():
    toolkit.manual_seed(0)
    m = nn.Embedding(10, 3, padding_idx=2)
    torch.manual_seed(0)
    tm = torch.nn.Embedding(10, 3, padding_idx=2)
    assert_close(m.weight, tm.weight)
    assert (m.weight.detach().numpy()[2] == 0).all()
    assert repr(m) == repr(tm)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 4, "scale_grad_by_freq": True}])
def test_forward_and_weight_grad(kwargs):
    toolkit.manual_seed(1)
    m = nn.Embedding(5, 3, **kwargs)
    tm = torch.nn.Embedding.from_pretrained(torch.tensor(m.weight.detach().numpy()), freeze=False, **kwargs)
    out, tout = m(toolkit.tensor(IDX)), tm(torch.tensor(IDX))
    assert_close(out, tout)
    g = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(m.weight.grad, tm.weight.grad, accum=2)  # rows 1, 2 and 4 each sum the grads of 2 lookups


def test_int32_and_scalar_indices():
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    for idx in (np.array([3, 0], dtype=np.int32), np.array(2)):
        assert_close(F.embedding(toolkit.tensor(idx), toolkit.tensor(w)),
                     torch.nn.functional.embedding(torch.tensor(idx), torch.tensor(w)))


def test_max_norm_renormalizes_used_rows_in_place():
    w = np.random.default_rng(0).uniform(-2, 2, (6, 4)).astype(np.float32)
    tw, kw = torch.tensor(w), toolkit.tensor(w)
    idx = [[0, 2], [2, 5]]
    out = F.embedding(toolkit.tensor(idx), kw, max_norm=1.5)
    tout = torch.nn.functional.embedding(torch.tensor(idx), tw, max_norm=1.5)
    assert_close(out, tout)
    assert_close(kw, tw)
    m = nn.Embedding(6, 4, max_norm=1.0, norm_type=1.0)
    assert repr(m) == repr(torch.nn.Embedding(6, 4, max_norm=1.0, norm_type=1.0))


def test_from_pretrained():
    w = toolkit.rand(4, 2)
    m = nn.Embedding.from_pretrained(w)
    assert not m.weight.requires_grad
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(toolkit.rand(4))
    assert [n for n, _ in m.named_parameters()] == ["weight"]


def test_errors():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(toolkit.tensor([0]), toolkit.ones(3, 2), padding_idx=-4)
    with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings and embedding_dim"):
        nn.Embedding(3, 2, _weight=toolkit.ones(2, 2))
    with pytest.raises(IndexError, match="index out of range in self"):
        nn.Embedding(3, 2)(toolkit.tensor([3]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got torch.FloatTensor instead"):
        F.embedding(toolkit.tensor([1.0]), toolkit.ones(3, 2))


def test_double_backward_wrt_weight():
    w = toolkit.randn(4, 2, dtype=toolkit.float64, requires_grad=True)
    idx = toolkit.tensor([[0, 3], [3, 1]])
    assert toolkit.autograd.gradgradcheck(lambda w: F.embedding(idx, w) ** 2, (w,))
