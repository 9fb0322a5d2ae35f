"""dtype objects and PyTorch's type promotion, checked against torch itself."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import toolkit
from toolkit._core import dtypes

from ..conftest import TORCH_DTYPES

ALL = list(dtypes.ALL)


@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_promote_types_matches_torch(a, b):
    assert TORCH_DTYPES[toolkit.promote_types(a, b)] == torch.promote_types(TORCH_DTYPES[a], TORCH_DTYPES[b])


@given(st.sampled_from(ALL), st.sampled_from(ALL), st.booleans(), st.booleans())
def test_result_type_of_two_tensors_matches_torch(a, b, a_zero_dim, b_zero_dim):
    ta = torch.ones(() if a_zero_dim else (2,), dtype=TORCH_DTYPES[a])
    tb = torch.ones(() if b_zero_dim else (2,), dtype=TORCH_DTYPES[b])
    dims = [d for d, z in ((a, a_zero_dim), (b, b_zero_dim)) if not z]
    zeros = [d for d, z in ((a, a_zero_dim), (b, b_zero_dim)) if z]
    assert TORCH_DTYPES[dtypes.result_type_from(dims, zeros, [])] == torch.result_type(ta, tb)


@given(st.sampled_from(ALL), st.booleans(), st.sampled_from([True, 3, 2.5, -1]))
def test_result_type_with_python_scalar_matches_torch(a, zero_dim, scalar):
    ta = torch.ones(() if zero_dim else (2,), dtype=TORCH_DTYPES[a])
    ours = dtypes.result_type_from([] if zero_dim else [a], [a] if zero_dim else [], [scalar])
    assert TORCH_DTYPES[ours] == torch.result_type(ta, scalar)
    t = toolkit.ones(() if zero_dim else (2,), dtype=a)
    assert toolkit.result_type(t, scalar) is ours


def test_three_tiers():
    i32 = toolkit.ones(2, dtype=toolkit.int32)
    f64_0d = toolkit.tensor(1.0, dtype=toolkit.float64)
    assert (i32 + f64_0d).dtype is toolkit.float64  # a 0-dim float outranks a dimensioned int
    assert (toolkit.ones(2) + f64_0d).dtype is toolkit.float32  # same category: dimensioned wins
    assert (i32 * 2.5).dtype is toolkit.float32  # Python float: the default dtype
    assert (toolkit.ones(2, dtype=toolkit.bool) + 1).dtype is toolkit.int64


def test_default_dtype_controls_float_scalars():
    assert toolkit.get_default_dtype() is toolkit.float32
    toolkit.set_default_dtype(toolkit.float64)
    try:
        assert toolkit.tensor([1.5]).dtype is toolkit.float64
        assert (toolkit.tensor([1, 2]) * 0.5).dtype is toolkit.float64
    finally:
        toolkit.set_default_dtype(toolkit.float32)
    with pytest.raises(TypeError, match="floating-point"):
        toolkit.set_default_dtype(toolkit.int64)


def test_dtype_properties_and_aliases():
    assert toolkit.float is toolkit.float32 and toolkit.double is toolkit.float64
    assert toolkit.long is toolkit.int64 and toolkit.half is toolkit.float16
    assert repr(toolkit.float32) == "toolkit.float32"
    assert toolkit.float64.is_floating_point and not toolkit.int32.is_floating_point
    assert toolkit.float16.itemsize == 2
    assert not toolkit.uint8.is_signed and toolkit.int8.is_signed


def test_can_cast_matches_torch():
    for a in ALL:
        for b in ALL:
            assert toolkit.can_cast(a, b) == torch.can_cast(TORCH_DTYPES[a], TORCH_DTYPES[b]), (a, b)
