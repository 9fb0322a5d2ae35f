"""sum, mean, prod, logsumexp, all, any, count_nonzero, cumsum, cumprod against PyTorch: dtypes, dims, errors, grads."""

# ruff: noqa: B023 - each lambda runs at once, inside the loop iteration that made it

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import TORCH_DTYPES, assert_close, to_torch

INT_DTYPES = [toolkit.bool, toolkit.uint8, toolkit.int8, toolkit.int16, toolkit.int32, toolkit.int64]
ALL_DTYPES = INT_DTYPES + [toolkit.float16, toolkit.float32, toolkit.float64]
DIMS = [None, 0, 1, -1, (0, 2), (-1, 0)]


def _data(rng, dtype, shape=(2, 3, 4)):
    if dtype is toolkit.bool:
        return toolkit.tensor(rng.integers(0, 2, shape).astype(bool))
    if dtype.is_floating_point:
        return toolkit.tensor(rng.uniform(-2, 2, shape)).to(dtype)
    lo = 0 if dtype is toolkit.uint8 else -3
    return toolkit.tensor(rng.integers(lo, 4, shape)).to(dtype)


def _count(shape, dim) -> int:
    """How many elements a reduction over ``dim`` (None: all) of a tensor of ``shape`` accumulates."""
    dims = range(len(shape)) if dim is None else (dim,) if isinstance(dim, int) else dim
    return math.prod(shape[d] for d in dims)


def _both(fn, *xs):
    """Run ``fn`` on toolkit tensors and on their PyTorch copies."""
    return fn(*xs), fn(*[to_torch(x) for x in xs])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_prod_dtypes_and_dims(rng, dtype, dim, keepdim):
    x = _data(rng, dtype)
    n = _count(x.shape, dim)
    assert_close(*_both(lambda t: t.sum(dim, keepdim=keepdim) if dim is not None else t.sum(), x), accum=n)
    if isinstance(dim, int):
        assert_close(*_both(lambda t: t.prod(dim, keepdim=keepdim), x), accum=n)
    else:
        assert_close(*_both(lambda t: t.prod(), x), accum=x.numel())


@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64, toolkit.int32, toolkit.bool], ids=str)
def test_sum_prod_with_dtype_argument(rng, dtype):
    x = _data(rng, toolkit.int32, (3, 4))
    assert_close(*_both(lambda t: t.sum(1, dtype=to_dtype(t, dtype)), x))
    assert_close(*_both(lambda t: t.prod(0, dtype=to_dtype(t, dtype)), x))
    if dtype is toolkit.bool:
        for t in (x, to_torch(x)):
            with pytest.raises(NotImplementedError, match="\"cumsum_out_cpu\" not implemented for 'Bool'"):
                t.cumsum(0, dtype=to_dtype(t, dtype))
    else:
        assert_close(*_both(lambda t: t.cumsum(0, dtype=to_dtype(t, dtype)), x))


def to_dtype(t, dtype):
    return TORCH_DTYPES[dtype] if isinstance(t, torch.Tensor) else dtype


@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean(rng, dim, keepdim):
    for dtype in (toolkit.float16, toolkit.float32, toolkit.float64):
        x = _data(rng, dtype)
        assert_close(*_both(lambda t: t.mean(dim, keepdim) if dim is not None else t.mean(), x),
                     accum=_count(x.shape, dim))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_mean_of_integers_needs_a_float_dtype(rng, dtype):
    x = _data(rng, dtype)
    name = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long"}
    with pytest.raises(RuntimeError, match=f"mean\\(\\): could not infer output dtype.*Got: {name[dtype.name]}"):
        x.mean()
    assert_close(*_both(lambda t: t.mean(1, dtype=to_dtype(t, toolkit.float64)), x))


def test_empty_reductions(rng):
    e = toolkit.zeros(0, 3)
    assert_close(*_both(lambda t: t.sum(0), e))
    assert_close(*_both(lambda t: t.prod(0), e))
    assert_close(*_both(lambda t: t.mean(), e))
    assert_close(*_both(lambda t: t.logsumexp(0), e))
    assert_close(*_both(lambda t: t.all(0), e))
    assert_close(*_both(lambda t: t.any(), e))


def test_zero_dim_reductions():
    x = toolkit.tensor(2.5)
    for fn in (lambda t: t.sum(0), lambda t: t.sum(-1, keepdim=True), lambda t: t.mean(0), lambda t: t.prod(0),
               lambda t: t.logsumexp(0), lambda t: t.cumsum(0), lambda t: t.cumprod(-1), lambda t: t.all(0)):
        assert_close(*_both(fn, x))


@pytest.mark.parametrize("fn", [
    lambda t: t.sum(2), lambda t: t.mean((0, 2)), lambda t: t.prod(2), lambda t: t.logsumexp(-3),
    lambda t: t.all(2), lambda t: t.any((2,)), lambda t: t.cumsum(2), lambda t: t.cumprod(-3),
    lambda t: t.count_nonzero(2),
])
def test_dim_out_of_range(fn):
    x = toolkit.ones(2, 3)
    expected = r"Dimension out of range \(expected to be in range of \[-2, 1\], but got -?[23]\)"
    with pytest.raises(IndexError, match=expected):
        fn(x)
    with pytest.raises(IndexError, match=expected):
        fn(to_torch(x))


