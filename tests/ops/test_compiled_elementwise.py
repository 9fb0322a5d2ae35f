"""Elementwise ops that switch to a compiled loop (or another numpy call) from some size on agree with PyTorch
on both sides of the switch: clamp by number bounds, relu, pow by 2, and fill/zero of large tensors. NaN, -0.0
and infinities included, float32 and float64, contiguous and not."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import conversion
from toolkit.ops.elementwise import FORMULA_KERNEL_MIN

from ..conftest import assert_close

SIZES = (7, FORMULA_KERNEL_MIN, FORMULA_KERNEL_MIN + 3, conversion.ZERO_BYTES_MIN * 2 + 1)


def _values(n: int, dtype, rng) -> np.ndarray:
    a = (rng.standard_normal(n) * 3).astype(dtype)
    specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 0.5, -0.5], dtype)
    a[:min(n, 7)] = specials[:min(n, 7)]
    return a


def _pair(a: np.ndarray, strided: bool):
    t, th = toolkit.from_numpy(a.copy()), torch.from_numpy(a.copy())
    return (t[::2], th[::2]) if strided else (t, th)


def _same(r, e) -> None:
    r, e = r.numpy(), e.numpy()
    assert r.dtype == e.dtype and r.shape == e.shape
    np.testing.assert_array_equal(r, e)  # NaN where NaN
    for part in ((np.real, np.imag) if r.dtype.kind == "c" else (np.asarray,)):
        pr, pe = part(r), part(e)
        if pr.dtype.kind == "f":
            zeros = pe == 0
            np.testing.assert_array_equal(np.signbit(pr[zeros]), np.signbit(pe[zeros]))  # -0.0 where -0.0


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("bounds", [{"min": 0}, {"max": 0.3}, {"min": -0.2, "max": 0.3}, {"min": 0.5, "max": -0.5},
                                    {"min": float("nan")}, {"max": 0.1}, {"min": -1, "max": float("inf")}])
def test_clamp_by_numbers_matches_torch(n, dtype, strided, bounds):
    t, th = _pair(_values(n, dtype, np.random.default_rng(n)), strided)
    _same(t.clamp(**bounds), th.clamp(**bounds))
    if list(bounds) == ["min"]:
        _same(t.clamp_min(bounds["min"]), th.clamp_min(bounds["min"]))
    if list(bounds) == ["max"]:
        _same(t.clamp_max(bounds["max"]), th.clamp_max(bounds["max"]))


def test_clamp_keeps_pytorchs_promotion_and_integer_path():
    a = np.arange(-5000, 5000, dtype=np.int32)
    for bounds in ({"min": 0}, {"min": 0.5}, {"max": -3, "min": 2}):
        _same(toolkit.from_numpy(a).clamp(**bounds), torch.from_numpy(a).clamp(**bounds))


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_relu_matches_torch(n, dtype, strided):
    t, th = _pair(_values(n, dtype, np.random.default_rng(n)), strided)
    _same(toolkit.relu(t), torch.relu(th))
    x = toolkit.from_numpy(_values(n, dtype, np.random.default_rng(1))).requires_grad_()
    xt = torch.from_numpy(_values(n, dtype, np.random.default_rng(1))).requires_grad_()
    toolkit.relu(x).sum().backward()
    torch.relu(xt).sum().backward()
    _same(x.grad, xt.grad)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("exponent", [2, 2.0])
def test_pow_by_two_matches_torch(dtype, exponent):
    a = _values(3000, dtype, np.random.default_rng(3)) * 100
    _same(toolkit.from_numpy(a).pow(exponent), torch.from_numpy(a).pow(exponent))
    x = toolkit.from_numpy(a[:50].astype(np.float64)).requires_grad_()
    xt = torch.from_numpy(a[:50].astype(np.float64)).requires_grad_()
    x.pow(exponent).sum().backward()
    xt.pow(exponent).sum().backward()
    assert_close(x.grad, xt.grad)
    ints = np.arange(-50, 50, dtype=np.int32)
    _same(toolkit.from_numpy(ints).pow(exponent), torch.from_numpy(ints).pow(exponent))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex64, np.bool_])
@pytest.mark.parametrize("value", [0, -0.0, 1])
def test_large_fills_match_torch(dtype, value):
    n = conversion.ZERO_BYTES_MIN * 3
    for strided in (False, True):
        t, th = _pair(np.ones(n, dtype), strided)
        t.fill_(value)
        th.fill_(value)
        _same(t, th)
        t.zero_()
        th.zero_()
        _same(t, th)
    if dtype is np.complex64:  # a zero with a negative zero inside it is no run of zero bytes
        for z in (complex(0.0, -0.0), complex(-0.0, 0.0)):
            t, th = _pair(np.ones(n, dtype), False)
            t.fill_(z)
            th.fill_(z)
            _same(t, th)
    base = toolkit.ones(n, dtype=toolkit.float32)
    base[::2].zero_()  # a strided view: only its elements change
    assert base[1::2].eq(1).all().item() and base[::2].eq(0).all().item()
