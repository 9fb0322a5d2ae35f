"""var, std, var_mean, std_mean and norm against PyTorch: overloads, corrections, dtypes, errors, gradients."""

from __future__ import annotations

import math

import pytest
import torch

import toolkit

from ..conftest import TORCH_DTYPES, assert_close, to_torch


def _both(fn, *xs):
    return fn(*xs), fn(*[to_torch(x) for x in xs])


@pytest.fixture
def x(rng):
    return toolkit.tensor(rng.uniform(-2, 2, (3, 4, 5)))


CALLS = [
    ((), {}),
    ((False,), {}),
    ((1,), {}),
    ((1, False), {}),
    ((1, True, True), {}),
    (((0, 2),), {"unbiased": False, "keepdim": True}),
    ((), {"dim": -1, "correction": 0}),
    ((), {"correction": 2}),
    ((), {"dim": (0, 1), "correction": 0.5, "keepdim": True}),
    ((None,), {}),
    ((), {"dim": 1, "keepdim": True}),
]


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("args,kwargs", CALLS, ids=str)
def test_overloads_match_torch(x, name, args, kwargs):
    def fn(t):
        mod = torch if isinstance(t, torch.Tensor) else toolkit
        return getattr(mod, name)(t, *args, **kwargs)

    out, expected = _both(fn, x)
    assert_close(out, expected)
    if name.endswith("_mean"):
        assert type(out) is tuple and len(out) == 2


@pytest.mark.parametrize("dtype", [toolkit.float16, toolkit.float32], ids=str)
def test_low_precision(x, dtype):
    y = x.to(dtype)
    assert_close(*_both(lambda t: t.var(1), y), accum=y.shape[1])
    assert_close(*_both(lambda t: t.std(), y), accum=y.numel())


@pytest.mark.parametrize("dtype", [toolkit.int64, toolkit.int32, toolkit.bool], ids=str)
def test_integers_are_refused(dtype):
    t = toolkit.tensor([1, 0, 1]).to(dtype)
    for name, msg in (("var", "std and var"), ("std", "std and var"), ("var_mean", "var_mean"),
                      ("std_mean", "std_mean")):
        with pytest.raises(RuntimeError, match=f"{msg} only support floating point and complex dtypes"):
            getattr(toolkit, name)(t)
        with pytest.raises(RuntimeError, match=f"{msg} only support floating point and complex dtypes"):
            getattr(torch, name)(to_torch(t))


def test_degenerate_sizes_warn_and_give_nan_or_inf():
    for t in (toolkit.tensor(1.5), toolkit.tensor([1.5]), toolkit.zeros(0)):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            out = t.var()
        with pytest.warns(UserWarning):
            expected = to_torch(t).var()
        assert_close(out, expected)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert_close(*_both(lambda t: t.std(0), toolkit.zeros(0, 3)))


def test_var_std_gradients_match_torch(x):
    for fn in (lambda t: t.var(1), lambda t: t.std((0, 2), keepdim=True), lambda t: t.std(correction=0),
               lambda t: sum(torch.var_mean(t, 1) if isinstance(t, torch.Tensor) else toolkit.var_mean(t, 1))):
        a = x.clone().requires_grad_()
        b = to_torch(x).requires_grad_()
        fn(a).sum().backward()
        fn(b).sum().backward()
        assert_close(a.grad, b.grad)


def test_std_gradient_is_zero_for_constant_input():
    a = toolkit.ones(4, requires_grad=True)
    a.std().backward()
    assert a.grad.tolist() == [0.0] * 4


NORMS = [
    ((), {}),
    ((2, 1), {}),
    ((), {"p": "fro", "dim": (0, 1)}),
    ((), {"p": "fro", "dim": 2, "keepdim": True}),
    ((1,), {}),
    ((3,), {"dim": -1}),
    ((0.5,), {"dim": 0}),
    ((0,), {"dim": 1}),
    ((-1,), {}),
    ((float("inf"),), {"dim": (1, 2)}),
    ((-float("inf"),), {"dim": 0, "keepdim": True}),
    ((None,), {"dim": 1}),
]


@pytest.mark.parametrize("args,kwargs", NORMS, ids=str)
def test_norm_matches_torch(x, args, kwargs):
    assert_close(*_both(lambda t: t.norm(*args, **kwargs), x))
    assert_close(*_both(lambda t: (torch if isinstance(t, torch.Tensor) else toolkit).norm(t, *args, **kwargs), x))


@pytest.mark.parametrize("args,kwargs", [a for a in NORMS if a[0][:1] != (0,)], ids=str)
def test_norm_gradients_match_torch(rng, args, kwargs):
    data = toolkit.tensor(rng.uniform(0.2, 2, (3, 4, 5)) * rng.choice([-1.0, 1.0], (3, 4, 5)))
    a = data.clone().requires_grad_()
    b = to_torch(data).requires_grad_()
    a.norm(*args, **kwargs).sum().backward()
    b.norm(*args, **kwargs).sum().backward()
    assert_close(a.grad, b.grad)


def test_norm_gradient_at_zero_is_zero():
    a = toolkit.zeros(3, requires_grad=True)
    a.norm().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]


def test_norm_dtypes():
    h = toolkit.tensor([[1.0, 5.0, 2.0], [3.0, 3.0, 0.0]], dtype=toolkit.float16)
    assert_close(*_both(lambda t: t.norm(), h), accum=h.numel())
    f = h.float()
    assert_close(*_both(lambda t: t.norm(dtype=TORCH_DTYPES[toolkit.float64] if isinstance(t, torch.Tensor)
                                         else toolkit.float64), f))
    assert_close(*_both(lambda t: t.norm(), toolkit.tensor(-3.0)))
    assert_close(*_both(lambda t: t.norm(), toolkit.zeros(0)))


def test_norm_errors():
    i = toolkit.tensor([1, 2])
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        i.norm()
    f = toolkit.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order abc not supported."):
        f.norm(p="abc")
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"):
        f.norm(p="fro", dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        toolkit.zeros(0).norm(p=math.inf)
    with pytest.raises(IndexError, match="Dimension out of range"):
        f.norm(dim=3)
    assert_close(*_both(lambda t: t.norm(p="nuc", dim=(0, 2)), f * 2))
    assert_close(*_both(lambda t: t.norm(p="nuc"), toolkit.tensor([[3.0, 1.0], [2.0, -1.0]])))
