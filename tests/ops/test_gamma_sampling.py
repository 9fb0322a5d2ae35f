"""The gamma family's samplers against PyTorch under equal seeds (bit for bit), their gradient
approximations against PyTorch's, their errors, and the stride-independent order of ``poisson``."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from tests.conftest import assert_close

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64"]


def _pair(a: np.ndarray):
    return toolkit.tensor(a), torch.tensor(a)


def _same(ours, theirs) -> None:
    """Bit-for-bit equality (NaNs equal)."""
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def _alphas(dtype: str, scale: float, shape=(7, 9), offset: float = 0.01) -> np.ndarray:
    return (np.random.default_rng(1).random(shape) * scale + offset).astype(dtype)


# ------------------------------------------------------------------------------------------- _standard_gamma
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.3, 1.0, 5.0, 80.0])
def test_standard_gamma_stream(dtype, scale):
    """Small alphas (boosted), around 1 and large ones; the generator ends where PyTorch's does, the cached
    Box-Muller value included (the normals after the draws agree too)."""
    ours, theirs = _pair(_alphas(dtype, scale))
    toolkit.manual_seed(3)
    torch.manual_seed(3)
    _same(toolkit._standard_gamma(ours), torch._standard_gamma(theirs))
    _same(toolkit.randn(5, dtype=toolkit.float64), torch.randn(5, dtype=torch.float64))
    _same(toolkit.rand(3), torch.rand(3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_long_stream(dtype):
    """Enough draws to run through several blocks of uniforms made ahead; the generator then stands exactly
    where PyTorch's does."""
    a = np.concatenate([_alphas(dtype, 0.9, (3000,)), _alphas(dtype, 30.0, (3000,))])
    ours, theirs = _pair(a)
    toolkit.manual_seed(13)
    torch.manual_seed(13)
    _same(toolkit._standard_gamma(ours), torch._standard_gamma(theirs))
    _same(toolkit.randn(1, dtype=toolkit.float64), torch.randn(1, dtype=torch.float64))
    _same(toolkit.rand(5), torch.rand(5))


def test_standard_gamma_uses_the_cached_normal():
    """An odd count of scalar normals leaves the generator a spare value; the sampler's first normal is it."""
    ours, theirs = _pair(_alphas("float64", 3.0, (40,)))
    toolkit.manual_seed(8)
    torch.manual_seed(8)
    _same(toolkit.randn(3, dtype=toolkit.float64), torch.randn(3, dtype=torch.float64))
    _same(toolkit._standard_gamma(ours), torch._standard_gamma(theirs))
    _same(toolkit.randn(1, dtype=toolkit.float64), torch.randn(1, dtype=torch.float64))


@pytest.mark.parametrize("view", ["expand", "transpose"])
def test_standard_gamma_strided_input(view):
    base = _alphas("float32", 2.0, (1, 5))
    ours, theirs = _pair(base if view == "expand" else _alphas("float32", 2.0, (4, 5)))
    make = (lambda t: t.expand(4, 5).t()) if view == "expand" else (lambda t: t.t())
    toolkit.manual_seed(4)
    torch.manual_seed(4)
    _same(toolkit._standard_gamma(make(ours)), torch._standard_gamma(make(theirs)))


def test_standard_gamma_generator_argument():
    ours, theirs = _pair(_alphas("float64", 4.0, (6,)))
    g, tg = toolkit.Generator().manual_seed(12), torch.Generator().manual_seed(12)
    _same(toolkit._standard_gamma(ours, g), torch._standard_gamma(theirs, tg))
    _same(toolkit._standard_gamma(ours, generator=g), torch._standard_gamma(theirs, generator=tg))


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_degenerate_alphas(dtype):
    """Zero, negative and NaN concentrations give the dtype's smallest normal number (some after a rejection
    loop that still draws), infinity gives infinity: PyTorch's behaviour, not an error."""
    a = np.array([0.0, -0.5, -0.7, -1.0, -2.0, np.nan, np.inf, 1e-30, 0.5], dtype=dtype)
    ours, theirs = _pair(a)
    toolkit.manual_seed(0)
    torch.manual_seed(0)
    _same(toolkit._standard_gamma(ours), torch._standard_gamma(theirs))
    _same(toolkit.rand(2), torch.rand(2))


