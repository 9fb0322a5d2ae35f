"""sort, argsort, topk, kthvalue, median, mode, unique against PyTorch: stability, NaN, dtypes, errors, grads."""

# ruff: noqa: B023 - each lambda runs at once, inside the loop iteration that made it

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close, to_torch

DTYPES = [toolkit.uint8, toolkit.int8, toolkit.int16, toolkit.int32, toolkit.int64,
          toolkit.float16, toolkit.float32, toolkit.float64]


def _both(fn, *xs):
    return fn(*xs), fn(*[to_torch(x) for x in xs])


def _pair(out, expected, fields=("values", "indices")):
    assert type(out).__name__ == type(expected).__name__
    for f in fields:
        assert_close(getattr(out, f), getattr(expected, f))


def _ties(rng, dtype, shape=(3, 4, 6)):
    return toolkit.tensor(rng.integers(0, 4, shape)).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES + [toolkit.bool], ids=str)
def test_sort_is_stable_like_torch(rng, dtype):
    x = _ties(rng, dtype) if dtype is not toolkit.bool else toolkit.tensor(rng.integers(0, 2, (3, 6)) > 0)
    for dim in (0, 1, -1):
        for descending in (False, True):
            kwargs = {"dim": dim, "descending": descending, "stable": True}
            _pair(*_both(lambda t: t.sort(**kwargs), x))
            assert_close(*_both(lambda t: t.argsort(**kwargs), x))
            _pair(*_both(lambda t: t.sort(dim, descending), x))


def test_sort_nan_is_largest():
    x = toolkit.tensor([float("nan"), 1.0, float("nan"), 0.0, -float("inf")])
    for descending in (False, True):
        _pair(*_both(lambda t: t.sort(descending=descending, stable=True), x))


