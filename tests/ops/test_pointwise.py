"""Binary and ternary pointwise ops (pow, division, clamp, where, maximum, lerp, addcmul...) against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit._core import dtypes
from toolkit.backends.cpu.scalar import HELPERS
from toolkit.ops import registry

from ..conftest import TORCH_DTYPES, assert_close, to_torch

ALL = list(dtypes.ALL)
INTS = [d for d in ALL if d.is_integral]


def _values(dtype, shape=(2, 3), nonzero=False, seed=0):
    """Small test values of ``dtype`` (nonzero ones for divisors), as a toolkit tensor."""
    rng = np.random.default_rng(seed)
    if dtype is toolkit.bool:
        a = rng.random(shape) > 0.5
        if nonzero:
            a[...] = True
    elif dtype.is_floating_point:
        a = rng.integers(-8, 9, shape) / 4.0
        if nonzero:
            a = np.where(a == 0, 1.25, a)
    else:
        low = 0 if dtype is toolkit.uint8 else -6
        a = rng.integers(low if not nonzero else 1, 7, shape)
        if nonzero and low < 0:
            a = a * rng.choice([-1, 1], shape)
    return toolkit.tensor(np.asarray(a).astype(dtype.np))


def _torch_args(args):
    return [to_torch(a) if isinstance(a, toolkit.Tensor) else a for a in args]


def check_like_torch(name, *args, **kwargs):
    """``toolkit.name(*args)`` matches ``torch.name``: same values and dtype, or the same exception type."""
    try:
        expected = getattr(torch, name)(*_torch_args(args), **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        with pytest.raises(type(e)):
            getattr(toolkit, name)(*args, **kwargs)
        return None
    out = getattr(toolkit, name)(*args, **kwargs)
    assert_close(out, expected)
    return out


# ----------------------------------------------------------------------------- dtype matrices
BINARY = ["pow", "floor_divide", "remainder", "fmod", "atan2", "hypot", "maximum", "minimum", "fmax", "fmin"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_binary_dtype_matrix_matches_torch(name, a, b):
    x = _values(a)
    y = _values(b, (3,), nonzero=name in ("floor_divide", "remainder", "fmod"), seed=1)
    if name == "pow":
        x = x.abs() if a is not toolkit.bool and a is not toolkit.uint8 else x
        y = _values(b, (3,), seed=1).abs() if b is not toolkit.bool and b is not toolkit.uint8 else y
    check_like_torch(name, x, y)


@pytest.mark.parametrize("name", ["pow", "floor_divide", "remainder", "fmod", "clamp_min", "clamp_max"])
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("scalar", [2, 2.5, True, -1])
def test_tensor_scalar_promotion_matches_torch(name, a, scalar):
    x = _values(a, nonzero=True)
    if name == "pow" and scalar == -1:
        x = x.abs() if a.is_floating_point else x
    check_like_torch(name, x, scalar)


@pytest.mark.parametrize("name", ["pow", "remainder"])
@pytest.mark.parametrize("b", ALL, ids=str)
@pytest.mark.parametrize("scalar", [3, 2.5])
def test_scalar_tensor_overloads_match_torch(name, b, scalar):
    check_like_torch(name, scalar, _values(b, nonzero=True).abs() if b.is_floating_point else _values(b, nonzero=True))


@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("zero_dim", [toolkit.float64, toolkit.int64, toolkit.int8, toolkit.bool], ids=str)
def test_zero_dim_tensors_promote_as_in_torch(a, zero_dim):
    x = _values(a, nonzero=True)
    z = toolkit.tensor(np.array(3).astype(zero_dim.np))
    for name in ("maximum", "floor_divide", "remainder", "fmax", "atan2"):
        check_like_torch(name, x, z)
    check_like_torch("clamp", x, z)
    check_like_torch("clamp", x, None, z)


def test_mixed_integer_promotion():
    u8 = toolkit.tensor([200, 3], dtype=toolkit.uint8)
    i8 = toolkit.tensor([-3, 2], dtype=toolkit.int8)
    assert toolkit.maximum(u8, i8).dtype is toolkit.int16
    assert toolkit.remainder(u8, i8).tolist() == [-1, 1]
    assert toolkit.floor_divide(u8, i8).tolist() == [-67, 1]
    assert (toolkit.tensor([2, 3]) ** 0.5).dtype is toolkit.float32
    assert (toolkit.tensor([2, 3], dtype=toolkit.int8) ** 2).dtype is toolkit.int8


# ----------------------------------------------------------------------------- pow
def test_integer_pow_rules():
    i = toolkit.tensor([2, 3, -4])
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        toolkit.pow(i, -1)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        i ** -2
    base = toolkit.tensor([1, -1, -1, 2, 0, 3])
    exp = toolkit.tensor([-3, -3, -2, -1, 2, 0])
    assert_close(toolkit.pow(base, exp), torch.pow(to_torch(base), to_torch(exp)))
    assert_close(toolkit.pow(2, i), torch.pow(2, to_torch(i)))
    assert_close(2 ** i, 2 ** to_torch(i))
    with pytest.raises(NotImplementedError, match="'Bool'"):
        toolkit.pow(toolkit.tensor([True]), toolkit.tensor([True]))
    assert_close(toolkit.pow(toolkit.tensor([True, False]), 2), torch.pow(torch.tensor([True, False]), 2))


def test_pow_float16_and_special_values():
    x = toolkit.tensor([4.0, 0.0, -2.0, np.inf], dtype=toolkit.float16)
    assert_close(x ** 0.5, to_torch(x) ** 0.5)
    y = toolkit.tensor([0.0, -2.0, 2.0, np.nan])
    for e in (-1, 0, 0.5, 3):
        assert_close(y ** e, to_torch(y) ** e)
    assert_close(toolkit.pow(-2.0, y), torch.pow(-2.0, to_torch(y)))


def test_pow_inplace_and_dunders():
    x = toolkit.tensor([1.0, 2.0, 3.0])
    x **= 2
    assert x.tolist() == [1.0, 4.0, 9.0]
    i = toolkit.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.pow_(0.5)
    assert_close(3.0 ** toolkit.tensor([1.0, 2.0]), 3.0 ** torch.tensor([1.0, 2.0]))


# ----------------------------------------------------------------------------- division and modulo
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod"])
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_division_by_zero_raises(name, dtype):
    x = _values(dtype)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(toolkit, name)(x, 0)
    with pytest.raises(RuntimeError, match=f"{name}: ZeroDivisionError"):
        getattr(toolkit, name)(x, toolkit.tensor([1, 0, 1], dtype=dtype))
    empty = toolkit.zeros((0, 3), dtype=dtype)
    assert getattr(toolkit, name)(empty, 0).shape == (0, 3)  # nothing to divide: no error, as in PyTorch


def test_integer_division_operators():
    i = toolkit.tensor([7, -7, 3])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        i // 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        i % 0
    assert_close(i // 2, to_torch(i) // 2)
    assert_close(i % -3, to_torch(i) % -3)
    assert_close(5 // i, 5 // to_torch(i))
    assert_close(5 % i, 5 % to_torch(i))
    j = i.clone()
    j //= 2
    j %= 3
    assert_close(j, (to_torch(i) // 2) % 3)
    i8 = toolkit.tensor([-128], dtype=toolkit.int8)
    for name in ("floor_divide", "remainder", "fmod"):
        check_like_torch(name, i8, -1)


@pytest.mark.parametrize("dtype", [toolkit.float16, toolkit.float32, toolkit.float64], ids=str)
def test_float_division_special_values(dtype):
    x = toolkit.tensor([5.0, -5.0, 0.0, np.inf, np.nan, 3.0, -3.0, 1.0], dtype=dtype)
    y = toolkit.tensor([0.0, 0.0, 0.0, 2.0, 1.0, np.inf, np.inf, 0.1], dtype=dtype)
    for name in ("floor_divide", "remainder", "fmod"):
        check_like_torch(name, x, y)
        check_like_torch(name, x, -y)


def test_remainder_and_fmod_signs():
    x = toolkit.tensor([-3.0, 3.0, -3.0, 3.0])
    y = toolkit.tensor([2.0, -2.0, -2.0, 2.0])
    assert toolkit.remainder(x, y).tolist() == [1.0, -1.0, -1.0, 1.0]
    assert toolkit.fmod(x, y).tolist() == [-1.0, 1.0, -1.0, 1.0]
    assert toolkit.floor_divide(x, y).tolist() == [-2.0, -2.0, 1.0, 1.0]


def test_floor_divide_is_not_differentiable():
    x = toolkit.tensor([1.5, 2.5], requires_grad=True)
    assert not toolkit.floor_divide(x, 2).requires_grad


# ----------------------------------------------------------------------------- clamp
def test_clamp_promotion_and_errors():
    i = toolkit.tensor([-3, 0, 5])
    assert toolkit.clamp(i, min=0.5).dtype is toolkit.float32
    assert toolkit.clamp(i, 0, 2).dtype is toolkit.int64
    assert toolkit.clamp(i, toolkit.tensor(0.5)).dtype is toolkit.float32
    assert toolkit.clamp(i, toolkit.tensor(0.5, dtype=toolkit.float64)).dtype is toolkit.float64
    assert toolkit.clamp(i.float(), toolkit.tensor(0.5, dtype=toolkit.float64)).dtype is toolkit.float32
    assert toolkit.clamp(i, None, toolkit.tensor(1.0, dtype=toolkit.float64)).dtype is toolkit.float64
    with pytest.raises(RuntimeError, match="clamp: At least one of 'min' or 'max' must not be None"):
        toolkit.clamp(i)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        toolkit.clamp(i, None, None)
    with pytest.raises(RuntimeError, match="without overflow"):
        toolkit.clamp(toolkit.tensor([1], dtype=toolkit.uint8), 300)
    with pytest.raises(RuntimeError, match="without overflow"):
        toolkit.clamp(toolkit.tensor([1], dtype=toolkit.int8), -200)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clone().clamp_(0.5)
    b = toolkit.tensor([True, False])
    for args in ((True,), (None, True), (True, True)):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            toolkit.clamp(b, *args)
    with pytest.raises(NotImplementedError, match='"clamp_cpu"'):
        toolkit.clamp(b, toolkit.tensor(True), toolkit.tensor(True))
    check_like_torch("clamp", b, toolkit.tensor(True))
    check_like_torch("clamp", b, 2)
    check_like_torch("clamp", toolkit.tensor([1, 2, 3], dtype=toolkit.uint8), -1, 2)


@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("bounds", [(1, 2), (0.5, None), (None, -1), (2, 1), (1.5, 0.5)], ids=str)
def test_clamp_scalar_bounds_match_torch(a, bounds):
    x = _values(a)
    check_like_torch("clamp", x, *bounds)
    check_like_torch("clip", x, *bounds)


def test_clamp_tensor_bounds_and_nan():
    x = toolkit.tensor([[np.nan, -2.0, 0.5, 3.0]])
    lo = toolkit.tensor([[0.0], [1.0]])
    hi = toolkit.tensor([1.0, np.nan, 0.7, 2.0])
    check_like_torch("clamp", x, lo, hi)
    check_like_torch("clamp", x, lo)
    check_like_torch("clamp", x, None, hi)
    check_like_torch("clamp", x, float("nan"))
    check_like_torch("clamp_min", x, lo)
    check_like_torch("clamp_max", x, hi)
    with pytest.raises(RuntimeError, match=r"clamp: shapes \(1, 4\) and \(3,\) cannot be broadcast"):
        toolkit.clamp(x, toolkit.tensor([0.0, 1.0, 2.0]))
    y = x.clone()
    y.clamp_(lo[0], hi)
    assert_close(y, to_torch(x).clamp(to_torch(lo[0]), to_torch(hi)))
    y = x.clone()
    y.clip_(0.0, 1.0)
    assert_close(y, to_torch(x).clip(0.0, 1.0))


def _grads_match(fn, *inputs):
    """toolkit and torch agree on ``fn``'s output and on the gradients of every float input."""
    tk = [toolkit.tensor(v, requires_grad=True) if isinstance(v, np.ndarray) else v for v in inputs]
    th = [torch.tensor(v, requires_grad=True) if isinstance(v, np.ndarray) else v for v in inputs]
    out_tk, out_th = fn(toolkit, *tk), fn(torch, *th)
    assert_close(out_tk, out_th)
    g = np.linspace(0.5, 1.5, out_th.numel()).reshape(out_th.shape)
    out_tk.backward(toolkit.tensor(g))
    out_th.backward(torch.tensor(g))
    for a, b in zip(tk, th):
        if isinstance(b, torch.Tensor):
            assert_close(a.grad, b.grad)