def test_standard_gamma_shapes():
    for shape in [(), (0, 3), (2, 0)]:
        out = toolkit._standard_gamma(toolkit.ones(shape))
        assert tuple(out.shape) == shape and out.dtype is toolkit.float32


@pytest.mark.parametrize("dtype,name", [("int64", "Long"), ("float16", "Half")])
def test_standard_gamma_dtype_errors(dtype, name):
    t = toolkit.ones(3, dtype=getattr(toolkit, dtype))
    with pytest.raises(NotImplementedError, match=f"\"gamma_cpu\" not implemented for '{name}'"):
        toolkit._standard_gamma(t)
    with pytest.raises(NotImplementedError, match=f"\"dirichlet\" not implemented for '{name}'"):
        toolkit._sample_dirichlet(t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_gradient_matches_torch(dtype):
    a = _alphas(dtype, 12.0, (50,), 0.05)
    ours = toolkit.tensor(a, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    toolkit.manual_seed(6)
    torch.manual_seed(6)
    x, tx = toolkit._standard_gamma(ours), torch._standard_gamma(theirs)
    _same(x, tx)
    w = np.random.default_rng(2).standard_normal(50).astype(dtype)
    (x * toolkit.tensor(w)).sum().backward()
    (tx * torch.tensor(w)).sum().backward()
    assert_close(ours.grad, theirs.grad)


# ------------------------------------------------------------------------------------------- _sample_dirichlet
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 3, 4, 10, 37, 300])
def test_dirichlet_stream(dtype, k):
    """Row lengths below, at and above the vector width of ATen's sum, and long enough for its cascade."""
    a = _alphas(dtype, 3.0, (20, k), 0.05)
    ours, theirs = _pair(a)
    toolkit.manual_seed(5)
    torch.manual_seed(5)
    _same(toolkit._sample_dirichlet(ours), torch._sample_dirichlet(theirs))
    _same(toolkit.randn(3, dtype=toolkit.float64), torch.randn(3, dtype=torch.float64))


def test_dirichlet_strided_and_small_inputs():
    base = _alphas("float64", 2.0, (3, 6))
    cases = [lambda t: t.t(), lambda t: t[:1].expand(4, 6), lambda t: t[0, 0], lambda t: t[:0]]
    for make in cases:
        ours, theirs = _pair(base)
        toolkit.manual_seed(9)
        torch.manual_seed(9)
        _same(toolkit._sample_dirichlet(make(ours)), torch._sample_dirichlet(make(theirs)))


def test_dirichlet_has_no_derivative():
    a = toolkit.ones(3, requires_grad=True)
    x = toolkit._sample_dirichlet(a)
    with pytest.raises(RuntimeError, match="derivative for aten::_sample_dirichlet is not implemented"):
        x.sum().backward()


