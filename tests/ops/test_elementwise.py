"""Unary math and activation ops against PyTorch: dtypes, special values, layouts, in-place, errors, grads."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import toolkit
from toolkit.backends.cpu import map_kernel
from toolkit.ops import api, registry

from ..conftest import TORCH_DTYPES, assert_close

FUNCTIONAL = ("gelu", "silu", "softplus")  # torch.nn.functional only
UNARY = (
    "abs", "sign", "neg", "positive", "square", "reciprocal",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfinv",
    "floor", "ceil", "round", "trunc", "frac",
    "sigmoid", "relu", "gelu", "silu", "softplus",
)
FLOATS = (toolkit.float16, toolkit.float32, toolkit.float64)
INTS = (toolkit.bool, toolkit.uint8, toolkit.int8, toolkit.int16, toolkit.int32, toolkit.int64)
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-30, 30.0, -30.0, 100.0, -100.0]


def tk_fn(name):
    return api.function_for(name) if name in FUNCTIONAL else getattr(toolkit, name)


def th_fn(name):
    return getattr(torch.nn.functional, name) if name in FUNCTIONAL else getattr(torch, name)


def _values(dtype) -> np.ndarray:
    x = np.concatenate([np.linspace(-3, 3, 25), SPECIAL, [0.99, -0.99, 1e4, -1e4]])
    return x.astype(dtype.np)


def _both(name, x: np.ndarray, **kw):
    """Call toolkit and torch on the same data: (toolkit result, torch result) or the two errors."""
    try:
        want = th_fn(name)(torch.from_numpy(x.copy()), **kw)
    except Exception as e:  # torch refuses: toolkit must refuse alike
        with pytest.raises(type(e), match=re.escape(str(e).split("\n")[0])):
            tk_fn(name)(toolkit.tensor(x), **kw)
        return None, None
    return tk_fn(name)(toolkit.tensor(x), **kw), want


def _check_signed_zeros(got, want):
    g, w = got.numpy(), want.numpy()
    zero = (w == 0) & (g == 0)
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))


# ----------------------------------------------------------------------------- forward vs torch
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_float_inputs_and_special_values_match_torch(name, dtype):
    x = _values(dtype)
    if name == "gelu" and dtype is toolkit.float32:
        x = x[np.isfinite(x)]  # torch's vectorized float32 gelu gives nan at +inf (float16/float64 give inf)
    got, want = _both(name, x)
    assert_close(got, want)
    _check_signed_zeros(got, want)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_integer_and_bool_inputs_match_torch_or_fail_alike(name, dtype):
    x = np.array([True, False, True]) if dtype is toolkit.bool else np.arange(7).astype(dtype.np) - (
        0 if dtype is toolkit.uint8 else 3)
    got, want = _both(name, x)
    if want is not None:
        assert_close(got, want)


@pytest.mark.parametrize("name", UNARY)
def test_non_contiguous_inputs(name):
    base = np.random.default_rng(0).uniform(0.1, 0.9, (6, 8))
    for x in (base.T, base[::2, 1::3], np.broadcast_to(base[:1], (4, 8))):
        got, want = _both(name, np.asarray(x))
        assert_close(got, want)


@pytest.mark.parametrize("name", UNARY)
def test_zero_dim_and_zero_size(name):
    for x in (np.array(0.25), np.zeros((0, 3))):
        got, want = _both(name, x)
        assert_close(got, want)


@pytest.mark.parametrize("name", ["erf", "erfinv", "gelu", "silu", "softplus", "sigmoid"])
@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64], ids=str)
def test_large_inputs_take_the_parallel_path(name, dtype):
    x = np.random.default_rng(1).uniform(-0.999, 0.999, 70_001).astype(dtype.np)
    got, want = _both(name, x)
    assert_close(got, want)


# ----------------------------------------------------------------------------- special functions
def test_erfinv_matches_torch_to_1e12_in_float64_including_the_tails():
    k = np.arange(1, 17)
    tails = 1.0 - 10.0 ** -k.astype(np.float64)
    y = np.concatenate([np.linspace(-1, 1, 20001), tails, -tails, [1e-300, -1e-300, 5e-324, 0.7, 0.7000001]])
    got = toolkit.erfinv(toolkit.tensor(y)).numpy()
    want = torch.erfinv(torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)  # the accuracy claimed, tighter than the rule
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_erf_and_erfinv_invert_each_other():
    x = np.linspace(-4, 4, 1001)
    y = toolkit.erf(toolkit.tensor(x))
    np.testing.assert_allclose(toolkit.erfinv(y).numpy(), x, rtol=1e-8, atol=1e-8)  # a round trip, no oracle
    # erf is torch's to the last bits, so the round trip's error is erfinv's (tighter than the rule on purpose)
    np.testing.assert_allclose(y.numpy(), torch.erf(torch.from_numpy(x)).numpy(), rtol=1e-15, atol=1e-16)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_both_forms(dtype, approximate):
    x = _values(dtype)
    if dtype is toolkit.float32:
        x = x[np.isfinite(x)]  # torch's vectorized float32 gelu gives nan at +inf
    got, want = _both("gelu", x, approximate=approximate)
    assert_close(got, want)


@pytest.mark.parametrize("beta,threshold", [(1, 20), (2, 4.5), (0.5, 1), (3.0, -1.0)])
def test_softplus_beta_and_threshold(beta, threshold):
    for dtype in FLOATS:
        got, want = _both("softplus", _values(dtype), beta=beta, threshold=threshold)
        assert_close(got, want)
    x = toolkit.tensor([1.0, 3.0])
    assert_close(api.softplus(x, beta, threshold), torch.nn.functional.softplus(torch.tensor([1.0, 3.0]), beta,
                                                                               threshold))


# ----------------------------------------------------------------------------- rounding
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, -2])
def test_round_decimals_matches_torch(dtype, decimals):
    x = np.concatenate([np.random.default_rng(2).uniform(-500, 500, 50), [0.125, 0.375, 2.5, -2.5, 1234.5678,
                                                                           np.nan, np.inf, -0.0]])
    got, want = _both("round", x.astype(dtype.np), decimals=decimals)
    assert_close(got, want)


def test_round_is_half_to_even():
    x = toolkit.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5])
    assert toolkit.round(x).tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0]
    assert x.round().tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0]
    assert x.round(decimals=0).tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0]


def test_rounding_integers_copies_and_bool_is_refused():
    x = toolkit.tensor([1, -2, 3])
    for name in ("floor", "ceil", "round", "trunc"):
        y = getattr(toolkit, name)(x)
        assert y.dtype is toolkit.int64 and y.tolist() == [1, -2, 3]
        y.add_(1)
        assert x.tolist() == [1, -2, 3]  # a copy, not the input's buffer
    with pytest.raises(NotImplementedError, match="\"round_cpu\" not implemented for 'Long'"):
        toolkit.round(x, decimals=1)
    with pytest.raises(NotImplementedError, match="\"floor_vml_cpu\" not implemented for 'Bool'"):
        toolkit.floor(toolkit.tensor([True]))


# ----------------------------------------------------------------------------- operators, views, errors
def test_dunders():
    data = np.array([[-1.5, 2.0], [0.25, -0.0]])
    x, t = toolkit.tensor(data), torch.from_numpy(data.copy())
    assert_close(abs(x), abs(t))
    assert_close(-x, -t)
    assert_close(+x, +t)
    assert_close(abs(toolkit.tensor([-3, 4])), abs(torch.tensor([-3, 4])))


def test_positive_shares_the_input_storage():
    x = toolkit.tensor([1.0, -2.0])
    p = +x
    x.mul_(3)
    assert p.tolist() == [3.0, -6.0]
    assert toolkit.positive(x)._version == x._version


def test_square_promotes_bool_to_int64():
    y = toolkit.square(toolkit.tensor([True, False]))
    assert y.dtype is toolkit.int64 and y.tolist() == [1, 0]
    assert registry.get("square").infer(toolkit.tensor([True])).dtype is toolkit.int64
    with pytest.raises(RuntimeError, match="square_: result type Long can't be cast to the desired output type Bool"):
        toolkit.tensor([True]).square_()


@pytest.mark.parametrize("name,x,error,message", [
    ("neg", [True], RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported"),
    ("abs", [True], NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    ("positive", [True], RuntimeError, "The `+` operator, on a bool tensor is not supported."),
    ("relu", [True], RuntimeError, "Boolean inputs not supported for relu"),
    ("frac", [1, 2], NotImplementedError, "\"frac_cpu\" not implemented for 'Long'"),
    ("gelu", [1, 2], NotImplementedError, "\"GeluKernelImpl\" not implemented for 'Long'"),
    ("silu", [True], NotImplementedError, "\"silu_cpu\" not implemented for 'Bool'"),
    ("softplus", [1], NotImplementedError, "\"softplus_cpu\" not implemented for 'Long'"),
])
def test_errors_name_the_op_and_match_torch(name, x, error, message):
    with pytest.raises(error, match=re.escape(message)):
        th_fn(name)(torch.tensor(x))
    with pytest.raises(error, match=re.escape(f"{name}: ") + ".*" + re.escape(message)):
        tk_fn(name)(toolkit.tensor(x))
    o = registry.get(name)
    with pytest.raises(error, match=re.escape(message)):  # the meta rule explains it the same way
        o.infer(toolkit.tensor(x))


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        api.gelu(toolkit.tensor([1.0]), approximate="fast")
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        registry.get("gelu").infer(toolkit.tensor([1.0]), "fast")


# ----------------------------------------------------------------------------- in-place variants
INPLACE = [n for n in UNARY if registry.get(n).inplace_variant is not None]


def test_inplace_variants_exist_where_pytorch_has_them():
    for name in UNARY:
        if name in FUNCTIONAL:
            continue
        assert hasattr(toolkit.Tensor, name + "_") == hasattr(torch.Tensor, name + "_"), name


@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64, toolkit.int64], ids=str)
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_matches_functional_or_refuses_to_downcast(name, dtype):
    x = toolkit.tensor(np.linspace(0.1, 0.9, 6).reshape(2, 3) if dtype.is_floating_point else [[1, 2, 3], [4, 5, 6]],
                       dtype=dtype)
    t = torch.from_numpy(x.numpy().copy())
    y = x.clone()
    version = y._version
    try:
        want = getattr(t, name + "_")() if hasattr(t, name + "_") else th_fn(name)(t)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(y, name + "_")()
        return
    assert getattr(y, name + "_")() is y
    assert y._version > version and y.dtype is dtype
    assert_close(y, tk_fn(name)(x))
    assert_close(y, want)


def test_inplace_on_a_non_contiguous_view_writes_through():
    base = toolkit.tensor(np.linspace(-0.9, 0.9, 12).reshape(3, 4))
    tb = torch.from_numpy(base.numpy().copy())
    base.t().sigmoid_()
    tb.t().sigmoid_()
    base.view(2, 6).t().erfinv_()
    tb.view(2, 6).t().erfinv_()
    assert_close(base, tb)


# ----------------------------------------------------------------------------- derivatives vs torch
GRAD_DOMAIN = {"log": (0.5, 3), "log2": (0.5, 3), "log10": (0.5, 3), "sqrt": (0.5, 3), "rsqrt": (0.5, 3),
               "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "erfinv": (-0.9, 0.9), "log1p": (-0.5, 2),
               "tan": (-1.2, 1.2)}


@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("positive",)])
def test_first_and_second_derivatives_match_torch(name):
    low, high = GRAD_DOMAIN.get(name, (-2, 2))
    rng = np.random.default_rng(3)
    data = rng.uniform(low, high, (3, 4))
    data[np.abs(data - np.round(data)) < 0.05] += 0.1  # away from jumps of floor/round and the kink of abs
    g = rng.standard_normal((3, 4))
    x = toolkit.tensor(data).requires_grad_()
    t = torch.from_numpy(data.copy()).requires_grad_()
    (gx,) = toolkit.autograd.grad(tk_fn(name)(x), x, toolkit.tensor(g), create_graph=True)
    (gt,) = torch.autograd.grad(th_fn(name)(t), t, torch.from_numpy(g), create_graph=True)
    assert_close(gx, gt)
    if not gt.requires_grad:  # the first derivative does not depend on x (neg, floor, ...)
        return
    if not gx.requires_grad:  # relu: torch keeps a graph whose derivative is zero
        (ggt,) = torch.autograd.grad((gt * gt).sum(), t, allow_unused=True, materialize_grads=True)
        assert not torch.any(torch.zeros_like(t) + ggt)
        return
    (ggx,) = toolkit.autograd.grad((gx * gx).sum(), x)
    (ggt,) = torch.autograd.grad((gt * gt).sum(), t)
    assert_close(ggx, torch.zeros_like(t) + ggt)  # (materializes torch's ZeroTensor)


# ----------------------------------------------------------------------------- formulas agree with kernels
FORMULA_OPS = [o for o in registry.all_ops()
               if o.formula and o.name in UNARY and o.kind != registry.INPLACE]


@pytest.mark.parametrize("o", FORMULA_OPS, ids=lambda o: o.schema.full_name)
def test_formula_compiled_by_the_map_kernel_generator_matches_the_eager_kernel(o):
    """The fusion code generator will inline these formulas: they must compute what the op computes."""
    x = _values(toolkit.float64)
    cases = [({}, {})]
    if o.name == "gelu":
        cases = [({"approximate": a}, {"approximate": a}) for a in ("none", "tanh")]
    elif o.name == "softplus":
        cases = [({}, {"beta": 1.0, "threshold": 20.0}), ({}, {"beta": 2.0, "threshold": 3.0})]
    elif o.overload == "decimals":
        cases = [({}, {"decimals": d}) for d in (0, 2, -1)]
    for constants, kwargs in cases:
        params = tuple(k for k in kwargs if k not in constants)
        k = map_kernel(o.formula, ("self",), params, constants)
        got = k(x, *[kwargs[p] for p in params])
        want = tk_fn(o.name)(toolkit.tensor(x), **kwargs).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300, equal_nan=True, err_msg=str(kwargs))
        zero = (got == 0) & (want == 0)
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=o.name)


def test_torch_dtypes_table_covers_the_test_dtypes():
    assert all(d in TORCH_DTYPES for d in FLOATS + INTS)


@pytest.mark.parametrize("name,args", [
    ("sin", ()), ("exp", ()), ("sqrt", ()), ("logical_not", ()), ("isnan", ()), ("square", ()),
    ("maximum", ("T",)), ("atan2", ("T",)), ("fmod", ("T",)), ("hypot", ("T",)), ("eq", ("T",)), ("lt", ("T",)),
    ("logical_and", ("T",)), ("addcmul", ("T", "T")), ("clamp", ("T",)),
])
def test_number_as_self_is_a_type_error_like_torch(name, args):
    """``torch.sin(2.0)`` is a TypeError: only ops with Scalar-self overloads take a number first."""
    for lib in (torch, toolkit):
        t = lib.tensor([0.5, 0.25])
        with pytest.raises(TypeError, match=rf"{name}\(\)"):
            getattr(lib, name)(2.0, *[t if a == "T" else a for a in args])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "floor_divide", "remainder"])
@pytest.mark.parametrize("number", [2, 2.5])
def test_number_as_self_where_torch_takes_it(name, number):
    t, th = toolkit.tensor([0.5, 1.25, 3.0]), torch.tensor([0.5, 1.25, 3.0])
    assert_close(getattr(toolkit, name)(number, t), getattr(torch, name)(number, th))


def test_reflected_operators_take_a_number():
    t, th = toolkit.tensor([0.5, 1.25, 3.0]), torch.tensor([0.5, 1.25, 3.0])
    for fn in (lambda x: 2 - x, lambda x: 2 ** x, lambda x: 3 / x, lambda x: 2 * x, lambda x: 2 + x,
               lambda x: 5 // x, lambda x: 5 % x, lambda x: 2.5 - x):
        assert_close(fn(t), fn(th))
    i, ih = toolkit.tensor([1, 6]), torch.tensor([1, 6])
    for fn in (lambda x: 3 & x, lambda x: 3 | x, lambda x: 3 ^ x):
        assert_close(fn(i), fn(ih))
    assert_close(toolkit.where(t > 1, 2.0, t), torch.where(th > 1, 2.0, th))


# ----------------------------------------------------------------------------- the division family, exact on integers
def _same_outcome(fn):
    """``fn(module)`` on torch and toolkit: equal results (values and dtype), or errors of one type whose
    toolkit message contains PyTorch's (toolkit prefixes the op's name)."""
    try:
        want = fn(torch)
    except Exception as e:  # noqa: BLE001 - the exception type and message are what we compare
        with pytest.raises(type(e), match=re.escape(str(e).split("\n")[0])):
            fn(toolkit)
        return
    got = fn(toolkit)
    assert_close(got, want)


_BIG = [2**40 + 1, -(2**40) - 1, 2**62 + 3, -(2**63) + 5, -7, 7, 0, 5]
_DIVISORS = [1, 3, -3, 2, -2, 5, 7, -1]
_DIVISION = {
    "div floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div none": lambda m, a, b: m.div(a, b, rounding_mode=None),
    "divide floor": lambda m, a, b: m.divide(a, b, rounding_mode="floor"),
    "true_divide": lambda m, a, b: m.true_divide(a, b),
    "Tensor.div trunc": lambda m, a, b: a.div(b, rounding_mode="trunc"),
    "div_ floor": lambda m, a, b: a.clone().div_(b, rounding_mode="floor"),
    "div_ trunc": lambda m, a, b: a.clone().div_(b, rounding_mode="trunc"),
    "divide_ trunc": lambda m, a, b: a.clone().divide_(b, rounding_mode="trunc"),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "//": lambda m, a, b: a // b,
    "//=": lambda m, a, b: a.clone().__ifloordiv__(b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "%": lambda m, a, b: a % b,
    "fmod": lambda m, a, b: m.fmod(a, b),
}
_DIVISOR_KINDS = {
    "tensor": lambda m, dt: m.tensor(_DIVISORS).to(dt),
    "int": lambda m, dt: 3,
    "negative int": lambda m, dt: -1,
    "float": lambda m, dt: 2.5,
    "0-dim": lambda m, dt: m.tensor(-3).to(dt),
    "zero": lambda m, dt: 0,
    "tensor with a zero": lambda m, dt: m.tensor([1, 0, 1, 1, 1, 1, 1, 1]).to(dt),
}


@pytest.mark.parametrize("op", list(_DIVISION))
@pytest.mark.parametrize("divisor", list(_DIVISOR_KINDS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool", "float32", "float64"])
def test_division_family_matches_torch_exactly(op, divisor, dtype):
    """Rounded quotients of integers stay integers, exact beyond 2**24 (``2**40 + 1`` floor-divided by 1 is
    itself), integer division by zero raises, and bool is refused, as in PyTorch."""
    values = _BIG if dtype == "int64" else [-7, 7, 3, -3, 100, 1, 0, 9]

    def run(m):
        dt = getattr(m, dtype)
        a = m.tensor([v % 2 for v in values]).to(dt) if dtype == "bool" else m.tensor(values).to(dt)
        return _DIVISION[op](m, a, _DIVISOR_KINDS[divisor](m, dt))

    _same_outcome(run)


@pytest.mark.parametrize("fn", [
    lambda m: m.div(7, m.tensor([2, -2]), rounding_mode="floor"),
    lambda m: m.div(m.tensor([7]), m.tensor(2.5), rounding_mode="trunc"),
    lambda m: m.div(m.tensor([1.0]), 0.1, rounding_mode="floor"),  # 9, not floor(1 / 0.1) = 10
    lambda m: m.div(m.tensor([1.0], dtype=m.float64), -0.1, rounding_mode="floor"),
    lambda m: m.div(m.tensor([-128], dtype=m.int8), -1, rounding_mode="trunc"),
    lambda m: m.div(m.tensor([7], dtype=m.uint8), 300, rounding_mode="floor"),
    lambda m: m.div(m.tensor([7]), 2, rounding_mode="round"),
    lambda m: m.tensor([7]).div_(2.5, rounding_mode="floor"),
    lambda m: m.true_divide(7, m.tensor([2])),
    lambda m: m.tensor([7.0]).true_divide_(2),
], ids=["number first", "0-dim float divisor", "float floor is fmod-based", "float64 negative divisor",
        "int8 overflow wraps", "uint8 wrapped divisor", "bad mode", "in-place refuses float", "true_divide number",
        "true_divide_"])
def test_division_edge_cases_match_torch(fn):
    _same_outcome(fn)


def test_true_divide_takes_no_rounding_mode_like_torch():
    for m in (torch, toolkit):
        with pytest.raises(TypeError, match="rounding_mode"):
            m.true_divide(m.tensor([7]), 2, rounding_mode="floor")


def test_div_rounding_keeps_the_integer_dtype_in_the_meta_rule():
    from toolkit.dispatch import bind

    o = registry.get("div")
    a, b = toolkit.tensor([2**40 + 1]), toolkit.tensor([1])
    assert o.infer(*bind(o, (a, b), {"rounding_mode": "floor"})).dtype is toolkit.int64
    assert o.infer(*bind(o, (a, b), {})).dtype is toolkit.float32


# ----------------------------------------------------------------------------- alpha of add and sub, bool subtraction
_ALPHA_OPERANDS = {
    "int": lambda m: m.tensor([1, 2]), "float": lambda m: m.tensor([1.0, 2.0]), "bool": lambda m: m.tensor([True, False]),
    "2": lambda m: 2, "2.5": lambda m: 2.5, "True": lambda m: True,
}


@pytest.mark.parametrize("op", ["add", "sub", "rsub"])
@pytest.mark.parametrize("self_kind", ["int", "float", "bool"])
@pytest.mark.parametrize("other_kind", list(_ALPHA_OPERANDS))
@pytest.mark.parametrize("alpha", [0.5, 2, True, False, 2.0])
def test_alpha_and_bool_rules_match_torch(op, self_kind, other_kind, alpha):
    """A float alpha with integral inputs, a bool alpha with a non-bool result and a bool operand of a
    subtraction are refused with PyTorch's messages (not numpy's casting error), and results match."""
    _same_outcome(lambda m: getattr(m, op)(_ALPHA_OPERANDS[self_kind](m), _ALPHA_OPERANDS[other_kind](m),
                                           alpha=alpha))


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([1, 2]).add_(m.tensor([1, 2]), alpha=0.5),
    lambda m: m.tensor([1, 2]).sub_(m.tensor([1, 2]), alpha=True),
    lambda m: m.tensor([1.0, 2.0]).add_(m.tensor([1, 2]), alpha=0.5),
    lambda m: m.tensor([True]).add_(m.tensor([True]), alpha=2),
    lambda m: m.tensor([1, 2]).add_(2.5, alpha=0.5),
    lambda m: m.tensor([1.0, 2.0]) - m.tensor([True, False]),
    lambda m: True - m.tensor([1.0, 2.0]),
    lambda m: m.tensor([1, 2]).sub_(True),
], ids=["int add_ float alpha", "int sub_ bool alpha", "float add_ float alpha", "bool add_ int alpha",
        "castability first", "float minus bool", "bool minus float", "int sub_ bool"])
def test_in_place_alpha_and_operator_forms_match_torch(fn):
    _same_outcome(fn)


def test_integral_alpha_message():
    with pytest.raises(RuntimeError, match="add: For integral input tensors, argument alpha must not be a floating "
                                           "point number."):
        toolkit.add(toolkit.tensor([1]), toolkit.tensor([1]), alpha=0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("shapes", [((64, 20, 8, 8), (64, 20, 1, 1)), ((8, 4096), (8, 1)), ((3, 4, 512), (3, 1, 1)),
                                    ((64, 50), (64, 1)), ((4, 8, 256), (1, 8, 1))], ids=str)
def test_product_by_per_row_values_equals_torch_bit_for_bit(dtype, shapes):
    """From 4096 elements a product by one value per leading index (a feature-dropout mask) runs a compiled
    loop: PyTorch's values bit for bit, either operand first, with NaN, infinities, -0.0 and a zero mask; other
    broadcasts (``(1, 8, 1)``) and small ones keep numpy's loop and agree too."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shapes[0]).astype(dtype)
    m = ((np.arange(np.prod(shapes[1])) % 3 != 0) * 2.0).astype(dtype).reshape(shapes[1])  # zeros and twos
    m.flat[-1] = 0.75
    x.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    m.flat[:2] = [-0.0, np.nan]
    for a, b in ((x, m), (m, x)):
        got = (toolkit.tensor(a) * toolkit.tensor(b)).numpy()
        want = (torch.tensor(a) * torch.tensor(b)).numpy()
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
