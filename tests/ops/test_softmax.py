"""softmax and log_softmax against PyTorch: dims, dtype argument, stability, errors, first and second derivatives."""

# ruff: noqa: B023 - each lambda runs at once, inside the loop iteration that made it

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import TORCH_DTYPES, assert_close, to_torch, tolerances

NAMES = ["softmax", "log_softmax"]


def _both(fn, *xs):
    return fn(*xs), fn(*[to_torch(x) for x in xs])


def _mod(t):
    return torch if isinstance(t, torch.Tensor) else toolkit


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [toolkit.float16, toolkit.float32, toolkit.float64], ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_matches_torch(rng, name, dtype, dim):
    x = toolkit.tensor(rng.uniform(-4, 4, (2, 3, 4))).to(dtype)
    for n, fn in ((x.shape[dim], lambda t: getattr(t, name)(dim)),
                  (x.shape[dim], lambda t: getattr(_mod(t), name)(t, dim)),
                  (x.shape[::-1][dim], lambda t: getattr(t.transpose(0, 2), name)(dim))):
        # each output divides by (log_softmax: subtracts the log of) a sum of n terms over dim
        rtol, atol = tolerances(dtype, accum=n)
        if name == "log_softmax":  # x - logsumexp(x) cancels: its rounding error is relative to |x| <= 4
            atol = max(atol, 4 * rtol)
        assert_close(*_both(fn, x), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", NAMES)
def test_functional_namespace_of_torch_agrees(rng, name):
    x = toolkit.tensor(rng.uniform(-2, 2, (3, 5)))
    out = getattr(toolkit, name)(x, 1)
    assert_close(out, getattr(torch.nn.functional, name)(to_torch(x), dim=1))


@pytest.mark.parametrize("name", NAMES)
def test_dtype_argument_casts_first(rng, name):
    x = toolkit.tensor(rng.uniform(-2, 2, (3, 5))).to(toolkit.float32)
    out, expected = _both(lambda t: getattr(t, name)(1, dtype=TORCH_DTYPES[toolkit.float64]
                                                      if isinstance(t, torch.Tensor) else toolkit.float64), x)
    assert out.dtype is toolkit.float64
    assert_close(out, expected)
    i = toolkit.tensor([[1, 2, 3]])
    assert_close(*_both(lambda t: getattr(_mod(t), name)(t, 1, TORCH_DTYPES[toolkit.float32]
                                                       if isinstance(t, torch.Tensor) else toolkit.float32), i))


@pytest.mark.parametrize("name", NAMES)
def test_large_values_do_not_overflow(name):
    x = toolkit.tensor([[1000.0, 999.0, -5.0], [-1000.0, -1001.0, -2000.0]])
    out, expected = _both(lambda t: getattr(t, name)(1), x)
    assert np.isfinite(out.numpy()).all()
    assert_close(out, expected)
    special = toolkit.tensor([[float("inf"), 2.0], [-float("inf"), -float("inf")], [-float("inf"), 0.0]])
    assert_close(*_both(lambda t: getattr(t, name)(1), special))


@pytest.mark.parametrize("name", NAMES)
def test_edge_shapes(name):
    for x in (toolkit.tensor(2.0), toolkit.zeros(0, 3), toolkit.zeros(3, 0)):
        for dim in (0, -1):
            assert_close(*_both(lambda t: getattr(t, name)(dim), x))


@pytest.mark.parametrize("name", NAMES)
def test_errors(name):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1"):
        getattr(toolkit.ones(2), name)(1)
    with pytest.raises(NotImplementedError, match=f"\"{name}_lastdim_kernel_impl\" not implemented for 'Long'"):
        getattr(toolkit.tensor([1, 2]), name)(0)
    with pytest.raises(NotImplementedError, match=f"\"{name}_kernel_impl\" not implemented for 'Int'"):
        getattr(toolkit.tensor([[1, 2]], dtype=toolkit.int32), name)(0)
    with pytest.raises(TypeError):
        getattr(toolkit.ones(2), name)()


@pytest.mark.parametrize("name", NAMES)
def test_first_and_second_derivatives_match_torch(rng, name):
    data = rng.uniform(-2, 2, (3, 4))
    w = torch.from_numpy(rng.uniform(-1, 1, (3, 4)))
    a = toolkit.tensor(data, requires_grad=True)
    b = torch.from_numpy(data.copy()).requires_grad_()
    (ga,) = toolkit.autograd.grad((getattr(a, name)(0) * toolkit.tensor(w.numpy())).sum(), a, create_graph=True)
    (gb,) = torch.autograd.grad((getattr(b, name)(0) * w).sum(), b, create_graph=True)
    assert_close(ga, gb)
    (ga * ga).sum().backward()
    (gb * gb).sum().backward()
    assert_close(a.grad, b.grad)
