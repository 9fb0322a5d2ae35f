"""Distances and norm-based ops against PyTorch: cdist (p, compute_mode), pdist, dist, cosine_similarity and
pairwise_distance (torch and nn.functional), renorm, frobenius_norm, nuclear_norm, norm_except_dim."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close, to_torch


def _pair(shape, rng, dtype=np.float64, requires_grad=False):
    a = rng.standard_normal(shape).astype(dtype)
    t = toolkit.tensor(a, requires_grad=requires_grad)
    return t, to_torch(t, requires_grad)


def _check_grads(out, expected, pairs, rng):
    g = rng.standard_normal(tuple(expected.shape))
    out.backward(toolkit.tensor(g))
    expected.backward(torch.from_numpy(g))
    for t, tt in pairs:
        assert_close(t.grad, tt.grad)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                  "donot_use_mm_for_euclid_dist"])
def test_cdist(p, mode, rng):
    a, ta = _pair((2, 4, 3), rng, requires_grad=True)
    b, tb = _pair((1, 5, 3), rng, requires_grad=True)
    out, expected = toolkit.cdist(a, b, p=p, compute_mode=mode), torch.cdist(ta, tb, p=p, compute_mode=mode)
    assert_close(out, expected)
    if p != 0:
        _check_grads(out, expected, [(a, ta), (b, tb)], rng)


def test_cdist_errors():
    with pytest.raises(ValueError, match="foo is not a valid value for compute_mode"):
        toolkit.cdist(toolkit.ones(2, 3), toolkit.ones(2, 3), compute_mode="foo")
    for args, msg in (((toolkit.ones(3), toolkit.ones(2, 3)), "cdist only supports at least 2D tensors"),
                      ((toolkit.ones(2, 3), toolkit.ones(2, 4)), "X1 and X2 must have the same number of columns"),
                      ((toolkit.ones(2, 3, dtype=toolkit.int64), toolkit.ones(2, 3, dtype=toolkit.int64)),
                       "cdist only supports floating-point dtypes")):
        with pytest.raises(RuntimeError, match=msg):
            toolkit.cdist(*args)
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        toolkit.cdist(toolkit.ones(2, 3), toolkit.ones(2, 3), p=-1.0)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_pdist_torch_and_functional(p, rng):
    a, ta = _pair((5, 3), rng, requires_grad=True)
    out, expected = F.pdist(a, p), TF.pdist(ta, p)
    assert_close(out, expected)
    assert_close(toolkit.pdist(a, p), torch.pdist(ta, p))
    _check_grads(out, expected, [(a, ta)], rng)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        toolkit.pdist(toolkit.ones(2, 2, 2))


@pytest.mark.parametrize("p", [1, 2, 3.5, math.inf, 0])
def test_dist(p, rng):
    a, ta = _pair((2, 3), rng, requires_grad=True)
    b, tb = _pair((3,), rng, requires_grad=True)
    out, expected = a.dist(b, p), ta.dist(tb, p)
    assert_close(out, expected)
    if p != 0:
        _check_grads(out, expected, [(a, ta), (b, tb)], rng)
    with pytest.raises(RuntimeError, match="input dtype should be either floating point or complex"):
        toolkit.dist(toolkit.ones(2, dtype=toolkit.int64), toolkit.ones(2, dtype=toolkit.int64))


@pytest.mark.parametrize("sa,sb,dim", [((2, 3), (2, 3), 1), ((2, 3), (3,), -1), ((3, 2, 2), (1, 2, 2), 0)])
def test_cosine_similarity(sa, sb, dim, rng):
    a, ta = _pair(sa, rng, requires_grad=True)
    b, tb = _pair(sb, rng, requires_grad=True)
    out, expected = F.cosine_similarity(a, b, dim=dim), TF.cosine_similarity(ta, tb, dim=dim)
    assert_close(out, expected)
    assert_close(toolkit.cosine_similarity(a, b, dim), torch.cosine_similarity(ta, tb, dim))
    _check_grads(out, expected, [(a, ta), (b, tb)], rng)


def test_cosine_similarity_errors_and_zero_vectors():
    zero = toolkit.zeros(2, 3)
    assert_close(F.cosine_similarity(zero, zero), TF.cosine_similarity(torch.zeros(2, 3), torch.zeros(2, 3)))
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point"):
        F.cosine_similarity(toolkit.ones(2, 3, dtype=toolkit.int64), toolkit.ones(2, 3, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        F.cosine_similarity(toolkit.ones(2, 3), toolkit.ones(4))


@pytest.mark.parametrize("p,eps,keepdim", [(2.0, 1e-6, False), (1.0, 1e-6, True), (3.0, 1e-3, False)])
@pytest.mark.parametrize("sa,sb", [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (3,))])
def test_pairwise_distance(p, eps, keepdim, sa, sb, rng):
    a, ta = _pair(sa, rng, requires_grad=True)
    b, tb = _pair(sb, rng, requires_grad=True)
    out = F.pairwise_distance(a, b, p=p, eps=eps, keepdim=keepdim)
    expected = TF.pairwise_distance(ta, tb, p=p, eps=eps, keepdim=keepdim)
    assert_close(out, expected)
    assert_close(toolkit.pairwise_distance(a, b, p, eps, keepdim), torch.pairwise_distance(ta, tb, p, eps, keepdim))
    _check_grads(out, expected, [(a, ta), (b, tb)], rng)


def test_pairwise_distance_integer_input():
    a = toolkit.tensor([[1, 2, 3]])
    out = F.pairwise_distance(a, a + 1)
    expected = TF.pairwise_distance(torch.tensor([[1, 2, 3]]), torch.tensor([[2, 3, 4]]))
    assert_close(out, expected)


def test_renorm_method_inplace_grads_and_errors(rng):
    a, ta = _pair((3, 4), rng, requires_grad=True)
    out, expected = a.renorm(2, 0, 1.0), ta.renorm(2, 0, 1.0)
    assert_close(out, expected)
    _check_grads(out, expected, [(a, ta)], rng)
    b, tb = a.detach().clone(), ta.detach().clone()
    b.renorm_(1, 1, 0.5)
    tb.renorm_(1, 1, 0.5)
    assert_close(b, tb)
    with pytest.raises(RuntimeError, match="renorm: non-positive-norm not supported"):
        toolkit.renorm(b, 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="renorm: input needs at least 2 dimensions, got 1 dimensions"):
        toolkit.renorm(toolkit.ones(3), 2, 0, 1.0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        toolkit.renorm(b, 2, 5, 1.0)


def test_frobenius_nuclear_norm_except_dim(rng):
    a, ta = _pair((2, 3, 4), rng, requires_grad=True)
    assert_close(toolkit.frobenius_norm(a, [0, 2], keepdim=True), torch.frobenius_norm(ta, [0, 2], keepdim=True))
    assert_close(toolkit.nuclear_norm(a), torch.nuclear_norm(ta))
    assert_close(toolkit.nuclear_norm(a, [0, 2]), torch.nuclear_norm(ta, [0, 2]))
    for pw, dim in ((2, 0), (2, 1), (3, -1)):
        assert_close(toolkit.norm_except_dim(a, pw, dim), torch.norm_except_dim(ta, pw, dim))
    out, expected = toolkit.norm_except_dim(a, 2, 1), torch.norm_except_dim(ta, 2, 1)
    _check_grads(out, expected, [(a, ta)], rng)
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3 dimensions instead"):
        toolkit.frobenius_norm(a, [0, 1, 2])
    with pytest.raises(RuntimeError, match="input dtype should be either floating point or complex. Got Long"):
        toolkit.norm_except_dim(toolkit.ones(2, 2, dtype=toolkit.int64))
