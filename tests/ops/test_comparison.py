"""Comparisons, logical and bitwise ops, classification (isnan...) and closeness (isclose, allclose, equal)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
from toolkit._core import dtypes
from toolkit.ops import registry

from ..conftest import assert_close, to_torch
from .test_pointwise import _values, check_like_torch

ALL = list(dtypes.ALL)
COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]
OPERATORS = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}


# ----------------------------------------------------------------------------- comparisons
@pytest.mark.parametrize("name", COMPARISONS + ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_dtype_matrix_matches_torch(name, a, b):
    out = check_like_torch(name, _values(a), _values(b, (3,), seed=1))
    assert out.dtype is toolkit.bool


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("scalar", [2, 2.5, -1, 256, True, 0.0, float("nan")], ids=str)
def test_comparison_with_python_scalars(name, a, scalar):
    x = _values(a)
    expected = getattr(to_torch(x), OPERATORS[name])(scalar)
    assert_close(getattr(x, OPERATORS[name])(scalar), expected)
    assert_close(getattr(toolkit, name)(x, scalar), expected)


def test_comparisons_promote_like_torch():
    i = toolkit.tensor([1, 2, 3])
    assert (i < 2.5).tolist() == [True, True, False]
    u8 = toolkit.tensor([1, 2, 255], dtype=toolkit.uint8)
    assert_close(u8 == -1, to_torch(u8) == -1)  # the number wraps to uint8, as in PyTorch
    assert_close(u8 < 256, to_torch(u8) < 256)
    i8 = toolkit.tensor([-1, 2], dtype=toolkit.int8)
    assert_close(u8[:2] > i8, to_torch(u8[:2]) > to_torch(i8))  # compared in int16
    big = toolkit.tensor([16777217])
    assert_close(big == toolkit.tensor([16777216.0]), torch.tensor([16777217]) == torch.tensor([16777216.0]))
    zero_dim = toolkit.tensor(2.5, dtype=toolkit.float64)
    assert_close(toolkit.gt(i, zero_dim), torch.gt(to_torch(i), to_torch(zero_dim)))


def test_nan_comparisons():
    a = toolkit.tensor([np.nan, 1.0, np.nan])
    b = toolkit.tensor([np.nan, np.nan, 1.0])
    for name in COMPARISONS:
        check_like_torch(name, a, b)
    assert (a != a).tolist() == [True, False, True]


def test_reflected_and_unsupported_operands():
    x = toolkit.tensor([1.0, 2.0, 3.0])
    assert (2 < x).tolist() == [False, False, True]
    assert (2.0 == x).tolist() == [False, True, False]
    assert (x == None) is False  # noqa: E711 - Python falls back to identity, as with torch
    assert (x != None) is True  # noqa: E711
    assert (x == "a") is False
    assert x not in [None, "a"]
    with pytest.raises(TypeError, match="'<' not supported between instances of 'Tensor' and 'NoneType'"):
        x < None  # noqa: B015
    with pytest.raises(TypeError, match="unsupported operand"):
        x + None
    assert_close(x == np.array([1.0, 0.0, 3.0]), torch.tensor([True, False, True]))


@pytest.mark.parametrize("name", COMPARISONS + ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("a", [toolkit.float32, toolkit.int16, toolkit.uint8, toolkit.bool], ids=str)
def test_inplace_keeps_self_dtype(name, a):
    x = _values(a)
    y = _values(toolkit.float64, (3,), seed=1)
    expected = getattr(to_torch(x).clone(), name + "_")(to_torch(y))
    out = x.clone()
    result = getattr(out, name + "_")(y)
    assert result is out
    assert_close(out, expected)


def test_broadcast_errors_name_op_and_shapes():
    for name in COMPARISONS + ["logical_and", "bitwise_or", "isclose"]:
        with pytest.raises(RuntimeError, match=rf"{name}: shapes \(2,\) and \(3,\) cannot be broadcast"):
            getattr(toolkit, name)(toolkit.ones(2, dtype=toolkit.int32), toolkit.ones(3, dtype=toolkit.int32))
    with pytest.raises(RuntimeError, match=r"eq_: output with shape \[2\] doesn't match the broadcast shape \[3, 2\]"):
        toolkit.ones(2).eq_(toolkit.ones(3, 2))


def test_results_are_not_differentiable():
    x = toolkit.tensor([1.0, -2.0], requires_grad=True)
    for out in (x < 0, x == x, toolkit.logical_not(x), toolkit.isnan(x), toolkit.isclose(x, x)):
        assert out.dtype is toolkit.bool
        assert not out.requires_grad


# ----------------------------------------------------------------------------- logical
def test_logical_ops_read_truth_values():
    a = toolkit.tensor([np.nan, 0.0, -0.0, 2.0])
    b = toolkit.tensor([1, 0, 3, 0])
    for name in ("logical_and", "logical_or", "logical_xor"):
        check_like_torch(name, a, b)
    check_like_torch("logical_not", a)
    check_like_torch("logical_not", b)
    y = a.clone()
    y.logical_not_()
    assert y.dtype is toolkit.float32 and y.tolist() == [0.0, 1.0, 1.0, 0.0]


# ----------------------------------------------------------------------------- bitwise
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_bitwise_dtype_matrix(name, a, b):
    check_like_torch(name, _values(a), _values(b, (3,), seed=1))


@pytest.mark.parametrize("a", ALL, ids=str)
def test_bitwise_not_and_scalars(a):
    x = _values(a)
    check_like_torch("bitwise_not", x)
    for scalar in (3, True, -1):
        check_like_torch("bitwise_and", x, scalar)
        check_like_torch("bitwise_xor", scalar, x)


def test_bitwise_operators():
    i = toolkit.tensor([2, 3, -4])
    b = toolkit.tensor([True, False, True])
    ti, tb = to_torch(i), to_torch(b)
    assert_close(i & 1, ti & 1)
    assert_close(1 | i, 1 | ti)
    assert_close(i ^ b, ti ^ tb)
    assert_close(b & 1, tb & 1)
    assert_close(b | b, tb | tb)
    assert_close(~i, ~ti)
    assert_close(~b, ~tb)
    j = i.clone()
    j &= 6
    j |= 1
    j ^= 2
    assert_close(j, ((ti & 6) | 1) ^ 2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        c = b.clone()
        c |= 2
    f = toolkit.tensor([1.5])
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        f & 1
    with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
        _ = ~f
    with pytest.raises(NotImplementedError, match="'Float'"):
        toolkit.bitwise_or(i, 1.5)


# ----------------------------------------------------------------------------- classification
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf"])
@pytest.mark.parametrize("a", ALL, ids=str)
def test_classification(name, a):
    x = toolkit.tensor(np.array([np.nan, np.inf, -np.inf, 1.0, -0.0]).astype(a.np) if a.is_floating_point
                       else _values(a).numpy())
    out = check_like_torch(name, x)
    assert out.dtype is toolkit.bool
    assert getattr(x, name)().tolist() == out.tolist()


# ----------------------------------------------------------------------------- closeness
def test_isclose_matches_torch():
    a = toolkit.tensor([1.0, np.nan, np.inf, -np.inf, np.inf, 1.0, 1e-9, 100.0])
    b = toolkit.tensor([1.0 + 1e-6, np.nan, np.inf, np.inf, 1.0, np.nan, 0.0, 100.01])
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-3}, {"atol": 0.5}):
        check_like_torch("isclose", a, b, **kwargs)
        assert toolkit.allclose(a, b, **kwargs) is torch.allclose(to_torch(a), to_torch(b), **kwargs)
    check_like_torch("isclose", a.half(), b.half())


@pytest.mark.parametrize("a", [toolkit.uint8, toolkit.int8, toolkit.int64, toolkit.bool], ids=str)
def test_isclose_integers_compare_in_float(a):
    x = _values(a, (6,))
    y = _values(a, (6,), seed=3)
    for kwargs in ({}, {"atol": 3}, {"rtol": 0.5}, {"rtol": 0, "atol": 0}):
        check_like_torch("isclose", x, y, **kwargs)
    u = toolkit.tensor([1, 5], dtype=toolkit.uint8)
    v = toolkit.tensor([5, 1], dtype=toolkit.uint8)
    assert toolkit.isclose(u, v, atol=3).tolist() == [False, False]  # no wrap-around in |u - v|


def test_closeness_errors():
    f = toolkit.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        toolkit.isclose(f, f.double())
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        toolkit.allclose(f, f.double())
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero, but got -1"):
        toolkit.isclose(f, f, rtol=-1)
    with pytest.raises(RuntimeError, match="atol must be greater than or equal to zero, but got -0.5"):
        toolkit.allclose(f, f, atol=-0.5)
    with pytest.raises(RuntimeError, match=r"allclose: shapes \(2,\) and \(3,\) cannot be broadcast"):
        toolkit.allclose(f, toolkit.ones(3))
    with pytest.raises(TypeError, match="allclose\\(\\): argument 'other' \\(position 2\\) must be Tensor, not float"):
        toolkit.allclose(f, 1.0)


def test_allclose_and_equal_return_python_bools():
    a = toolkit.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert toolkit.allclose(a, a + 1e-9) is True
    assert toolkit.allclose(a, a + 1e-3) is False
    assert toolkit.allclose(a[:1], toolkit.tensor([[1.0], [1.0 + 1e-7]]) * a[0]) is True  # broadcasts
    assert toolkit.equal(a, a.clone()) is True
    assert toolkit.equal(a, a.t().t().contiguous()) is True
    assert toolkit.equal(a, a[0]) is False
    assert toolkit.equal(toolkit.tensor([1, 2]), toolkit.tensor([1.0, 2.0])) is True
    assert toolkit.equal(toolkit.tensor([np.nan]), toolkit.tensor([np.nan])) is False
    assert toolkit.equal(toolkit.tensor(1.0), toolkit.tensor([1.0])) is False
    assert a.equal(a) is True and a.allclose(a) is True


# ----------------------------------------------------------------------------- formulas
FORMULA_OPS = [o for o in registry.all_ops()
               if o.formula and o.kernels.get("cpu") is not None
               and o.kernels["cpu"].__module__ == "toolkit.ops.comparison" and o.name != "bitwise_not"]


@pytest.mark.parametrize("o", FORMULA_OPS, ids=lambda o: o.schema.full_name)
def test_formula_agrees_with_kernel(o):
    """The scalar formula the fusion code generator inlines computes what the numpy kernel computes."""
    pool = [0.0, -0.0, 1.0, -1.5, 2.0, math.inf, -math.inf, math.nan, 1.0 + 1e-6]
    if o.name.startswith("bitwise"):
        pool = [0, 1, -3, 6, 127]
    rng = np.random.default_rng(0)
    names = [o.arg_names[i] for i in o.tensor_args]
    for _ in range(60):
        values = {n: pool[rng.integers(len(pool))] for n in names}
        for a in o.args:
            if not a.is_tensor and a.has_default:
                values[a.name] = a.default
        expected = o.kernels["cpu"](*[np.array(values[n]) for n in o.arg_names[:len(names)]],
                                    *[values[n] for n in o.arg_names[len(names):]])
        got = eval(o.formula, {"math": math}, dict(values))  # noqa: S307 - our own registry's formula
        assert bool(got) == bool(expected) if o.kind == registry.COMPARISON else got == expected, (o.formula, values)
