"""The special and float-bit math functions (gamma family, Bessel, logit, xlogy, logaddexp, copysign, frexp,
nextafter, gcd, shifts, ...) and their other names, against PyTorch: dtypes, special values, errors, gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
from toolkit._core import dtypes
from toolkit.backends.cpu.scalar import HELPERS

from ..conftest import assert_close, to_torch

ALL = list(dtypes.ALL)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 30.0, math.inf, -math.inf, math.nan]


def _values(dtype, shape=(2, 3), seed=0):
    rng = np.random.default_rng(seed)
    if dtype is toolkit.bool:
        a = rng.random(shape) > 0.5
    elif dtype.is_floating_point:
        a = rng.integers(1, 12, shape) / 4.0
    else:
        a = rng.integers(0 if dtype is toolkit.uint8 else -6, 7, shape)
    return toolkit.tensor(np.asarray(a).astype(dtype.np))


def check_like_torch(fn, *args, **kwargs):
    """``fn(toolkit, *args)`` matches ``fn(torch, ...)``: values and dtype, or the same exception type."""
    try:
        expected = fn(torch, *[to_torch(a) for a in args], **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        with pytest.raises(type(e)):
            fn(toolkit, *args, **kwargs)
        return None
    out = fn(toolkit, *args, **kwargs)
    assert_close(out, expected)
    return out


UNARY = ["acosh", "asinh", "atanh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "negative",
         "absolute", "fix", "sgn", "deg2rad", "rad2deg", "erfc", "lgamma", "digamma", "i0", "sinc", "logit",
         "signbit", "nan_to_num", "frexp"]
BINARY = ["multiply", "subtract", "xlogy", "logaddexp", "logaddexp2", "copysign", "heaviside", "nextafter", "ldexp",
          "float_power", "gcd", "lcm", "igamma", "igammac", "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_unary_dtypes_match_torch(name, dtype):
    check_like_torch(lambda m, x: getattr(m, name)(x), _values(dtype))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", [toolkit.bool, toolkit.uint8, toolkit.int32, toolkit.int64, toolkit.float32,
                               toolkit.float64], ids=str)
def test_binary_dtypes_match_torch(name, a, b):
    if name == "ldexp" and b is toolkit.bool and a.is_floating_point:
        pytest.skip("PyTorch refuses float mantissas with bool exponents (ldexp_cpu_exp); toolkit computes them")
    check_like_torch(lambda m, x, y: getattr(m, name)(x, y), _values(a), _values(b, (3,), seed=1))


@pytest.mark.parametrize("name", ["acosh", "asinh", "atanh", "erfc", "lgamma", "digamma", "i0", "sinc", "logit",
                                  "signbit", "nan_to_num", "deg2rad", "sgn", "fix"])
@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64], ids=str)
def test_special_values_match_torch(name, dtype):
    check_like_torch(lambda m, x: getattr(m, name)(x), toolkit.tensor(SPECIAL, dtype=dtype))


def test_polygamma_special_values_and_orders():
    x = toolkit.tensor(SPECIAL + [-0.5, 1e-3, 200.0], dtype=toolkit.float64)
    for n in range(6):
        check_like_torch(lambda m, t, n=n: m.polygamma(n, t), x)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_edges_match_torch(name):
    a = toolkit.tensor([0.0, 0.0, 1.0, math.inf, math.inf, 1.0, -1.0, 2.0, 0.5, 50.0, 3.0], dtype=toolkit.float64)
    x = toolkit.tensor([0.0, 1.0, 0.0, 1.0, math.inf, math.inf, 1.0, -1.0, 1e-3, 45.0, math.nan], dtype=toolkit.float64)
    check_like_torch(lambda m, p, q: getattr(m, name)(p, q), a, x)


def test_binary_special_values_match_torch():
    a = toolkit.tensor([0.0, 0.0, 1.0, math.inf, -math.inf, math.nan, -0.0, 2.0])
    b = toolkit.tensor([0.0, math.nan, -0.0, math.inf, -math.inf, 1.0, 3.0, -math.inf])
    for name in ["xlogy", "logaddexp", "logaddexp2", "copysign", "heaviside", "nextafter", "ldexp", "float_power"]:
        check_like_torch(lambda m, x, y, name=name: getattr(m, name)(x, y), a, b)


def test_python_numbers_where_torch_takes_them():
    x = _values(toolkit.float32)
    check_like_torch(lambda m, t: m.xlogy(2.0, t), x)
    check_like_torch(lambda m, t: m.xlogy(t, 3), x)
    check_like_torch(lambda m, t: m.copysign(t, -1.0), x)
    check_like_torch(lambda m, t: m.float_power(2, t), x)
    check_like_torch(lambda m, t: m.float_power(t, 2.5), x)
    i = _values(toolkit.int64)
    check_like_torch(lambda m, t: m.bitwise_left_shift(t, 2), i)
    check_like_torch(lambda m, t: m.bitwise_right_shift(t, 1), i)


@pytest.mark.parametrize("dtype", [toolkit.uint8, toolkit.int8, toolkit.int16, toolkit.int32, toolkit.int64], ids=str)
def test_shifts_past_the_width_match_torch(dtype):
    a = toolkit.tensor(np.array([1, -3, 100, 5, 7, -1]).astype(dtype.np))
    b = toolkit.tensor(np.array([1, 9, 40, 2, 70, 63]).astype(dtype.np))
    for name in ["bitwise_left_shift", "bitwise_right_shift"]:
        check_like_torch(lambda m, x, y, name=name: getattr(m, name)(x, y), a, b)


def test_shift_and_old_division_operators():
    x, y = _values(toolkit.int64), toolkit.tensor([1, 2, 3])
    tx, ty = to_torch(x), to_torch(y)
    assert_close(x << y, tx << ty)
    assert_close(x >> y, tx >> ty)
    assert_close(3 << y, 3 << ty)
    assert_close(64 >> y, 64 >> ty)
    z = x.clone()
    z <<= y
    assert_close(z, tx << ty)
    z >>= 1
    assert_close(z, (tx << ty) >> 1)
    f = _values(toolkit.float32)
    tf = to_torch(f)
    assert_close(f.__div__(2.0), tf.__div__(2.0))
    assert_close(f.__rdiv__(2.0), tf.__rdiv__(2.0))
    g = f.clone()
    g.__idiv__(4.0)
    assert_close(g, tf / 4.0)


def test_frexp_returns_a_named_tuple():
    x = toolkit.tensor([0.0, -0.0, 1.0, 0.75, -3.0, 1e-300, math.inf, math.nan], dtype=toolkit.float64)
    out = toolkit.frexp(x)
    expected = torch.frexp(to_torch(x))
    assert type(out).__name__ == "frexp"
    assert_close(out.mantissa, expected.mantissa)
    assert_close(out.exponent, expected.exponent)
    m, e = x.frexp()
    assert_close(m, expected[0])


def test_nan_to_num_arguments_match_torch():
    x = toolkit.tensor([math.nan, math.inf, -math.inf, 1.5])
    for kw in ({}, {"nan": 1.0}, {"posinf": 5.0, "neginf": -5.0}):
        check_like_torch(lambda m, t, kw=kw: m.nan_to_num(t, **kw), x)
    y = x.clone()
    y.nan_to_num_(nan=2.0)
    assert_close(y, torch.nan_to_num(to_torch(x), nan=2.0))


def test_logit_with_eps_matches_torch():
    x = toolkit.tensor([0.0, 0.05, 0.5, 0.97, 1.0, 1.5], dtype=toolkit.float64, requires_grad=True)
    t = to_torch(x)
    for eps in (None, 0.1):
        out, expected = toolkit.logit(x, eps), torch.logit(t, eps)
        assert_close(out, expected)
        (g,) = toolkit.autograd.grad(out.sum(), [x])
        (tg,) = torch.autograd.grad(expected.sum(), [t])
        assert_close(g, tg)


@pytest.mark.parametrize("name,make", [
    ("lgamma", lambda m, x: m.lgamma(x)),
    ("digamma", lambda m, x: m.digamma(x)),
    ("polygamma2", lambda m, x: m.polygamma(2, x)),
    ("mvlgamma", lambda m, x: m.mvlgamma(x + 2, 3)),
    ("i0", lambda m, x: m.i0(x)),
    ("xlogy", lambda m, x: m.xlogy(x, x + 1)),
    ("copysign", lambda m, x: m.copysign(x, -x)),
    ("frexp", lambda m, x: m.frexp(x)[0]),
    ("float_power", lambda m, x: m.float_power(x, 1.5)),
    ("nan_to_num", lambda m, x: m.nan_to_num(x)),
    ("igamma", lambda m, x: m.igamma(x.detach() + 1, x)),
])
def test_first_and_second_derivatives_match_torch(name, make):
    x = toolkit.tensor([0.3, 0.8, 1.7, 2.6], dtype=toolkit.float64, requires_grad=True)
    t = to_torch(x)
    out, expected = make(toolkit, x), make(torch, t)
    (g,) = toolkit.autograd.grad(out.sum(), [x], create_graph=True)
    (tg,) = torch.autograd.grad(expected.sum(), [t], create_graph=True)
    assert_close(g, tg)
    if not tg.requires_grad:  # a derivative that does not depend on x (frexp, nan_to_num)
        return
    (gg,) = toolkit.autograd.grad(g.sum(), [x])
    (tgg,) = torch.autograd.grad(tg.sum(), [t])
    assert_close(gg, tgg)


def test_non_differentiable_ops_record_no_graph():
    x = toolkit.tensor([1.5, -2.0], requires_grad=True)
    assert not toolkit.heaviside(x, toolkit.tensor([0.5])).requires_grad
    assert not toolkit.signbit(x).requires_grad
    assert not toolkit.gcd(toolkit.tensor([4]), toolkit.tensor([6])).requires_grad


def test_inplace_variants_match_torch():
    for name in ["acosh", "asinh", "atanh", "arccos", "arcsin", "arctan", "arcsinh", "negative", "fix", "sgn",
                 "deg2rad", "rad2deg", "erfc", "lgamma", "digamma", "i0", "sinc", "logit", "absolute"]:
        assert hasattr(torch.Tensor, name + "_")
        x = toolkit.tensor([0.25, 0.5, 0.75], dtype=toolkit.float64)
        t = to_torch(x)
        getattr(x, name + "_")()
        getattr(t, name + "_")()
        assert_close(x, t)
    x = toolkit.tensor([0.25, 1.5], dtype=toolkit.float64)
    x.polygamma_(2)
    assert_close(x, torch.tensor([0.25, 1.5], dtype=torch.float64).polygamma_(2))
    with pytest.raises(RuntimeError):
        toolkit.tensor([1, 2]).polygamma_(1)
    y = toolkit.tensor([1.5, 2.0], dtype=toolkit.float64)
    y.float_power_(2)
    assert_close(y, torch.tensor([1.5, 2.0], dtype=torch.float64).float_power_(2))
    y.float_power_(toolkit.tensor([0.5, 1.0], dtype=toolkit.float64))
    assert_close(y, torch.tensor([1.5, 4.0], dtype=torch.float64))
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float"):
        toolkit.tensor([1.5]).float_power_(2)


def test_errors_match_torch():
    x = toolkit.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="negative n"):
        toolkit.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="greater than or equal to 1"):
        toolkit.mvlgamma(x, 0)
    with pytest.raises(RuntimeError, match=r"greater than \(p-1\)/2"):
        toolkit.mvlgamma(x, 4)
    with pytest.raises(RuntimeError, match="different dtypes"):
        toolkit.heaviside(x, toolkit.tensor([1.0], dtype=toolkit.float64))
    with pytest.raises(RuntimeError, match="floating-point"):
        toolkit.frexp(toolkit.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="gcd_cpu"):
        toolkit.gcd(x, x)
    with pytest.raises(NotImplementedError, match="logaddexp_cpu"):
        toolkit.logaddexp(toolkit.tensor([1]), toolkit.tensor([2]))


@pytest.mark.parametrize("name,args", [
    ("sinc", (0.0,)), ("sinc", (0.5,)), ("logaddexp", (1.0, 2.0)), ("lgamma", (0.5,)), ("lgamma", (-2.0,)),
    ("digamma", (0.3,)), ("digamma", (-2.5,)), ("trigamma", (1.7,)), ("polygamma", (3, 2.5)), ("bessel_i0", (2.0,)),
    ("bessel_i0", (40.0,)), ("bessel_i1", (-1.5,)), ("bessel_i1", (35.0,)), ("igamma", (2.0, 3.0)), ("igammac", (2.0, 0.5)),
    ("mvlgamma", (3.0, 3)), ("gcd", (12, -18)), ("lcm", (4, -6)),
])
def test_scalar_helpers_run_in_python_and_match_torch(name, args):
    got = HELPERS[name](*args)
    ta = [torch.tensor(a, dtype=torch.float64) if isinstance(a, float) else a for a in args]
    if name == "trigamma":
        expected = torch.polygamma(1, *ta)
    elif name == "bessel_i0":
        expected = torch.i0(*ta)
    elif name == "bessel_i1":
        expected = torch.special.i1(*ta)
    elif name in ("gcd", "lcm"):
        expected = getattr(torch, name)(torch.tensor(args[0]), torch.tensor(args[1]))
    elif name == "mvlgamma":
        expected = torch.mvlgamma(ta[0], args[1])
    else:
        expected = getattr(torch, name)(*ta)
    assert_close(torch.tensor(got, dtype=expected.dtype), expected)


def test_polygamma_method_takes_n_first_as_torch():
    x = np.array([0.5, 1.5, 3.0])
    for n in (0, 1, 2):
        assert_close(toolkit.tensor(x).polygamma(n), torch.tensor(x).polygamma(n))
