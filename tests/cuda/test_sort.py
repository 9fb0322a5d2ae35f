"""Sorting and selection on CUDA against PyTorch (stable order, NaN placement) and the CPU kernels (quickselect ties)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.backends.cuda import sort as cuda_sort

from .helpers import host, needs_cuda

pytestmark = needs_cuda

TIES_NAN = np.array([3.0, 1.0, np.nan, 3.0, 2.0, 1.0, np.nan, 1.0, -0.0, 0.0])


def _cuda(x):
    return toolkit.tensor(x, device="cuda")


def _same(got, expected):
    for g, e in zip(got, expected):
        g = host(g)
        e = e.numpy() if isinstance(e, torch.Tensor) else np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_ties_and_nan_as_pytorch(descending):
    got = toolkit.sort(_cuda(TIES_NAN), descending=descending, stable=True)
    _same(got, torch.sort(torch.tensor(TIES_NAN), descending=descending, stable=True))
    idx = toolkit.argsort(_cuda(TIES_NAN), descending=descending, stable=True)
    _same([idx], [torch.argsort(torch.tensor(TIES_NAN), descending=descending, stable=True)])


def test_sort_long_rows_take_the_merge_sort():
    x = np.random.default_rng(0).integers(0, 6, (3, cuda_sort.block_sort_max() + 9)).astype(np.float32)
    x[1, ::7] = np.nan
    for descending in (False, True):
        got = toolkit.sort(_cuda(x), dim=1, descending=descending, stable=True)
        _same(got, torch.sort(torch.tensor(x), dim=1, descending=descending, stable=True))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_sort_int_dtypes_non_contiguous(dtype):
    x = np.random.default_rng(1).integers(0, 5, (6, 4)).astype(dtype)
    xt = _cuda(x).t()  # (4, 6), transposed strides
    assert not xt.is_contiguous()
    got = toolkit.sort(xt, dim=0, descending=True, stable=True)
    _same(got, torch.sort(torch.tensor(x).t(), dim=0, descending=True, stable=True))


def test_sort_bool_and_3d_middle_dim():
    b = np.array([True, False, True, False])
    _same(toolkit.sort(_cuda(b), stable=True), torch.sort(torch.tensor(b), stable=True))
    x = np.random.default_rng(2).standard_normal((2, 5, 3))
    _same(toolkit.sort(_cuda(x), dim=1), torch.sort(torch.tensor(x), dim=1, stable=True))


def test_topk_largest_smallest_with_nan():
    x = np.stack([TIES_NAN, TIES_NAN[::-1]])
    for largest in (True, False):
        got = toolkit.topk(_cuda(x), 4, largest=largest)
        exp = torch.topk(torch.tensor(x), 4, largest=largest)
        np.testing.assert_array_equal(host(got.values), exp.values.numpy())
        np.testing.assert_array_equal(host(got.indices), toolkit.topk(toolkit.tensor(x), 4, largest=largest)[1].numpy())


def test_kthvalue_ties_match_cpu_quickselect():
    x = np.array([[3, 1, 3, 2, 1, 1, 3, 2], [5, 5, 5, 1, 0, 5, 2, 5]], dtype=np.int64)
    for k in range(1, 9):
        got = toolkit.kthvalue(_cuda(x), k, 1)
        _same(got, toolkit.kthvalue(toolkit.tensor(x), k, 1))
        np.testing.assert_array_equal(host(got.values), torch.kthvalue(torch.tensor(x), k, 1).values.numpy())
    got = toolkit.kthvalue(_cuda(TIES_NAN), 9, keepdim=True)
    _same(got, torch.kthvalue(torch.tensor(TIES_NAN), 9, keepdim=True))


def test_median_with_nan_and_without_dim():
    x = np.array([[2.0, np.nan, 1.0, np.nan], [4.0, 1.0, 3.0, 2.0]])
    _same(toolkit.median(_cuda(x), 1, keepdim=True), torch.median(torch.tensor(x), 1, keepdim=True))
    _same([toolkit.median(_cuda(x))], [torch.median(torch.tensor(x))])
    _same([toolkit.median(_cuda(x[1]))], [torch.median(torch.tensor(x[1]))])
    assert np.isnan(host(toolkit.median(_cuda(np.zeros((0, 2))))))


def test_mode_ties_and_int_dtype():
    x = np.array([[1, 2, 2, 1, 3], [5, 5, 5, 1, 1], [7, 6, 7, 6, 0]], dtype=np.int32)
    _same(toolkit.mode(_cuda(x)), torch.mode(torch.tensor(x)))
    _same(toolkit.mode(_cuda(x).t(), 0, keepdim=True), torch.mode(torch.tensor(x).t(), 0, keepdim=True))


def test_unique_flat_and_dim():
    x = np.array([3.0, 1.0, np.nan, 3.0, 2.0, 1.0, 1.0]).reshape(1, 7)
    got = toolkit.unique(_cuda(x), return_inverse=True, return_counts=True)
    _same(got, toolkit.unique(toolkit.tensor(x), return_inverse=True, return_counts=True))
    _same(got, torch.unique(torch.tensor(x), return_inverse=True, return_counts=True))
    m = np.array([[1, 2, 1, 0], [3, 4, 3, 2], [1, 2, 1, 0]])
    for dim in (0, 1, -1):
        got = toolkit.unique(_cuda(m).t().t(), dim=dim, return_inverse=True, return_counts=True)
        _same(got, torch.unique(torch.tensor(m), dim=dim, return_inverse=True, return_counts=True))
    b = np.array([True, False, True])
    _same(toolkit.unique(_cuda(b), return_counts=True), torch.unique(torch.tensor(b), return_counts=True))
    assert host(toolkit.unique(_cuda(np.zeros(0)))).shape == (0,)


@pytest.mark.parametrize("call,error", [
    (lambda x: toolkit.sort(x, dim=2), IndexError),
    (lambda x: toolkit.topk(x, 5), RuntimeError),
    (lambda x: toolkit.kthvalue(x, 0), RuntimeError),
    (lambda x: toolkit.kthvalue(x > 0, 1), NotImplementedError),
    (lambda x: toolkit.median(x[:, :0], 1), IndexError),
    (lambda x: toolkit.mode(x[:0], 0), IndexError),
    (lambda x: toolkit.unique(x[:, :0], dim=0), RuntimeError),
])
def test_errors_as_cpu(call, error):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(error) as cpu:
        call(toolkit.tensor(x))
    with pytest.raises(error) as dev:
        call(_cuda(x))
    assert str(dev.value) == str(cpu.value)