def test_clamp_gradients_match_torch():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0])
    _grads_match(lambda m, x: m.clamp(x, -0.5, 1.0), x)
    _grads_match(lambda m, x: m.clamp(x, 1.0, -0.5), x)
    _grads_match(lambda m, x: m.clamp_min(x, 0.0), x)
    _grads_match(lambda m, x: m.clamp_max(x, 0.5), x)
    lo = np.array([-1.0, 0.0, 0.5, 0.0, 2.0, 0.0])
    hi = np.array([1.0, 1.0, -1.0, 0.5, 1.0, 2.5])
    _grads_match(lambda m, x, lo, hi: m.clamp(x, lo, hi), x, lo, hi)
    _grads_match(lambda m, x, lo: m.clamp(x, lo), x, lo)
    _grads_match(lambda m, x, hi: m.clamp(x, None, hi), x, hi)
    _grads_match(lambda m, x, lo: m.clamp_min(x, lo), x, lo)
    _grads_match(lambda m, x, hi: m.clamp_max(x, hi), x, hi)


# ----------------------------------------------------------------------------- maximum, minimum, fmax, fmin
def test_nan_handling():
    a = toolkit.tensor([np.nan, 1.0, np.nan, 2.0])
    b = toolkit.tensor([2.0, np.nan, np.nan, 1.0])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        check_like_torch(name, a, b)
    assert math.isnan(toolkit.maximum(a, b)[1].item())
    assert toolkit.fmax(a, b)[1].item() == 1.0


