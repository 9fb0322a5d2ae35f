"""Tensor printing against PyTorch: ``repr`` must match character for character (``torch.`` -> ``toolkit.``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import toolkit
from toolkit.printing import get_printoptions, printoptions


def expected(t: torch.Tensor) -> str:
    return repr(t).replace("torch.", "toolkit.")


def check(arr: np.ndarray) -> None:
    arr = np.array(arr)
    assert repr(toolkit.tensor(arr)) == expected(torch.from_numpy(arr.copy()))


@pytest.fixture(autouse=True)
def _default_options():
    yield
    toolkit.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


RNG = np.random.default_rng(0)
SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 3), (7, 13), (40,), (1001,), (30, 40), (3, 500), (11, 11, 11)]
SCALES = [1, 1e-5, 1e5, 1e9, 0.01, 123.456]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_floats_of_many_magnitudes(shape, scale, dtype):
    if dtype == np.float16 and scale > 1e4:
        return
    check((RNG.standard_normal(shape) * scale).astype(dtype))
    check(np.round(RNG.standard_normal(shape) * scale).astype(dtype))


@pytest.mark.parametrize("shape", SHAPES + [(0,), (0, 3), (2, 0, 4)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_])
def test_integers_and_bools(shape, dtype):
    if dtype == np.bool_:
        check(RNG.integers(0, 2, shape).astype(dtype))
    elif dtype == np.uint8:
        check(RNG.integers(0, 255, shape).astype(dtype))
    else:
        check(RNG.integers(-1000, 1000, shape).astype(dtype))


@pytest.mark.parametrize("arr", [
    np.array([np.nan, 1.0, np.inf, -np.inf], np.float32), np.array([np.nan, np.inf]), np.array([0.0, -0.0, 0.0]),
    np.array([1e-10, 1.0]), np.array([1.0, 2.0, 1000.0]), np.array([1.0, 2.0, 1001.0]), np.array([1e8, 1.0]),
    np.array([1.5e8]), np.array(3.0), np.array(3.5), np.array(-0.0), np.array(1e-5), np.array(np.nan),
    np.array([0.1, 0.25]), np.array([100000.0]), np.array([123456789.0]), np.array(True), np.array(7, np.int32),
    np.array([1e300, 1e-300]), np.float32([1.0, 2.5, np.nan]), np.zeros((0,), np.float32), np.zeros((0, 3)),
    np.zeros((2, 0, 1), np.int32), np.zeros((0,), np.int64), np.zeros((3, 3), np.float32),
])
def test_special_values_and_empty(arr):
    check(arr)


def test_zero_dim_and_suffixes():
    assert repr(toolkit.tensor(3.0)) == "tensor(3.)"
    assert repr(toolkit.tensor([], dtype=toolkit.float32).reshape(0, 3)) == "tensor([], size=(0, 3))"
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == expected(y)
    assert repr(x * 2) == expected(y * 2)
    assert repr(x.double().sum()) == expected(y.double().sum())
    big = np.random.default_rng(1).standard_normal((30, 30))
    tb = toolkit.tensor(big, requires_grad=True) * 3
    pb = torch.tensor(big, requires_grad=True) * 3
    assert repr(tb) == expected(pb)  # the suffixes wrap onto their own line


@pytest.mark.parametrize("opts", [
    dict(precision=2), dict(precision=8), dict(threshold=5), dict(edgeitems=1, threshold=5), dict(linewidth=30),
    dict(linewidth=200), dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"), dict(profile="full"),
    dict(edgeitems=0, threshold=5),
])
def test_print_options(opts):
    toolkit.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    rng = np.random.default_rng(2)
    for arr in (rng.standard_normal((7, 9)) * 100, rng.standard_normal((4, 3, 5)).astype(np.float32),
                rng.integers(-50, 50, (6, 20)), np.round(rng.standard_normal(12) * 1e4), np.zeros((0,))):
        check(arr)


def test_summarization_of_large_tensors():
    check(np.arange(2000, dtype=np.float32).reshape(40, 50))
    check(np.arange(1001, dtype=np.int64))
    check(RNG.standard_normal((4, 300, 3)))
    check(RNG.standard_normal((12, 12, 12)) * 1e-6)


def test_printoptions_context_manager_restores():
    before = get_printoptions()
    with printoptions(precision=1):
        assert repr(toolkit.tensor([1.25, 2.5])) == "tensor([1.2, 2.5])"
    assert get_printoptions() == before


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int32, np.bool_]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)))
def test_hypothesis_arrays(arr):
    check(arr)
