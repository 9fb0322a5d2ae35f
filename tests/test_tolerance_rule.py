"""The tolerance rule of tests/conftest.py: torch.testing's per-dtype tolerances, scaled by sqrt(accum) for
values accumulated from accum terms, the less precise dtype's when two differ."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit

from .conftest import BASE_TOLERANCES, assert_close, tolerances


@pytest.mark.parametrize("name,expected", [
    ("float16", (1e-3, 1e-5)), ("bfloat16", (1.6e-2, 1e-5)), ("float32", (1.3e-6, 1e-5)),
    ("float64", (1e-7, 1e-7)), ("complex64", (1.3e-6, 1e-5)), ("complex128", (1e-7, 1e-7)),
])
def test_base_tolerances_are_torch_testing_defaults(name, expected):
    assert BASE_TOLERANCES[name] == expected
    assert tolerances(name) == expected


def test_dtypes_of_every_library_and_of_arrays_name_the_same_tolerances():
    for dt in (toolkit.float32, torch.float32, np.float32, np.dtype(np.float32), "float32",
               toolkit.zeros(2), torch.zeros(2), np.zeros(2, np.float32)):
        assert tolerances(dt) == (1.3e-6, 1e-5), dt
    assert tolerances(torch.bfloat16) == (1.6e-2, 1e-5)
    assert tolerances(toolkit.float16) == tolerances(torch.float16) == (1e-3, 1e-5)


def test_integers_and_bool_are_exact():
    for dt in (toolkit.int64, torch.int32, np.uint8, np.bool_, toolkit.bool):
        assert tolerances(dt) == (0.0, 0.0)


@pytest.mark.parametrize("accum", [4, 2304, 10**6])
def test_both_tolerances_scale_with_the_square_root_of_accum(accum):
    rtol, atol = tolerances(np.float32, accum)
    assert rtol == pytest.approx(1.3e-6 * math.sqrt(accum)) and atol == pytest.approx(1e-5 * math.sqrt(accum))


def test_short_accumulations_keep_the_base():
    assert tolerances(np.float32, 0) == tolerances(np.float32, 1) == tolerances(np.float32)


def test_the_less_precise_dtype_wins():
    assert tolerances((np.float32, np.float64)) == tolerances((torch.float64, toolkit.float32)) == (1.3e-6, 1e-5)
    assert tolerances((np.float16, np.float32)) == (1e-3, 1e-5)
    assert tolerances((np.int64, np.float64)) == (1e-7, 1e-7)  # an exact integer does not tighten a float
    # through assert_close: float16 against float32 passes a 5e-4 relative error that float32 against float64
    # does not
    x = np.linspace(0.5, 2.0, 7)
    off = x * (1 + 5e-4)
    assert_close(toolkit.tensor(x.astype(np.float16)), torch.tensor(off, dtype=torch.float32), check_dtype=False)
    assert_close(torch.tensor(off, dtype=torch.float32), toolkit.tensor(x.astype(np.float16)), check_dtype=False)
    with pytest.raises(AssertionError):
        assert_close(toolkit.tensor(x.astype(np.float32)), torch.tensor(off, dtype=torch.float64), check_dtype=False)


def _dot_products(n: int, count: int, seed: int = 0):
    """``count`` float32 sums of ``n`` products of standard normals, summed sequentially and pairwise."""
    rng = np.random.default_rng(seed)
    terms = (rng.standard_normal((count, n)) * rng.standard_normal((count, n))).astype(np.float32)
    sequential = np.zeros(count, np.float32)
    for k in range(n):
        sequential += terms[:, k]
    pairwise = terms.sum(axis=1, dtype=np.float32)  # numpy sums float32 pairwise, in blocks
    return sequential, pairwise


def test_float32_sum_of_2304_products_in_another_order_passes():
    """The conv weight gradient case: (4, 1, 28, 28) x (10, 1, 5, 5) sums N * H_out * W_out = 4 * 24 * 24 = 2304
    products per element; two valid summation orders differ in the last bits."""
    sequential, pairwise = _dot_products(2304, 250)
    assert not np.array_equal(sequential, pairwise)
    assert_close(sequential, pairwise, accum=2304)
    with pytest.raises(AssertionError):  # the elementwise tolerance is too tight for them
        assert_close(sequential, pairwise)
    # the element seen on another machine: 0.28949833 against 0.2895298, 3.1e-5 apart
    assert_close(np.float32(0.28949832916259766), np.float32(0.28952980041503906), accum=2304)
    with pytest.raises(AssertionError, match="accum=1"):  # what a fixed elementwise tolerance says about it
        assert_close(np.float32(0.28949832916259766), np.float32(0.28952980041503906))


def test_a_short_elementwise_float32_op_off_by_1e_4_relative_fails():
    x = np.random.default_rng(1).uniform(-3, 3, 50).astype(np.float32)
    want = torch.sin(torch.from_numpy(x))
    got = toolkit.sin(toolkit.tensor(x))
    assert_close(got, want)
    with pytest.raises(AssertionError, match="float32 vs float32, accum=1"):
        assert_close(got * (1 + 1e-4), want)
    with pytest.raises(AssertionError):  # even with a short sum: 1e-4 is not a rounding difference of float32
        assert_close(got * (1 + 1e-4), want, accum=16)


def test_float64_stays_tight():
    x = np.random.default_rng(2).uniform(0.5, 2.0, 20)
    assert_close(x * (1 + 1e-10), x)
    with pytest.raises(AssertionError):
        assert_close(x * (1 + 1e-6), x)
    with pytest.raises(AssertionError):  # a long sum loosens float64 by sqrt(2304) = 48, no more
        assert_close(x * (1 + 1e-5), x, accum=2304)
    sequential, pairwise = (a.astype(np.float64) for a in _dot_products(2304, 20))
    with pytest.raises(AssertionError):  # float32 rounding is far outside float64's tolerance
        assert_close(sequential, pairwise.astype(np.float64) * (1 + 1e-5), accum=2304)


def test_float16_and_bfloat16_compare_by_their_own_precision():
    x = np.linspace(-2, 2, 9)
    half = toolkit.tensor(x).to(toolkit.float16)
    assert_close(half, torch.tensor(x, dtype=torch.float16))
    b = torch.tensor(x, dtype=torch.bfloat16)
    assert_close(b, torch.tensor(x * (1 + 5e-3), dtype=torch.bfloat16))
    with pytest.raises(AssertionError, match="dtype bfloat16 != expected float32"):
        assert_close(b, torch.tensor(x * (1 + 5e-3), dtype=torch.float32))  # checks the dtype first


def test_overrides_replace_the_rule_one_at_a_time():
    a, e = np.float32([1.0, 2.0]), np.float32([1.001, 2.0])
    with pytest.raises(AssertionError):
        assert_close(a, e)
    assert_close(a, e, rtol=1e-3)  # atol stays the rule's
    assert_close(a, e, atol=1e-3)
    with pytest.raises(AssertionError):
        assert_close(a, e, rtol=0, atol=0, accum=10**8)


def test_integers_must_be_equal_and_lists_compare_element_by_element():
    assert_close(toolkit.tensor([1, 2, 3]), torch.tensor([1, 2, 3]))
    with pytest.raises(AssertionError):
        assert_close(toolkit.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), accum=10**6)
    assert_close([toolkit.ones(2), toolkit.zeros(1)], (torch.ones(2), torch.zeros(1)))
    with pytest.raises(AssertionError, match="dtype float32 != expected float64"):
        assert_close(toolkit.ones(2), torch.ones(2, dtype=torch.float64))
