"""F.linear and F.bilinear against PyTorch: leading dims, no bias, gradients, error messages."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _pair(rng, *shape, dtype=np.float32):
    x = rng.standard_normal(shape).astype(dtype)
    return toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("in_shape,bias", [((5, 3), True), ((2, 4, 3), True), ((3,), True), ((2, 3), False),
                                           ((2, 2, 2, 3), False), ((0, 3), True)])
def test_linear(in_shape, bias, rng):
    x, tx = _pair(rng, *in_shape)
    w, tw = _pair(rng, 4, 3)
    b, tb = _pair(rng, 4) if bias else (None, None)
    out, tout = F.linear(x, w, b), torch.nn.functional.linear(tx, tw, tb)
    assert_close(out, tout, accum=3)
    g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    rows = math.prod(in_shape[:-1])
    for a, e, n in ((x, tx, 4), (w, tw, rows), (b, tb, rows)):  # over the out features, or over the rows
        if a is not None:
            assert_close(a.grad, e.grad, accum=n)


def test_linear_non_contiguous_and_float64(rng):
    x = rng.standard_normal((3, 5)).T
    w = rng.standard_normal((3, 2)).T
    assert_close(F.linear(toolkit.tensor(x), toolkit.tensor(w)), torch.nn.functional.linear(torch.tensor(x),
                                                                                          torch.tensor(w)))


def test_linear_integer(rng):
    x, w = rng.integers(-3, 3, (2, 3)), rng.integers(-3, 3, (4, 3))
    assert_close(F.linear(toolkit.tensor(x), toolkit.tensor(w)), torch.nn.functional.linear(torch.tensor(x),
                                                                                          torch.tensor(w)))


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x4\)"):
        F.linear(toolkit.ones(2, 2, 3), toolkit.ones(4, 5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        F.linear(toolkit.ones(2, 3), toolkit.ones(4, 3, dtype=toolkit.float64))


def test_linear_double_backward():
    x = toolkit.randn(2, 3, dtype=toolkit.float64, requires_grad=True)
    w = toolkit.randn(4, 3, dtype=toolkit.float64, requires_grad=True)
    b = toolkit.randn(4, dtype=toolkit.float64, requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda x, w, b: F.linear(x, w, b) ** 2, (x, w, b))


@pytest.mark.parametrize("lead,bias", [((5,), True), ((2, 3), True), ((4,), False)])
def test_bilinear(lead, bias, rng):
    x1, tx1 = _pair(rng, *lead, 3)
    x2, tx2 = _pair(rng, *lead, 2)
    w, tw = _pair(rng, 4, 3, 2)
    b, tb = _pair(rng, 4) if bias else (None, None)
    out, tout = F.bilinear(x1, x2, w, b), torch.nn.functional.bilinear(tx1, tx2, tw, tb)
    assert_close(out, tout, accum=3 * 2)
    out.sum().backward()
    tout.sum().backward()
    rows = math.prod(lead)
    for a, e, n in ((x1, tx1, 4 * 2), (x2, tx2, 4 * 3), (w, tw, rows), (b, tb, rows)):
        if a is not None:
            assert_close(a.grad, e.grad, accum=n)


def test_bilinear_errors():
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 4 but expected 3"):
        F.bilinear(toolkit.ones(2, 3), toolkit.ones(2, 4), toolkit.ones(5, 3, 3))
