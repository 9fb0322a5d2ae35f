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


# ----------------------------------------------------------------------------- complex dtypes
TORCH_ALL = {**TORCH_DTYPES, toolkit.complex64: torch.complex64, toolkit.complex128: torch.complex128}
WITH_COMPLEX = ALL + list(dtypes.COMPLEX)


def test_complex_dtype_names_and_properties():
    assert toolkit.cfloat is toolkit.complex64 and toolkit.cdouble is toolkit.complex128
    assert repr(toolkit.complex64) == "toolkit.complex64"
    assert toolkit.complex64.is_complex and not toolkit.complex64.is_floating_point
    assert not toolkit.float32.is_complex
    assert toolkit.complex64.itemsize == 8 and toolkit.complex128.itemsize == 16
    assert toolkit.complex64.title == "ComplexFloat" and toolkit.complex128.title == "ComplexDouble"
    assert toolkit.complex64.cpp_name == "c10::complex<float>"
    assert toolkit.complex128.cpp_name == "c10::complex<double>"
    for d in WITH_COMPLEX:
        assert TORCH_ALL[d.to_real()] == TORCH_ALL[d].to_real()
    for d in (toolkit.float32, toolkit.float64, toolkit.complex64, toolkit.complex128):
        assert TORCH_ALL[d.to_complex()] == TORCH_ALL[d].to_complex()
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Int"):
        toolkit.int32.to_complex()
    with pytest.raises(RuntimeError):
        torch.int32.to_complex()


@pytest.mark.parametrize("a", WITH_COMPLEX, ids=str)
@pytest.mark.parametrize("b", list(dtypes.COMPLEX), ids=str)
def test_promote_types_with_complex_matches_torch(a, b):
    assert TORCH_ALL[toolkit.promote_types(a, b)] == torch.promote_types(TORCH_ALL[a], TORCH_ALL[b])
    assert TORCH_ALL[toolkit.promote_types(b, a)] == torch.promote_types(TORCH_ALL[b], TORCH_ALL[a])


@given(st.sampled_from(WITH_COMPLEX), st.sampled_from(WITH_COMPLEX), st.booleans(), st.booleans())
def test_result_type_of_complex_tensors_matches_torch(a, b, a_zero_dim, b_zero_dim):
    if (a is toolkit.float16 and b.is_complex and b_zero_dim and not a_zero_dim) or (
            b is toolkit.float16 and a.is_complex and a_zero_dim and not b_zero_dim):
        return  # torch gives complex32, which toolkit does not have
    ta = torch.ones(() if a_zero_dim else (2,), dtype=TORCH_ALL[a])
    tb = torch.ones(() if b_zero_dim else (2,), dtype=TORCH_ALL[b])
    dims = [d for d, z in ((a, a_zero_dim), (b, b_zero_dim)) if not z]
    zeros = [d for d, z in ((a, a_zero_dim), (b, b_zero_dim)) if z]
    assert TORCH_ALL[dtypes.result_type_from(dims, zeros, [])] == torch.result_type(ta, tb)


@pytest.mark.parametrize("a", [d for d in WITH_COMPLEX if d is not toolkit.float16], ids=str)
@pytest.mark.parametrize("zero_dim", [False, True])
@pytest.mark.parametrize("scalar", [1j, 2.5 - 1j, complex(0, 0)])
def test_result_type_with_python_complex_matches_torch(a, zero_dim, scalar):
    ta = torch.ones(() if zero_dim else (2,), dtype=TORCH_ALL[a])
    t = toolkit.ones(() if zero_dim else (2,), dtype=a)
    assert TORCH_ALL[toolkit.result_type(t, scalar)] == torch.result_type(ta, scalar)
    assert TORCH_ALL[(t + scalar).dtype] == (ta + scalar).dtype


def test_complex_scalar_follows_the_default_dtype():
    assert (toolkit.ones(2, dtype=toolkit.int32) + 1j).dtype is toolkit.complex64
    assert (toolkit.ones(2, dtype=toolkit.float64) + 1j).dtype is toolkit.complex128
    assert toolkit.tensor([1 + 2j]).dtype is toolkit.complex64
    toolkit.set_default_dtype(toolkit.float64)
    try:
        assert (toolkit.ones(2, dtype=toolkit.int32) + 1j).dtype is toolkit.complex128
        assert toolkit.tensor([1, 2j]).dtype is toolkit.complex128
    finally:
        toolkit.set_default_dtype(toolkit.float32)


def test_can_cast_with_complex_matches_torch():
    for a in WITH_COMPLEX:
        for b in WITH_COMPLEX:
            assert toolkit.can_cast(a, b) == torch.can_cast(TORCH_ALL[a], TORCH_ALL[b]), (a, b)


def test_complex_data_in_and_out():
    import numpy as np

    data = [[1 + 2j, 3], [0.5, -1j]]
    t = toolkit.tensor(data)
    ref = torch.tensor(data)
    assert TORCH_ALL[t.dtype] == ref.dtype
    np.testing.assert_array_equal(t.numpy(), ref.numpy())
    assert toolkit.tensor(data, dtype=toolkit.complex128).dtype is toolkit.complex128
    assert toolkit.tensor([1.0, 2.0], dtype=toolkit.cfloat).dtype is toolkit.complex64
    a = np.array([1 + 1j, 2], dtype=np.complex64)
    f = toolkit.from_numpy(a)
    assert f.dtype is toolkit.complex64 and np.shares_memory(f.numpy(), a)
    item = toolkit.tensor(2 - 3j).item()
    assert type(item) is complex and item == torch.tensor(2 - 3j).item()
    assert complex(toolkit.tensor([1j])) == 1j
    assert t.is_complex() and not toolkit.ones(2).is_complex()
    assert toolkit.tensor([1 + 1j]).tolist() == [1 + 1j]


def test_finfo_of_complex_matches_torch():
    for d in dtypes.COMPLEX:
        ours, theirs = toolkit.finfo(d), torch.finfo(TORCH_ALL[d])
        for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(ours, name) == getattr(theirs, name), name
    with pytest.raises(TypeError, match="iinfo"):
        toolkit.iinfo(toolkit.complex64)


def test_half_with_complex_scalar_names_the_missing_dtype():
    # PyTorch's answer is complex32 (ComplexHalf), a dtype toolkit does not have: a clear error, not wrong numbers
    assert torch.result_type(torch.ones(2, dtype=torch.float16), 1j) == torch.complex32
    with pytest.raises(TypeError, match="complex32"):
        toolkit.ones(2, dtype=toolkit.float16) + 1j