def test_sort_edge_shapes():
    for x in (toolkit.tensor(2.0), toolkit.zeros(0, 3), toolkit.zeros(2, 0)):
        _pair(*_both(lambda t: t.sort(0), x))
        assert_close(*_both(lambda t: t.argsort(-1), x))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2"):
        toolkit.ones(2, 3).sort(2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_topk(rng, dtype):
    x = toolkit.tensor(rng.permutation(60).reshape(3, 4, 5)).to(dtype)  # distinct values: one right order
    if dtype in (toolkit.uint8, toolkit.int8, toolkit.float16):
        x = toolkit.tensor(rng.permutation(60).reshape(3, 4, 5) % 100).to(dtype)
    for k, dim, largest in ((2, -1, True), (3, 0, False), (0, 1, True), (4, 1, False), (5, 2, True)):
        _pair(*_both(lambda t: t.topk(k, dim, largest), x))
    _pair(*_both(lambda t: t.topk(1), toolkit.tensor(2.0)))
    _pair(*_both(lambda t: t.topk(0), toolkit.tensor(2.0)))


def test_topk_errors():
    for t in (toolkit.ones(2, 3), to_torch(toolkit.ones(2, 3))):
        with pytest.raises(RuntimeError, match="selected index k out of range"):
            t.topk(4)
    with pytest.raises(RuntimeError, match="topk does not support bool dtypes on CPU"):
        toolkit.tensor([True, False]).topk(1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_kthvalue_and_median_with_ties(rng, dtype):
    x = _ties(rng, dtype)
    for k in (1, 3, 6):
        _pair(*_both(lambda t: t.kthvalue(k), x))
        _pair(*_both(lambda t: t.kthvalue(min(k, 3), 0, keepdim=True), x))
    assert_close(*_both(lambda t: t.median(), x))
    for dim in (0, 1, -1):
        _pair(*_both(lambda t: t.median(dim), x))
        _pair(*_both(lambda t: t.median(dim, keepdim=True), x))


def test_median_nan_and_edges():
    x = toolkit.tensor([[1.0, float("nan"), 2.0, float("nan")], [3.0, 1.0, 2.0, 0.0]])
    assert_close(*_both(lambda t: t.median(), x))
    _pair(*_both(lambda t: t.median(1), x))
    assert_close(*_both(lambda t: t.median(), toolkit.zeros(0)))
    _pair(*_both(lambda t: t.median(1), toolkit.zeros(0, 2)))
    _pair(*_both(lambda t: t.median(0), toolkit.tensor(3.0)))
    for t in (toolkit.zeros(0, 2), to_torch(toolkit.zeros(0, 2))):
        with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0 to have non-zero size."):
            t.median(0)
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        toolkit.tensor([True]).median()


def test_kthvalue_ties_and_nan_pick_torch_indices(rng):
    for _ in range(30):
        n = int(rng.integers(1, 15))
        data = rng.integers(0, 4, (2, n)).astype(np.float64)
        data[rng.random((2, n)) < 0.15] = np.nan
        x = toolkit.tensor(data)
        k = int(rng.integers(1, n + 1))
        _pair(*_both(lambda t: t.kthvalue(k, 1), x))


def test_kthvalue_errors():
    for t in (toolkit.ones(2, 3), to_torch(toolkit.ones(2, 3))):
        with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 1"):
            t.kthvalue(4)
        with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 0"):
            t.kthvalue(0, 0)


@pytest.mark.parametrize("dtype", DTYPES + [toolkit.bool], ids=str)
def test_mode(rng, dtype):
    x = toolkit.tensor(rng.integers(0, 3, (3, 4, 7))).to(dtype)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            _pair(*_both(lambda t: t.mode(dim, keepdim), x))
    _pair(*_both(lambda t: t.mode(), toolkit.tensor([3.0, 1.0, 3.0, 2.0, 1.0, 1.0, 3.0])))
    _pair(*_both(lambda t: t.mode(), toolkit.tensor([1.0, float("nan"), 2.0, float("nan")])))
    _pair(*_both(lambda t: t.mode(), toolkit.tensor(4.0)))
    with pytest.raises(IndexError, match=r"mode\(\): Expected reduction dim 0 to have non-zero size."):
        toolkit.zeros(0).mode()


UNIQUE_CALLS = [
    {}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True},
    {"sorted": False}, {"dim": 0}, {"dim": 1, "return_inverse": True, "return_counts": True},
    {"dim": -1, "return_counts": True},
]


@pytest.mark.parametrize("kwargs", UNIQUE_CALLS, ids=str)
def test_unique(kwargs):
    x = toolkit.tensor([[1, 2, 1, 3], [1, 2, 1, 3], [0, 5, 0, 2]])
    out, expected = _both(lambda t: t.unique(**kwargs), x)
    assert isinstance(out, tuple) == isinstance(expected, tuple)
    assert_close(out, expected)
    out2, expected2 = _both(lambda t: (torch if isinstance(t, torch.Tensor) else toolkit).unique(t, **kwargs), x)
    assert_close(out2, expected2)


def test_unique_edges():
    for x, kwargs in ((toolkit.tensor(2.0), {"return_inverse": True}),
                      (toolkit.zeros(0, 2), {"return_inverse": True, "return_counts": True}),
                      (toolkit.zeros(0, 2), {"dim": 0}),
                      (toolkit.tensor([float("nan"), 1.0, float("nan")]), {}),
                      (toolkit.tensor([True, False, True]), {"return_counts": True})):
        assert_close(*_both(lambda t: t.unique(**kwargs), x))
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        toolkit.tensor(2).unique(dim=0)
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they aren't selected"):
        toolkit.zeros(0, 2).unique(dim=1)


def _grad(fn, x):
    a = x.clone().requires_grad_()
    b = to_torch(x).requires_grad_()
    out_a, out_b = fn(a), fn(b)
    w = np.arange(1, np.prod(out_b.shape) + 1, dtype=np.float64).reshape(out_b.shape)
    (out_a * toolkit.tensor(w)).sum().backward()
    (out_b * torch.from_numpy(w)).sum().backward()
    assert_close(a.grad, b.grad)


def test_gradients_match_torch(rng):
    x = toolkit.tensor(rng.permutation(24).reshape(2, 3, 4) / 7.0)
    for fn in (lambda t: t.sort(1).values, lambda t: t.sort(descending=True).values, lambda t: t.topk(2).values,
               lambda t: t.topk(2, 0, largest=False).values, lambda t: t.kthvalue(2, 1).values,
               lambda t: t.median(), lambda t: t.median(-1).values, lambda t: t.mode(0, keepdim=True).values):
        _grad(fn, x)
    ties = toolkit.tensor([[1.0, 2.0, 2.0, 1.0, 3.0], [0.5, 0.5, 0.5, 2.0, 2.0]], dtype=toolkit.float64)
    for fn in (lambda t: t.median(), lambda t: t.median(1).values, lambda t: t.mode(1).values,
               lambda t: t.sort(dim=1, stable=True).values):
        _grad(fn, ties)


def test_named_tuples():
    x = toolkit.tensor([[3.0, 1.0, 2.0]])
    for call, name in ((lambda t: t.sort(), "sort"), (lambda t: t.topk(1), "topk"),
                       (lambda t: t.kthvalue(1), "kthvalue"), (lambda t: t.median(1), "median"),
                       (lambda t: t.mode(), "mode")):
        r = call(x)
        assert type(r) is getattr(toolkit.return_types, name)
        assert repr(r).startswith(f"toolkit.return_types.{name}(\nvalues=")
        assert r.indices.dtype is toolkit.int64
