"""``empty_strided``, ``empty_permuted`` and ``Tensor.new_empty_strided`` against PyTorch: sizes, strides, the
storage they own, the keyword options and the errors."""

from __future__ import annotations

import pytest
import torch

import toolkit

from ..conftest import TORCH_DTYPES
from .test_factory_indices import same_error


def _same_layout(got, expected) -> None:
    assert tuple(got.shape) == tuple(expected.shape) and got.stride() == expected.stride()
    assert TORCH_DTYPES[got.dtype] == expected.dtype
    assert got.untyped_storage().nbytes() == expected.untyped_storage().nbytes()
    assert got._base is None and got.is_leaf


@pytest.mark.parametrize("size,stride", [((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 3), (0, 0)), ((4,), (3,)),
                                         ((2, 1, 3), (3, 7, 1)), ((0, 3), (3, 1)), ((), ())])
def test_empty_strided_matches_torch(size, stride):
    _same_layout(toolkit.empty_strided(size, stride), torch.empty_strided(size, stride))
    got = toolkit.empty_strided(size, stride, dtype=toolkit.int16, requires_grad=False, device="cpu")
    _same_layout(got, torch.empty_strided(size, stride, dtype=torch.int16))


def test_empty_strided_is_a_writable_leaf():
    t = toolkit.empty_strided((2, 3), (1, 2), dtype=toolkit.float64, requires_grad=True)
    assert t.requires_grad and t.grad_fn is None
    u = toolkit.empty_strided((2, 3), (1, 2))
    u.fill_(2.0)
    assert u.tolist() == [[2.0] * 3] * 2


@pytest.mark.parametrize("size,stride", [((2, 3), (1,)), ((-2, 3), (1, 2)), ((2, 3), (-1, 2))])
def test_empty_strided_errors_match_torch(size, stride):
    same_error(lambda: torch.empty_strided(size, stride), lambda: toolkit.empty_strided(size, stride))


@pytest.mark.parametrize("size,order", [((2, 3), (1, 0)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4), (2, 0, 1)),
                                        ((3,), (0,)), ((2, 0, 4), (1, 2, 0))])
def test_empty_permuted_matches_torch(size, order):
    _same_layout(toolkit.empty_permuted(size, order), torch.empty_permuted(size, order))
    got = toolkit.empty_permuted(size, order, dtype=toolkit.float64, requires_grad=True)
    assert got.requires_grad and got.dtype is toolkit.float64


@pytest.mark.parametrize("size,order", [((2, 3), (1,)), ((2, 3), (1, 1)), ((2, 3), (1, 2)), ((2, 3), (1, -1)),
                                        ((-2, 3), (1, 0))])
def test_empty_permuted_errors_match_torch(size, order):
    same_error(lambda: torch.empty_permuted(size, order), lambda: toolkit.empty_permuted(size, order))


def test_new_empty_strided_takes_self_dtype_and_device_unless_given():
    x, r = toolkit.ones(2, dtype=toolkit.float64), torch.ones(2, dtype=torch.float64)
    _same_layout(x.new_empty_strided((2, 3), (1, 2)), r.new_empty_strided((2, 3), (1, 2)))
    _same_layout(x.new_empty_strided((3,), (2,), dtype=toolkit.int32),
                 r.new_empty_strided((3,), (2,), dtype=torch.int32))
    assert x.new_empty_strided((2,), (1,), requires_grad=True).requires_grad
    assert not hasattr(toolkit, "new_empty_strided") and not hasattr(torch, "new_empty_strided")
    same_error(lambda: r.new_empty_strided((2, 3), (1,)), lambda: x.new_empty_strided((2, 3), (1,)))
