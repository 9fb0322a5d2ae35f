"""F.pad against PyTorch: every mode, cropping, gradients (first and second), and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close

CASES = [
    ((2, 3, 4), (1, 2), "constant", 0.5),
    ((2, 3, 4), (1, -2, 2, 0), "constant", None),
    ((2, 3, 4, 2, 2), (1, 1, 0, 1, 2, 0, 1, 1), "constant", None),
    ((3, 5), (2, 1), "reflect", None),
    ((2, 3, 5), (-1, 3), "reflect", None),
    ((1, 2, 4, 5), (1, 2, 3, 0), "reflect", None),
    ((2, 3, 4, 5), (2, 1, 1, 3, 0, 2), "reflect", None),
    ((3, 5), (3, -1), "replicate", None),
    ((1, 2, 3, 4), (2, 2, -1, 3), "replicate", None),
    ((1, 2, 3, 3, 4), (1, 2, 0, 1, 2, 1), "replicate", None),
    ((2, 3, 4), (2, 1), "circular", None),
    ((1, 2, 3, 4), (-1, 2, 3, 1), "circular", None),
    ((1, 2, 3, 3, 4), (1, 2, 1, 1, 2, 0), "circular", None),
]


@pytest.mark.parametrize("shape,pad,mode,value", CASES)
def test_pad_matches_torch_with_gradients(shape, pad, mode, value):
    x = np.random.default_rng(0).uniform(-1, 1, shape)
    t = toolkit.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    out = F.pad(t, pad, mode=mode, value=value)
    tout = TF.pad(tt, pad, mode=mode, value=value)
    assert_close(out, tout)
    g = np.random.default_rng(1).uniform(-1, 1, tuple(tout.shape))
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(t.grad, tt.grad)


@pytest.mark.parametrize("shape,pad,mode,value", CASES[::3])
def test_pad_second_derivative(shape, pad, mode, value):
    x = toolkit.tensor(np.random.default_rng(2).uniform(-1, 1, shape), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a: F.pad(a, pad, mode=mode, value=value), (x,))


def test_constant_pad_nd_and_int_value():
    x = np.arange(6).reshape(2, 3)
    assert_close(toolkit.constant_pad_nd(toolkit.tensor(x), [1, 1], 7), torch.constant_pad_nd(torch.tensor(x),
                                                                                              [1, 1], 7))
    assert_close(F.pad(toolkit.tensor(x), (0, 0, 1, 0)), TF.pad(torch.tensor(x), (0, 0, 1, 0)))


ERRORS = [
    ((1, 2, 3, 4), (1, 2, 3), "constant", None),
    ((1, 2, 3, 4), (1, 1, 1, 1, 1, 1, 1, 1, 1, 1), "constant", None),
    ((1, 2, 3, 4), (4, 1), "reflect", None),
    ((1, 2, 3, 4), (1, 1), "reflect", None),
    ((2, 3), (3, 1), "reflect", None),
    ((3,), (1, 1), "replicate", None),
    ((1, 2, 3), (1, 1), "foo", None),
    ((1, 2, 3), (1, 1), "reflect", 2.0),
    ((1, 2, 3), (4, 1), "circular", None),
    ((1, 2, 3), (-2, -2), "circular", None),
    ((2, 3), (-4, -1), "constant", None),
]


@pytest.mark.parametrize("shape,pad,mode,value", ERRORS)
def test_pad_errors_match_torch(shape, pad, mode, value):
    x = np.zeros(shape)
    with pytest.raises(Exception) as expected:
        TF.pad(torch.tensor(x), pad, mode=mode, value=value)
    with pytest.raises(type(expected.value)) as got:
        F.pad(toolkit.tensor(x), pad, mode=mode, value=value)
    assert str(got.value).split("\n")[0] == str(expected.value).split("\n")[0]


@pytest.mark.parametrize("shape,pad,mode", [((2, 3, 4), [1, -2], "constant"), ((2, 3, 4), [2, 1], "reflect"),
                                            ((1, 2, 3, 4), [1, 2, 0, 1], "replicate"),
                                            ((1, 2, 3, 4), [1, 2, -1, 1], "circular")])
def test_pad_derivative_rule_matches_torch(shape, pad, mode):
    x = np.random.default_rng(0).uniform(-1, 1, shape)
    tx = torch.tensor(x, requires_grad=True)
    out = TF.pad(tx, pad, mode=mode)
    go = np.random.default_rng(1).uniform(-1, 1, tuple(out.shape))
    out.backward(torch.tensor(go))
    rule = toolkit.ops.get("pad").derivative
    assert_close(rule(toolkit.tensor(go), self=toolkit.tensor(x), pad=pad, mode=mode), tx.grad)
