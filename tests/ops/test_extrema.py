"""max/min (all overloads), amax/amin, aminmax, argmax/argmin against PyTorch: ties, NaN, dtypes, errors, grads."""

# ruff: noqa: B023 - each lambda runs at once, inside the loop iteration that made it

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close, to_torch

DTYPES = [toolkit.bool, toolkit.uint8, toolkit.int8, toolkit.int16, toolkit.int32, toolkit.int64,
          toolkit.float16, toolkit.float32, toolkit.float64]


def _both(fn, *xs):
    return fn(*xs), fn(*[to_torch(x) for x in xs])


def _data(rng, dtype, shape=(3, 4, 5)):
    return toolkit.tensor(rng.integers(0 if dtype in (toolkit.bool, toolkit.uint8) else -4, 5, shape)).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_overloads(rng, dtype, name):
    x = _data(rng, dtype)  # small integers: plenty of ties, where the first index wins
    fn = lambda t, *a, **k: getattr(t, name)(*a, **k)  # noqa: E731
    assert_close(*_both(lambda t: fn(t), x))
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            out, expected = _both(lambda t: fn(t, dim, keepdim=keepdim), x)
            assert_close(out.values, expected.values)
            assert_close(out.indices, expected.indices)
    other = _data(rng, dtype, (4, 5))
    assert_close(*_both(lambda t, o: fn(t, o), x, other))
    assert_close(*_both(lambda t, o: getattr(torch if isinstance(t, torch.Tensor) else toolkit, name)(t, o),
                        x, other))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_amax_amin_aminmax(rng, dtype):
    x = _data(rng, dtype)
    for dim in ((), 0, (0, 2), -1):
        for keepdim in (False, True):
            assert_close(*_both(lambda t: t.amax(dim, keepdim), x))
            assert_close(*_both(lambda t: t.amin(dim=dim, keepdim=keepdim), x))
    for kwargs in ({}, {"dim": 1}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
        out, expected = _both(lambda t: (torch if isinstance(t, torch.Tensor) else toolkit).aminmax(t, **kwargs), x)
        assert_close(out.min, expected.min)
        assert_close(out.max, expected.max)


@pytest.mark.parametrize("dtype", DTYPES[1:], ids=str)
def test_argmax_argmin(rng, dtype):
    x = _data(rng, dtype)
    for name in ("argmax", "argmin"):
        for args, kwargs in (((), {}), ((1,), {}), ((-1,), {"keepdim": True}), ((), {"keepdim": True}),
                             ((None,), {})):
            assert_close(*_both(lambda t: getattr(t, name)(*args, **kwargs), x))


def test_argmax_refuses_bool():
    for name in ("argmax", "argmin"):
        with pytest.raises(RuntimeError, match=f"{name}\\(\\): does not support bool input"):
            getattr(toolkit.tensor([True, False]), name)()


def test_nan_is_the_extreme():
    x = toolkit.tensor([[1.0, float("nan"), 2.0], [0.0, 5.0, -1.0]])
    for fn in (lambda t: t.max(), lambda t: t.min(), lambda t: t.amax(1), lambda t: t.argmax(1),
               lambda t: t.argmin(1), lambda t: t.max(1).values, lambda t: t.max(1).indices,
               lambda t: t.min(1).indices):
        assert_close(*_both(fn, x))
    assert_close(*_both(lambda t, o: t.max(o), x, toolkit.zeros(3)))


def test_zero_dim_inputs():
    x = toolkit.tensor(1.5)
    for fn in (lambda t: t.max(), lambda t: t.max(0).values, lambda t: t.max(-1, keepdim=True).indices,
               lambda t: t.amax(), lambda t: t.amin(0), lambda t: t.argmax(), lambda t: t.argmax(0)):
        assert_close(*_both(fn, x))


def test_empty_inputs():
    e = toolkit.zeros(0, 3)
    for t in (e, to_torch(e)):
        with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for "
                                               r"input.numel\(\) == 0. Specify the reduction dim"):
            t.max()
        with pytest.raises(IndexError, match=r"min\(\): Expected reduction dim 0 to have non-zero size."):
            t.min(0)
        with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero size."):
            t.amax(0)
        with pytest.raises(RuntimeError, match=r"amin\(\): Expected reduction dim to be specified"):
            t.amin()
        with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
            t.argmax()
    out, expected = _both(lambda t: t.max(1), e)
    assert_close(out.values, expected.values)
    assert_close(out.indices, expected.indices)
    assert_close(*_both(lambda t: t.amax(1), e))
    assert_close(*_both(lambda t: t.argmin(1), e))


def test_dim_out_of_range():
    x = toolkit.ones(2, 3)
    for fn in (lambda t: t.max(2), lambda t: t.min(-3), lambda t: t.amax(2), lambda t: t.argmax(2)):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\]"):
            fn(x)


def test_overload_resolution():
    x = toolkit.tensor([[1, 5], [3, 2]])
    assert isinstance(x.max(1), toolkit.return_types.max)  # an int is a dim
    assert x.max(toolkit.tensor(4)).tolist() == [[4, 5], [4, 4]]  # a tensor is the other operand
    assert x.max(dim=0, keepdim=True).values.shape == (1, 2)
    with pytest.raises(TypeError, match="max"):
        x.max(1.5)


def test_named_tuple_behaves_like_torch():
    x = toolkit.tensor([[1.0, 5.0], [3.0, 2.0]])
    r = x.max(1)
    values, indices = r
    assert r[0] is values and r.values is values and r.indices is indices
    assert isinstance(r, tuple) and len(r) == 2
    assert type(r).__name__ == "max" and type(r).__module__ == "toolkit.return_types"
    assert repr(r) == ("toolkit.return_types.max(\nvalues=tensor([5., 3.]),\nindices=tensor([1, 0]))")
    assert repr(r).replace("toolkit", "torch") == repr(to_torch(x).max(1))
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r) and back.values.tolist() == [5.0, 3.0]


def _grad(fn, x):
    a = x.clone().requires_grad_()
    b = to_torch(x).requires_grad_()
    out_a, out_b = fn(a), fn(b)
    w = np.arange(1, np.prod(out_b.shape) + 1, dtype=np.float64).reshape(out_b.shape)
    (out_a * toolkit.tensor(w)).sum().backward()
    (out_b * torch.from_numpy(w)).sum().backward()
    assert_close(a.grad, b.grad)


def test_gradients_with_ties_match_torch():
    x = toolkit.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0], [0.0, 0.0, 0.0]], dtype=toolkit.float64)
    for fn in (lambda t: t.max(), lambda t: t.min(), lambda t: t.amax(1), lambda t: t.amin(0),
               lambda t: t.amax((0, 1)), lambda t: t.max(1).values, lambda t: t.min(0, keepdim=True).values,
               lambda t: torch.aminmax(t, dim=1).max if isinstance(t, torch.Tensor)
               else toolkit.aminmax(t, dim=1).max,
               lambda t: t.max(t.t()), lambda t: t.min(toolkit.tensor(2.0, dtype=toolkit.float64)
                                                        if not isinstance(t, torch.Tensor)
                                                        else torch.tensor(2.0, dtype=torch.float64))):
        _grad(fn, x)