def test_repeated_dims_are_an_error():
    with pytest.raises(RuntimeError, match="appears multiple times"):
        toolkit.ones(2, 3).sum((0, 0))


def test_prod_gradient_with_zeros_matches_torch():
    for data in ([[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]], [[0.0, 0.0, 3.0], [0.0, 2.0, 4.0]]):
        for dim in (None, 0, 1):
            x = toolkit.tensor(data, dtype=toolkit.float64, requires_grad=True)
            xt = to_torch(x)
            (x.prod() if dim is None else x.prod(dim)).sum().backward()
            (xt.prod() if dim is None else xt.prod(dim)).sum().backward()
            assert_close(x.grad, xt.grad)


def test_cumprod_gradient_with_zeros_matches_torch():
    data = [[2.0, 0.0, 3.0, 0.0, 5.0], [1.5, 2.0, 0.0, 4.0, 1.0], [1.0, 2.0, 3.0, 4.0, 0.5]]
    for dim in (0, 1):
        x = toolkit.tensor(data, dtype=toolkit.float64, requires_grad=True)
        xt = to_torch(x)
        w = np.arange(15.0).reshape(3, 5) / 7
        (x.cumprod(dim) * toolkit.tensor(w)).sum().backward()
        (xt.cumprod(dim) * torch.from_numpy(w)).sum().backward()
        assert_close(x.grad, xt.grad)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_cumsum_cumprod_dtypes(rng, dtype):
    x = _data(rng, dtype, (3, 4))
    for dim in (0, 1, -1):  # the last element of a scan accumulates the whole dim
        assert_close(*_both(lambda t: t.cumsum(dim), x), accum=x.shape[dim])
        assert_close(*_both(lambda t: t.cumprod(dim), x), accum=x.shape[dim])


def test_cumsum_gradient_is_reverse_cumsum():
    x = toolkit.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    w = toolkit.tensor([[1.0, 10.0, 100.0], [2.0, 20.0, 200.0]])
    (x.cumsum(1) * w).sum().backward()
    assert x.grad.tolist() == [[111.0, 110.0, 100.0], [222.0, 220.0, 200.0]]


def test_logsumexp_is_stable_and_promotes_integers():
    x = toolkit.tensor([[1000.0, 1000.0], [-1000.0, -999.0]])
    assert_close(*_both(lambda t: t.logsumexp(1), x))
    inf = toolkit.tensor([float("inf"), 1.0, -float("inf")])
    assert_close(*_both(lambda t: t.logsumexp(0), inf))
    assert_close(*_both(lambda t: t.logsumexp(0), toolkit.tensor([-float("inf"), -float("inf")])))
    i = toolkit.tensor([[1, 5, 2], [3, 3, 0]], dtype=toolkit.int32)
    assert_close(*_both(lambda t: t.logsumexp(1), i))
    assert_close(*_both(lambda t: torch.logsumexp(t, (0, 1), keepdim=True) if isinstance(t, torch.Tensor)
                        else toolkit.logsumexp(t, (0, 1), keepdim=True), x))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any(rng, dtype, name):
    x = _data(rng, dtype, (2, 3, 4))
    fn = lambda t, *a, **k: getattr(t, name)(*a, **k)  # noqa: E731
    assert_close(*_both(lambda t: fn(t), x))
    assert_close(*_both(lambda t: fn(t, 1), x))
    assert_close(*_both(lambda t: fn(t, -1, keepdim=True), x))
    assert_close(*_both(lambda t: fn(t, dim=(0, 2)), x))
    assert_close(*_both(lambda t: fn(t, dim=()), x))  # an empty dim list reduces nothing


def test_all_any_uint8_results_are_uint8():
    x = toolkit.tensor([[0, 2], [1, 3]], dtype=toolkit.uint8)
    assert x.all().dtype is toolkit.uint8
    assert x.any(1).tolist() == [1, 1]
    assert toolkit.tensor([1, 2]).all().dtype is toolkit.bool


def test_count_nonzero():
    x = toolkit.tensor([[1, 0, 2], [0, 0, 3]])
    assert_close(*_both(lambda t: t.count_nonzero(), x))
    assert_close(*_both(lambda t: t.count_nonzero(1), x))
    assert_close(*_both(lambda t: t.count_nonzero((0, 1)), x))
    assert_close(*_both(lambda t: t.count_nonzero(dim=-2), x))


def test_sum_to_size_and_its_error():
    x = toolkit.ones(2, 3, 4)
    assert x.sum_to_size(3, 1).tolist() == [[8.0]] * 3
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        x.sum_to_size(2, 4)


def test_non_contiguous_input(rng):
    x = toolkit.tensor(rng.uniform(-1, 1, (4, 3))).t()
    for fn in (lambda t: t.sum(1), lambda t: t.prod(0), lambda t: t.cumsum(1), lambda t: t.logsumexp(0),
               lambda t: t.mean(-1, keepdim=True)):
        assert_close(*_both(fn, x))