def test_extrema_gradients_split_ties_like_torch():
    a = np.array([1.0, 2.0, -1.0, 0.5])
    b = np.array([1.0, 0.5, -1.0, 3.0])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        _grads_match(lambda m, a, b, name=name: getattr(m, name)(a, b), a, b)
    nan = np.array([np.nan, 1.0])
    _grads_match(lambda m, a, b: m.fmax(a, b), nan, np.array([2.0, np.nan]))


def test_broadcast_errors_name_op_and_shapes():
    a, b = toolkit.ones(2), toolkit.ones(3)
    for name in ("maximum", "pow", "atan2", "remainder", "fmod", "hypot", "floor_divide"):
        with pytest.raises(RuntimeError, match=rf"{name}: shapes \(2,\) and \(3,\) cannot be broadcast"):
            getattr(toolkit, name)(a, b)
    with pytest.raises(RuntimeError, match=r"where: shapes \(1,\) and \(2,\) and \(3,\) cannot be broadcast"):
        toolkit.where(toolkit.tensor([True]), a, b)
    with pytest.raises(RuntimeError, match=r"lerp: shapes \(2,\) and \(3,\) cannot be broadcast"):
        toolkit.lerp(a, b, 0.5)
    with pytest.raises(RuntimeError, match=r"addcmul: shapes"):
        toolkit.addcmul(a, b, a)


