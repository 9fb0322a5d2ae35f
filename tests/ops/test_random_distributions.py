"""cauchy_, log_normal_, geometric_, poisson and binomial: equal to PyTorch for equal seeds, with the
right moments over many samples, and PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit


def same(a, b):
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert an.shape == bn.shape and an.dtype == bn.dtype, (an.shape, bn.shape, an.dtype, bn.dtype)
    np.testing.assert_array_equal(an, bn)


def seeded(seed):
    toolkit.manual_seed(seed)
    torch.manual_seed(seed)


DRAWS = [
    lambda m, d, n: m.empty(n, dtype=d).cauchy_(1.5, 0.25),
    lambda m, d, n: m.empty(n, dtype=d).cauchy_(),
    lambda m, d, n: m.empty(n, dtype=d).log_normal_(),
    lambda m, d, n: m.empty(n, dtype=d).log_normal_(-0.5, 0.3),
    lambda m, d, n: m.empty(n, dtype=d).geometric_(0.2),
    lambda m, d, n: m.poisson(m.linspace(0, 30, n, dtype=d)),
    lambda m, d, n: m.binomial(m.linspace(0, 200, n, dtype=d), m.linspace(0, 1, n, dtype=d)),
]


@pytest.mark.parametrize("seed", [0, 7, 2 ** 40 + 7])
@pytest.mark.parametrize("n", [1, 5, 16, 17, 300])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("draw", range(len(DRAWS)))
def test_matches_torch_bit_for_bit(seed, n, dtype, draw):
    seeded(seed)
    for _ in range(2):  # consecutive calls share the stream (and the cached normal sample)
        same(DRAWS[draw](toolkit, getattr(toolkit, dtype), n), DRAWS[draw](torch, getattr(torch, dtype), n))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float16"])
def test_geometric_other_dtypes(dtype):
    seeded(3)
    same(toolkit.empty(50, dtype=getattr(toolkit, dtype)).geometric_(0.4),
         torch.empty(50, dtype=getattr(torch, dtype)).geometric_(0.4))


def test_non_contiguous_fills_in_memory_order():
    seeded(5)
    same(toolkit.zeros(6, 5).t().cauchy_(), torch.zeros(6, 5).t().cauchy_())
    seeded(5)
    rates = np.arange(20.0).reshape(4, 5).T
    same(toolkit.poisson(toolkit.tensor(rates)), torch.poisson(torch.tensor(rates)))


def test_binomial_broadcasts():
    seeded(9)
    count, prob = np.full((3, 1), 40.0), np.array([[0.1, 0.5, 0.95]])
    t = toolkit.binomial(toolkit.tensor(count), toolkit.tensor(prob))
    assert t.shape == (3, 3)
    assert ((t.numpy() >= 0) & (t.numpy() <= 40)).all()


N = 200_000


def test_moments():
    toolkit.manual_seed(11)
    x = toolkit.empty(N, dtype=toolkit.float64).log_normal_(0.2, 0.5).numpy()
    assert abs(x.mean() - math.exp(0.2 + 0.125)) < 0.01
    assert abs(np.log(x).std() - 0.5) < 0.005
    c = toolkit.empty(N, dtype=toolkit.float64).cauchy_(2.0, 3.0).numpy()
    assert abs(np.median(c) - 2.0) < 0.05
    assert abs((np.quantile(c, 0.75) - np.quantile(c, 0.25)) / 2 - 3.0) < 0.1  # half IQR is sigma
    g = toolkit.empty(N, dtype=toolkit.int64).geometric_(0.25).numpy()
    assert g.min() >= 1 and abs(g.mean() - 4.0) < 0.05 and abs(g.var() - 12.0) < 0.5
    for rate in (0.7, 4.0, 25.0, 1000.0):  # both of ATen's samplers
        p = toolkit.poisson(toolkit.full((N,), rate, dtype=toolkit.float64)).numpy()
        assert abs(p.mean() - rate) < 5 * math.sqrt(rate / N)
        assert abs(p.var() / rate - 1) < 0.03
    for count, prob in ((12, 0.3), (200, 0.2), (200, 0.9), (5, 0.95)):  # inversion and BTRS, both tails
        b = toolkit.binomial(toolkit.full((N,), float(count)), toolkit.full((N,), prob)).numpy()
        assert abs(b.mean() - count * prob) < 5 * math.sqrt(count * prob * (1 - prob) / N)
        assert abs(b.var() / (count * prob * (1 - prob)) - 1) < 0.03
        assert b.min() >= 0 and b.max() <= count


def test_poisson_records_a_zero_gradient():
    rates = toolkit.tensor([1.0, 3.0], requires_grad=True)
    toolkit.poisson(rates).sum().backward()
    assert rates.grad.tolist() == [0.0, 0.0]


ERRORS = [
    (lambda m: m.zeros(3, dtype=m.int64).cauchy_(), RuntimeError, "dtype must be a floating point but you specified long int"),
    (lambda m: m.zeros(3).cauchy_(0, 0), RuntimeError, "sigma > 0.0, but found sigma=0"),
    (lambda m: m.zeros(3).log_normal_(0, -1), RuntimeError, "std > 0.0, but found std=-1"),
    (lambda m: m.zeros(3, dtype=m.int64).log_normal_(), NotImplementedError, "log_normal_cpu"),
    (lambda m: m.zeros(3).geometric_(1), RuntimeError, r"p to be in \(0, 1\), but got p=1"),
    (lambda m: m.zeros(3, dtype=m.bool).geometric_(0.5), NotImplementedError, "geometric_cpu"),
    (lambda m: m.poisson(m.tensor([-1.0])), RuntimeError, "invalid Poisson rate"),
    (lambda m: m.poisson(m.tensor([1])), NotImplementedError, "poisson_cpu"),
    (lambda m: m.binomial(m.tensor([1]), m.tensor([1])), ValueError, "floating-point dtypes for count, got: Long"),
    (lambda m: m.binomial(m.tensor([1.0]), m.tensor([0.5], dtype=m.float64)), RuntimeError,
     "Found dtype Double but expected Float"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    fn, exc, msg = ERRORS[case]
    with pytest.raises(exc, match=msg):
        fn(torch)
    with pytest.raises(exc, match=msg):
        fn(toolkit)