# ------------------------------------------------------------------------------------------- gradient ops
def _gamma_grad_points(n: int = 900):
    rng = np.random.default_rng(0)
    alpha = np.concatenate([rng.random(n // 3) * 0.9 + 0.01, rng.random(n // 3) * 10, rng.random(n // 3) * 100 + 8])
    x = np.concatenate([rng.random(n // 2) * 0.8, rng.random(n - n // 2) * 150])
    alpha[:5] = [9.0, 20.0, 30.0, 0.5, 2.0]  # the saddle-point polynomial near the mean
    x[:5] = [9.5, 19.0, 31.0, 0.9, 2.5]
    return alpha, x


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_grad_values(dtype):
    """Every region of the approximation: the Taylor series (x < 0.8), the saddle point (alpha > 8, near the
    mean and away from it), the rational fit between."""
    alpha, x = (v.astype(dtype) for v in _gamma_grad_points())
    ours = toolkit._standard_gamma_grad(toolkit.tensor(alpha), toolkit.tensor(x))
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x))
    assert_close(ours, theirs)


def _dirichlet_points(n: int = 3000):
    rng = np.random.default_rng(1)
    x = rng.random(n) * 0.999 + 0.0005
    alpha = np.concatenate([rng.random(n // 3) * 2 + 0.01, rng.random(n // 3) * 20, rng.random(n - 2 * (n // 3)) * 50 + 6])
    total = alpha + np.concatenate([rng.random(n // 2) * 2 + 0.01, rng.random(n - n // 2) * 50 + 6])
    x[:2], alpha[:2], total[:2] = [0.5, 0.3], [20.0, 12.0], [40.0, 40.0]  # on the mean: the polynomial
    return x, alpha, total


@pytest.mark.parametrize("dtype", DTYPES)
def test_dirichlet_grad_values(dtype):
    """The series near 0 and 1 (in the input's precision, as ATen), the saddle point for large parameters,
    the rational correction between."""
    args = [v.astype(dtype) for v in _dirichlet_points()]
    ours = toolkit._dirichlet_grad(*(toolkit.tensor(v) for v in args))
    theirs = torch._dirichlet_grad(*(torch.tensor(v) for v in args))
    assert_close(ours, theirs)


def test_grad_ops_broadcast_and_check_dtypes():
    a, x = toolkit.rand(3) + 0.5, toolkit.rand(2, 3)
    assert tuple(toolkit._standard_gamma_grad(a, x).shape) == (2, 3)
    assert tuple(toolkit._dirichlet_grad(x * 0.5, a, a + 1).shape) == (2, 3)
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        toolkit._standard_gamma_grad(a, x.double())
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        toolkit._dirichlet_grad(x, a.double(), a)
    with pytest.raises(RuntimeError, match=r"_standard_gamma_grad: shapes \(3,\) and \(2,\) cannot be broadcast"):
        toolkit._standard_gamma_grad(toolkit.ones(3), toolkit.ones(2))


def test_grad_ops_have_no_derivative():
    a = toolkit.ones(3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for '_standard_gamma_grad' is not implemented"):
        toolkit._standard_gamma_grad(a, toolkit.ones(3)).sum().backward()
    b = toolkit.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_dirichlet_grad is not implemented"):
        toolkit._dirichlet_grad(toolkit.full((3,), 0.3), b, toolkit.full((3,), 3.0)).sum().backward()


# ------------------------------------------------------------------------------------------- poisson, binomial
@pytest.mark.parametrize("view", ["expand_rows", "expand_cols", "transpose"])
def test_poisson_draws_in_logical_order(view):
    """PyTorch writes a fresh contiguous output, so strided rates give the draws of their contiguous copy."""
    rates = (np.random.default_rng(3).random((3, 4)) * 15 + 0.5)
    make = {"expand_rows": lambda t: t[:1].expand(3, 4), "expand_cols": lambda t: t[:, :1].expand(3, 4),
            "transpose": lambda t: t.t()}[view]
    ours, theirs = _pair(rates)
    toolkit.manual_seed(2)
    torch.manual_seed(2)
    _same(toolkit.poisson(make(ours)), torch.poisson(make(theirs)))


def test_binomial_strided_count():
    rng = np.random.default_rng(4)
    count, prob = np.floor(rng.random((4, 3)) * 40), rng.random((3, 4))
    (c, tc), (p, tp) = _pair(count), _pair(prob)
    toolkit.manual_seed(2)
    torch.manual_seed(2)
    _same(toolkit.binomial(c.t(), p), torch.binomial(tc.t(), tp))