# ----------------------------------------------------------------------------- where
@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", [toolkit.float32, toolkit.int8, toolkit.uint8, toolkit.bool], ids=str)
def test_where_promotes_self_and_other_only(a, b):
    cond = toolkit.tensor([[True, False, True]])
    check_like_torch("where", cond, _values(a), _values(b, (3,)))
    check_like_torch("where", cond, _values(a), 2.5)
    check_like_torch("where", cond, 1, _values(a))


def test_where_condition_rules():
    x = toolkit.ones(3)
    assert toolkit.where(toolkit.tensor([True, False, True]), 1, 0).dtype is toolkit.int64
    assert toolkit.where(toolkit.tensor([True, False, True]), 1.0, 0).dtype is toolkit.float32
    assert toolkit.where(toolkit.tensor([True, False]), True, False).dtype is toolkit.bool
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor with dtype Float"):
        toolkit.where(x, x, x)
    with pytest.raises(TypeError, match="condition"):
        toolkit.where(True, x, x)
    with pytest.warns(UserWarning, match="uint8 condition"):
        out = toolkit.where(toolkit.tensor([1, 0, 1], dtype=toolkit.uint8), x, 0.0)
    assert out.tolist() == [1.0, 0.0, 1.0]


def test_where_gradients_route_by_condition():
    cond = np.array([[True, False, True]])
    _grads_match(lambda m, s, o: m.where(m.tensor(cond), s, o), np.array([[1.0, 2.0, 3.0]]), np.array([[4.0], [5.0]]))
    _grads_match(lambda m, s: m.where(m.tensor(cond), s, 0.0), np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("n", [4095, 4096, 92160])
def test_large_where_equals_torch_bit_for_bit(dtype, n):
    """From 4096 float values ``where`` runs a compiled select: the same values and dtype as PyTorch's for
    arrays on both sides, a number on either side (taken in the array's dtype, as PyTorch takes it), and
    specials (NaN, infinities, -0.0) passing through; a float64 number beside float32 promotes as in PyTorch."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    a[:4] = [np.nan, np.inf, -np.inf, -0.0]
    b[4:8] = [np.nan, np.inf, -np.inf, -0.0]
    cond = rng.random(n) > 0.5
    cases = [(a, b), (a, 0.1), (-0.0, b), (a, 2), (True, b), (a, np.float64(0.1)), (a.reshape(-1, 1)[:8], b[:8])]
    for self, other in cases:
        c = cond if np.ndim(self) < 2 else cond[:8]
        got = toolkit.where(toolkit.tensor(c), *(toolkit.tensor(v) if isinstance(v, np.ndarray) else v
                                                 for v in (self, other)))
        want = torch.where(torch.tensor(c), *(torch.tensor(v) if isinstance(v, np.ndarray) else v
                                              for v in (self, other)))
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert np.array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))


def test_relu_gradient_of_many_values_equals_torch():
    """ReLU's gradient (a ``where`` on the result) over 92k values, with NaN inputs and NaN/inf gradients."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 10, 12, 12)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    x.flat[:3] = [np.nan, 0.0, -0.0]
    g.flat[3:6] = [np.nan, np.inf, -np.inf]
    grads = []
    for m in (toolkit, torch):
        t = m.tensor(x, requires_grad=True)
        m.relu(t).backward(m.tensor(g))
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("cond", [
    [[1, 0], [0, 1]], [True, False, True], 1.0, 0.0, [0.0, 1.5], [[[0, 2], [3, 0]]], [],
], ids=str)
def test_where_of_a_condition_alone_is_nonzero_as_tuple(cond):
    """``where(condition)`` is ``condition.nonzero(as_tuple=True)``, as in PyTorch (and NumPy)."""
    got = toolkit.where(toolkit.tensor(cond))
    assert isinstance(got, tuple)
    assert_close(got, torch.where(torch.tensor(cond)))
    assert_close(toolkit.where(condition=toolkit.tensor(cond)), torch.where(condition=torch.tensor(cond)))


def test_where_with_two_arguments_is_a_type_error_like_torch():
    for m in (torch, toolkit):
        with pytest.raises(TypeError, match="where"):
            m.where(m.tensor([True]), m.ones(1))


# ----------------------------------------------------------------------------- lerp, addcmul, addcdiv, hypot, atan2
def test_lerp_dtype_rules():
    f = toolkit.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        toolkit.lerp(f, f.double(), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float for `weight` but got dtype double"):
        toolkit.lerp(f, f, f.double())
    with pytest.raises(NotImplementedError, match="'Long'"):
        toolkit.lerp(toolkit.tensor([1]), toolkit.tensor([2]), 0.5)
    check_like_torch("lerp", f, f * 3, toolkit.tensor(0.5, dtype=toolkit.float16))
    check_like_torch("lerp", f.half(), (f * 3).half(), 0.3)
    check_like_torch("lerp", f, toolkit.tensor([[3.0], [4.0]]), toolkit.tensor([0.2, 0.9]))
    y = f.clone()
    y.lerp_(toolkit.tensor([3.0, 3.0]), 0.25)
    assert_close(y, torch.tensor([1.0, 2.0]).lerp(torch.tensor([3.0, 3.0]), 0.25))


def test_addcmul_addcdiv_rules():
    i = toolkit.tensor([1, 2, 3])
    f = toolkit.tensor([1.5, -2.0, 4.0])
    check_like_torch("addcmul", i, i, i, value=0.5)
    check_like_torch("addcmul", i, i, i, value=2)
    check_like_torch("addcmul", f, i, i, value=2.5)
    check_like_torch("addcmul", f.half(), f, f)
    check_like_torch("addcdiv", i, f, f)
    check_like_torch("addcdiv", f, f, f, value=-0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        toolkit.addcdiv(i, i, i)
    with pytest.raises(NotImplementedError, match="'Bool'"):
        toolkit.addcmul(toolkit.tensor([True]), toolkit.tensor([True]), toolkit.tensor([True]))


def test_gradients_of_arithmetic_match_torch():
    a = np.array([0.5, 1.5, 2.0, 0.0])
    b = np.array([-1.0, 2.0, 0.5, 2.0])
    _grads_match(lambda m, a, b: m.pow(a, b), a, b)
    _grads_match(lambda m, a: m.pow(a, 0), a)
    _grads_match(lambda m, a: m.pow(a, 3), a)
    _grads_match(lambda m, b: m.pow(0.0, b), b)
    _grads_match(lambda m, b: m.pow(2.5, b), b)
    _grads_match(lambda m, a, b: m.atan2(a, b), a, b)
    _grads_match(lambda m, a, b: m.arctan2(a, b), a, b)
    _grads_match(lambda m, a, b: m.hypot(a, b), a + 0.5, b)
    _grads_match(lambda m, a, b: m.remainder(a, b), a, b)
    _grads_match(lambda m, a, b: m.fmod(a, b), a, b)
    _grads_match(lambda m, a, b, w: m.lerp(a, b, w), a, b, np.array([0.2, 0.7, -1.0, 2.0]))
    _grads_match(lambda m, a, b: m.lerp(a, b, 0.3), a, b)
    _grads_match(lambda m, a, b, c: m.addcmul(a, b, c, value=-1.5), a, b, b + a)
    _grads_match(lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5), a, b, b)


def test_aliases_are_the_same_op():
    x = toolkit.tensor([-2.0, 0.5, 3.0])
    assert_close(toolkit.clip(x, -1, 1), toolkit.clamp(x, -1, 1))
    assert_close(x.arctan2(x + 1), toolkit.atan2(x, x + 1))
    y = x.clone()
    y.arctan2_(x + 1)
    assert_close(y, toolkit.atan2(x, x + 1))


# ----------------------------------------------------------------------------- formulas
MODULES = ("toolkit.ops.pointwise", "toolkit.ops.selection")
FORMULA_OPS = [o for o in registry.all_ops()
               if o.kind == registry.ELEMENTWISE and o.kernels.get("cpu") is not None
               and o.kernels["cpu"].__module__ in MODULES]


@pytest.mark.parametrize("o", FORMULA_OPS, ids=lambda o: o.schema.full_name)
def test_formula_agrees_with_kernel_on_floats(o):
    """The scalar formula the fusion code generator inlines computes what the numpy kernel computes."""
    rng = np.random.default_rng(0)
    names = [a.name for a in o.args if a.is_tensor or a.type.startswith("Scalar")]
    for _ in range(50):
        values = {n: float(rng.choice([rng.uniform(0.25, 3.0), rng.uniform(-3.0, -0.25), 1.0, -1.0])) for n in names}
        if o.name == "where":
            values["condition"] = np.array(rng.random() > 0.5)
        if o.name == "pow":
            values["self"] = abs(values["self"])
        for a in o.args:
            if not a.is_tensor and a.has_default:
                values.setdefault(a.name, a.default)
        if o.name.startswith("clamp") and "min" in values and "max" in values and rng.random() < 0.3:
            values[rng.choice(["min", "max"])] = None
        expected = o.kernels["cpu"](*[np.float64(values[n]) if isinstance(values[n], float) else values[n]
                                      for n in o.arg_names])
        scalars = {k: (bool(v) if isinstance(v, np.ndarray) else v) for k, v in values.items()}
        got = eval(o.formula, {"math": math, **HELPERS}, scalars)  # noqa: S307 - our own registry's formula
        assert got == pytest.approx(float(expected), rel=1e-12, abs=1e-12), (o.formula, values)


# ----------------------------------------------------------------------------- property: shapes and dtypes
@st.composite
def _broadcastable_pair(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    a, b = [], []
    for s in shape:
        pick = draw(st.sampled_from(["both", "a1", "b1"]))
        a.append(1 if pick == "a1" else s)
        b.append(1 if pick == "b1" else s)
    drop_a = draw(st.integers(0, len(a)))
    drop_b = draw(st.integers(0, len(b)))
    return tuple(a[drop_a:]), tuple(b[drop_b:])


@settings(max_examples=150, deadline=None)
@given(_broadcastable_pair(), st.sampled_from(ALL), st.sampled_from(ALL),
       st.sampled_from(["add", "mul", "eq", "maximum"]))
def test_result_shape_and_dtype_match_torch(shapes, da, db, name):
    sa, sb = shapes
    x = toolkit.ones(sa, dtype=da)
    y = toolkit.ones(sb, dtype=db)
    try:
        expected = getattr(torch, name)(torch.ones(sa, dtype=TORCH_DTYPES[da]), torch.ones(sb, dtype=TORCH_DTYPES[db]))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(toolkit, name)(x, y)
        return
    out = getattr(toolkit, name)(x, y)
    assert tuple(out.shape) == tuple(expected.shape)
    assert TORCH_DTYPES[out.dtype] == expected.dtype
    meta = registry.get(name).infer(x, y) if name != "add" else registry.get(name).infer(x, y, 1)
    assert tuple(meta.shape) == tuple(expected.shape) and meta.dtype is out.dtype


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("weight", [0.3, -0.2, 0.5, -0.5, 0.7, 1.6, float("nan"), float("inf"), 0, 1])
def test_lerp_scalar_weight_matches_torch(dtype, weight):
    """A number weight takes one side of the two-sided formula for the whole tensor (out of place, in place, broadcast)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((6, 5)) * 50, rng.standard_normal((5,)) * 50
    a[0, 0] = np.nan
    tk_a, tk_b = toolkit.tensor(a).to(getattr(toolkit, dtype)), toolkit.tensor(b).to(getattr(toolkit, dtype))
    th_a, th_b = torch.tensor(a).to(getattr(torch, dtype)), torch.tensor(b).to(getattr(torch, dtype))
    assert_close(toolkit.lerp(tk_a, tk_b, weight), torch.lerp(th_a, th_b, weight))
    assert_close(tk_b.lerp(tk_a, weight), th_b.lerp(th_a, weight))
    w_tk, w_th = toolkit.tensor(weight, dtype=tk_a.dtype), torch.tensor(weight, dtype=th_a.dtype)
    assert_close(tk_a.t().lerp(tk_b[:, None], w_tk), th_a.t().lerp(th_b[:, None], w_th))
    out = tk_a.clone()
    assert out.lerp_(tk_b, weight) is out
    assert_close(out, th_a.clone().lerp_(th_b, weight))
