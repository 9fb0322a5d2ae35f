"""Random ops against PyTorch with equal seeds: the values must be identical, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops._generator import Generator

from ..conftest import TORCH_DTYPES


def same(a, b):
    """Bitwise equality of a toolkit and a torch tensor, with shape and dtype."""
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert an.shape == bn.shape, (an.shape, bn.shape)
    assert an.dtype == bn.dtype, (an.dtype, bn.dtype)
    np.testing.assert_array_equal(an, bn)


def seeded(seed):
    toolkit.manual_seed(seed)
    torch.manual_seed(seed)


SEEDS = [0, 1, 42, 2 ** 40 + 7, 67280421310721]
SHAPES = [(), (1,), (3, 4), (4, 4), (15,), (16,), (17,), (5, 7, 3), (1000,), (33, 31)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rand_and_randn_match_torch(seed, shape, dtype):
    seeded(seed)
    for _ in range(3):  # consecutive calls share the stream and the cached normal sample
        same(toolkit.rand(shape, dtype=getattr(toolkit, dtype)), torch.rand(shape, dtype=getattr(torch, dtype)))
        same(toolkit.randn(shape, dtype=getattr(toolkit, dtype)), torch.randn(shape, dtype=getattr(torch, dtype)))


def test_rand_float16_and_varargs_sizes():
    seeded(3)
    same(toolkit.rand(2, 5, dtype=toolkit.float16), torch.rand(2, 5, dtype=torch.float16))
    same(toolkit.rand(4, 3), torch.rand(4, 3))
    same(toolkit.randn(4, 3), torch.randn(4, 3))


def test_large_draws_use_compiled_kernels_and_match():
    seeded(5)
    same(toolkit.rand(100_003), torch.rand(100_003))
    same(toolkit.randn(100_003), torch.randn(100_003))
    same(toolkit.randn(50_001, dtype=toolkit.float64), torch.randn(50_001, dtype=torch.float64))
    same(toolkit.rand(3), torch.rand(3))


def test_numpy_and_compiled_word_streams_agree():
    from toolkit.ops._rng_numba import mt_fill

    a, b = Generator().manual_seed(9), Generator().manual_seed(9)
    for n in (1, 623, 624, 625, 5000, 3, 10_000, 1247):
        compiled = np.empty(n, dtype=np.uint32)
        mt_fill(b._mt, b._pos, compiled)
        np.testing.assert_array_equal(a._random32_numpy(n), compiled)
    np.testing.assert_array_equal(a._state_bytes(), b._state_bytes())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1.3, 2.9), (5.0, 5.0), (-100.0, 1e-3)])
def test_uniform_(dtype, bounds):
    seeded(11)
    a = toolkit.empty(40, dtype=getattr(toolkit, dtype)).uniform_(*bounds)
    b = torch.empty(40, dtype=getattr(torch, dtype)).uniform_(*bounds)
    same(a, b)


@pytest.mark.parametrize("n", [5, 16, 40, 1001])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_with_mean_and_std(n, dtype):
    seeded(12)
    same(toolkit.empty(n, dtype=getattr(toolkit, dtype)).normal_(0.37, 1.9),
         torch.empty(n, dtype=getattr(torch, dtype)).normal_(0.37, 1.9))
    same(toolkit.normal(2.0, 3.0, (n,), dtype=getattr(toolkit, dtype)),
         torch.normal(2.0, 3.0, (n,), dtype=getattr(torch, dtype)))


def test_normal_on_non_contiguous_uses_scalar_path_in_memory_order():
    seeded(13)
    a = toolkit.zeros(8, 6).t()
    b = torch.zeros(8, 6).t()
    a.normal_()
    b.normal_()
    same(a, b)
    same(toolkit.zeros(10, 4)[:, 1].uniform_(), torch.zeros(10, 4)[:, 1].uniform_())
    same(toolkit.randn(3), torch.randn(3))


def test_normal_tensor_overloads():
    seeded(14)
    rng = np.random.default_rng(0)
    mean = rng.standard_normal((4, 5)).astype(np.float32)
    std = (rng.random((4, 5)) + 0.2).astype(np.float32)
    tm, ts = toolkit.tensor(mean), toolkit.tensor(std)
    pm, ps = torch.tensor(mean), torch.tensor(std)
    same(toolkit.normal(tm, ts), torch.normal(pm, ps))
    same(toolkit.normal(tm, 2.5), torch.normal(pm, 2.5))
    same(toolkit.normal(tm), torch.normal(pm))
    same(toolkit.normal(0.5, ts), torch.normal(0.5, ps))
    same(toolkit.normal(tm[:1], ts[:, :1]), torch.normal(pm[:1], ps[:, :1]))


def test_normal_tensor_records_a_zero_gradient():
    mean = toolkit.zeros(3, requires_grad=True)
    out = toolkit.normal(mean, 1.0)
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(mean.grad.numpy(), np.zeros(3, np.float32))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64",
                                   "float16"])
def test_random_(dtype):
    seeded(2)
    same(toolkit.empty(50, dtype=getattr(toolkit, dtype)).random_(),
         torch.empty(50, dtype=getattr(torch, dtype)).random_())
    if dtype != "bool":
        same(toolkit.empty(50, dtype=getattr(toolkit, dtype)).random_(3, 9),
             torch.empty(50, dtype=getattr(torch, dtype)).random_(3, 9))
        same(toolkit.empty(50, dtype=getattr(toolkit, dtype)).random_(7),
             torch.empty(50, dtype=getattr(torch, dtype)).random_(7))
        same(toolkit.empty(20, dtype=getattr(toolkit, dtype)).random_(1, None),
             torch.empty(20, dtype=getattr(torch, dtype)).random_(1, None))


def test_random_full_int64_range():
    seeded(4)
    same(toolkit.empty(10, dtype=toolkit.int64).random_(-2 ** 63, None),
         torch.empty(10, dtype=torch.int64).random_(-2 ** 63, None))


def test_randint():
    seeded(6)
    same(toolkit.randint(10, (3, 4)), torch.randint(10, (3, 4)))
    same(toolkit.randint(-5, 17, (100,)), torch.randint(-5, 17, (100,)))
    same(toolkit.randint(0, 2 ** 40, (50,)), torch.randint(0, 2 ** 40, (50,)))
    same(toolkit.randint(3, 10, size=(2, 2), dtype=toolkit.float32),
         torch.randint(3, 10, size=(2, 2), dtype=torch.float32))
    same(toolkit.randint(low=2, high=9, size=(5,)), torch.randint(low=2, high=9, size=(5,)))
    same(toolkit.randint(0, 2 ** 28, (5,), dtype=toolkit.int32), torch.randint(0, 2 ** 28, (5,), dtype=torch.int32))
    same(toolkit.randint(0, 2 ** 28 - 1, (5,)), torch.randint(0, 2 ** 28 - 1, (5,)))


@pytest.mark.parametrize("n", [0, 1, 2, 10, 63, 64, 1000, 100_000])
def test_randperm(n):
    seeded(7)
    same(toolkit.randperm(n), torch.randperm(n))
    same(toolkit.randperm(n, dtype=toolkit.float32), torch.randperm(n, dtype=torch.float32))


def test_bernoulli():
    seeded(8)
    rng = np.random.default_rng(1)
    for pdt in (np.float32, np.float64, np.float16):
        p = rng.random((30, 7)).astype(pdt)
        same(toolkit.bernoulli(toolkit.tensor(p)), torch.bernoulli(torch.tensor(p)))
        same(toolkit.bernoulli(toolkit.tensor(p).t()), torch.bernoulli(torch.tensor(p).t()))
    same(toolkit.bernoulli(toolkit.zeros(40), 0.3), torch.bernoulli(torch.zeros(40), 0.3))
    same(toolkit.zeros(40, dtype=toolkit.int64).bernoulli_(0.7), torch.zeros(40, dtype=torch.int64).bernoulli_(0.7))
    same(toolkit.zeros(4, 5, dtype=toolkit.bool).bernoulli_(toolkit.full((5,), 0.4)),
         torch.zeros(4, 5, dtype=torch.bool).bernoulli_(torch.full((5,), 0.4)))
    same(toolkit.zeros(6, 5).t().bernoulli_(), torch.zeros(6, 5).t().bernoulli_())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exponential_(dtype):
    seeded(10)
    for n in (5, 100):
        same(toolkit.empty(n, dtype=getattr(toolkit, dtype)).exponential_(1.7),
             torch.empty(n, dtype=getattr(torch, dtype)).exponential_(1.7))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_multinomial(dtype):
    seeded(15)
    rng = np.random.default_rng(2)
    probs = (rng.random((4, 9)) + 0.05).astype(dtype)
    tp, pp = toolkit.tensor(probs), torch.tensor(probs)
    same(toolkit.multinomial(tp, 20, replacement=True), torch.multinomial(pp, 20, replacement=True))
    same(toolkit.multinomial(tp, 5), torch.multinomial(pp, 5))
    same(tp.multinomial(1), pp.multinomial(1))
    same(toolkit.multinomial(tp[0], 7, True), torch.multinomial(pp[0], 7, True))
    same(toolkit.multinomial(tp[1], 9), torch.multinomial(pp[1], 9))
    same(toolkit.multinomial(tp.t(), 2), torch.multinomial(pp.t(), 2))


def test_like_ops():
    seeded(16)
    x = toolkit.zeros(5, 4)
    y = torch.zeros(5, 4)
    same(toolkit.rand_like(x), torch.rand_like(y))
    same(toolkit.randn_like(x, dtype=toolkit.float64), torch.randn_like(y, dtype=torch.float64))
    same(toolkit.randint_like(x, 10), torch.randint_like(y, 10))
    same(toolkit.randint_like(x, 3, 10), torch.randint_like(y, 3, 10))
    same(toolkit.randn_like(x.t()), torch.randn_like(y.t()))
    assert toolkit.randn_like(x.t()).stride() == torch.randn_like(y.t()).stride()


def test_generator_objects_are_independent_of_the_default():
    g, tg = toolkit.Generator().manual_seed(123), torch.Generator().manual_seed(123)
    seeded(0)
    same(toolkit.rand(5, generator=g), torch.rand(5, generator=tg))
    same(toolkit.randn(5, generator=g), torch.randn(5, generator=tg))
    same(toolkit.rand(5), torch.rand(5))
    same(toolkit.randperm(9, generator=g), torch.randperm(9, generator=tg))
    same(toolkit.empty(3).normal_(generator=g), torch.empty(3).normal_(generator=tg))
    assert g.initial_seed() == 123
    assert toolkit.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721


def test_rng_state_round_trip_and_layout():
    seeded(21)
    toolkit.randn(3)
    torch.randn(3)  # leaves a cached normal sample in both
    state = toolkit.get_rng_state()
    assert state.dtype is toolkit.uint8 and tuple(state.shape) == (5056,)
    np.testing.assert_array_equal(state.numpy(), torch.get_rng_state().numpy())
    first = toolkit.randn(7)
    toolkit.set_rng_state(state)
    np.testing.assert_array_equal(toolkit.randn(7).numpy(), first.numpy())
    toolkit.set_rng_state(torch.get_rng_state().numpy())
    same(toolkit.rand(4), torch.rand(4))
    g = toolkit.Generator()
    g.set_state(toolkit.get_rng_state())
    np.testing.assert_array_equal(g.get_state().numpy(), toolkit.get_rng_state().numpy())


def test_fork_rng_restores_state():
    toolkit.manual_seed(1)
    with toolkit.random.fork_rng():
        toolkit.rand(100)
    after = toolkit.rand(3)
    toolkit.manual_seed(1)
    np.testing.assert_array_equal(after.numpy(), toolkit.rand(3).numpy())


def test_seed_functions():
    assert toolkit.manual_seed(5).initial_seed() == 5 == toolkit.initial_seed()
    assert toolkit.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    s = toolkit.seed()
    assert toolkit.initial_seed() == s
    with pytest.raises(ValueError, match="Overflow"):
        toolkit.manual_seed(2 ** 64)
    with pytest.raises((TypeError, RuntimeError), match="generator must be a toolkit.Generator, not int"):
        toolkit.rand(3, generator=5)


def test_requires_grad_dtype_and_device_kwargs():
    x = toolkit.randn(2, 3, requires_grad=True, dtype=toolkit.float64)
    assert x.requires_grad and x.dtype is toolkit.float64 and x.is_leaf
    assert toolkit.randperm(4, dtype=toolkit.int32).dtype is toolkit.int32
    assert toolkit.randint(5, (2,)).dtype is toolkit.int64


def test_inplace_fills_bump_version_and_refuse_leaves_requiring_grad():
    x = toolkit.zeros(4)
    v = x._version
    x.uniform_()
    assert x._version > v
    w = toolkit.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.normal_()
    with toolkit.no_grad():
        w.normal_()


@pytest.mark.parametrize("fn,exc,match", [
    (lambda m: m.zeros(3, dtype=m.int64).uniform_(), NotImplementedError, "check_uniform_bounds"),
    (lambda m: m.randn(3, dtype=m.int64), NotImplementedError, "normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda m: m.zeros(3).uniform_(2, 1), RuntimeError, r"expects to return a \[from, to\) range"),
    (lambda m: m.zeros(3).normal_(0, -1), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda m: m.normal(m.zeros(3), m.tensor([1.0, -1, 1])), RuntimeError, "all elements of std >= 0.0"),
    (lambda m: m.zeros(3).bernoulli_(1.5), RuntimeError, r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"),
    (lambda m: m.bernoulli(m.tensor([0.5, 1.5])), RuntimeError, "Expected p_in >= 0 && p_in <= 1"),
    (lambda m: m.zeros(3).random_(5, 2), RuntimeError, "from=5 >= to=2"),
    (lambda m: m.zeros(3, dtype=m.int8).random_(0, 300), RuntimeError, "to - 1 is out of bounds for signed char"),
    (lambda m: m.zeros(3, dtype=m.int8).random_(-300, 3), RuntimeError, "from is out of bounds for signed char"),
    (lambda m: m.zeros(3, dtype=m.int16).random_(0, 2 ** 20), RuntimeError, "to - 1 is out of bounds for short int"),
    (lambda m: m.zeros(3).exponential_(0), RuntimeError, "lambda > 0.0, but found lambda=0"),
    (lambda m: m.rand(-1), RuntimeError, "negative dimension -1"),
    (lambda m: m.multinomial(m.tensor([0.2, 0.8]), 3), RuntimeError, "without replacement"),
    (lambda m: m.multinomial(m.tensor([0.2, 0.8]), 0), RuntimeError, "n_sample <= 0"),
    (lambda m: m.multinomial(m.tensor([0.2, -0.8]), 1, True), RuntimeError, "`inf`, `nan` or element < 0"),
    (lambda m: m.multinomial(m.tensor([0.2, -0.8]), 2, True), RuntimeError, "probability entry < 0"),
    (lambda m: m.multinomial(m.tensor([0.0, 0.0]), 2, True), RuntimeError, "sum of probabilities <= 0"),
    (lambda m: m.multinomial(m.tensor([1, 2]), 1), RuntimeError, "floating-point dtypes for input, got: Long"),
    (lambda m: m.multinomial(m.zeros(2, 2, 2), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
])
def test_errors_match_torch(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn(torch)
    with pytest.raises(exc, match=match):
        fn(toolkit)


def test_generated_dtypes_match_torch():
    for name in ("float16", "float32", "float64"):
        assert toolkit.rand(2, dtype=getattr(toolkit, name)).dtype is getattr(toolkit, name)
        assert TORCH_DTYPES[getattr(toolkit, name)] == torch.rand(2, dtype=getattr(torch, name)).dtype
