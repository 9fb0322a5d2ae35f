"""Dropout against PyTorch: the same seed gives the same mask, gradients, special cases, warnings, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from ..conftest import assert_close


def _both(name, shape, seed=0, **kwargs):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    a, ta = toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    toolkit.manual_seed(seed)
    out = getattr(F, name)(a, **kwargs)
    torch.manual_seed(seed)
    tout = getattr(torch.nn.functional, name)(ta, **kwargs)
    return a, ta, out, tout


@pytest.mark.parametrize("name,shape,p", [
    ("dropout", (4, 5, 6), 0.5), ("dropout", (100,), 0.2), ("dropout", (3, 4), 0.9),
    ("dropout2d", (4, 6, 3, 3), 0.5), ("dropout2d", (4, 6, 3, 3), 0.25), ("dropout1d", (4, 6, 5), 0.5),
    ("dropout1d", (6, 5), 0.3), ("dropout3d", (2, 4, 2, 2, 2), 0.5), ("alpha_dropout", (4, 5), 0.3),
    ("feature_alpha_dropout", (4, 5, 2), 0.4),
])
def test_mask_and_grad_match_torch(name, shape, p):
    training = {"training": True}
    a, ta, out, tout = _both(name, shape, p=p, **training)
    assert_close(out, tout)
    g = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(a.grad, ta.grad)


def test_dropout2d_zeroes_whole_channels():
    toolkit.manual_seed(3)
    out = F.dropout2d(toolkit.ones(8, 16, 3, 3))
    per_channel = out.numpy().reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()


def test_dropout2d_3d_input_warns_like_torch():
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d and assuming that channel-wise 1D"):
        a, ta, out, tout = _both("dropout2d", (3, 4, 5))
    assert_close(out, tout)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d, which is deprecated"):
        F.dropout2d(toolkit.ones(3, 4))


def test_dropout1d_rejects_4d():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(toolkit.ones(1, 2, 3, 4))


def test_special_cases():
    x = toolkit.randn(3, 4)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert_close(F.dropout(x, 1.0), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        nn.Dropout(-0.1)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            F.dropout2d(toolkit.ones(3))


def test_inplace():
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    a, ta = toolkit.tensor(x), torch.tensor(x)
    toolkit.manual_seed(5)
    out = F.dropout(a, 0.3, inplace=True)
    torch.manual_seed(5)
    torch.nn.functional.dropout(ta, 0.3, inplace=True)
    assert out is a
    assert_close(a, ta)


@pytest.mark.parametrize("cls,shape", [("Dropout", (4, 5)), ("Dropout2d", (2, 4, 3, 3)), ("Dropout1d", (2, 4, 3)),
                                       ("AlphaDropout", (4, 5)), ("Dropout3d", (2, 3, 1, 2, 2))])
def test_modules(cls, shape):
    m, tm = getattr(nn, cls)(0.4), getattr(torch.nn, cls)(0.4)
    assert repr(m) == repr(tm)
    assert repr(getattr(nn, cls)(0.1, True)) == repr(getattr(torch.nn, cls)(0.1, True))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    toolkit.manual_seed(7)
    torch.manual_seed(7)
    assert_close(m(toolkit.tensor(x)), tm(torch.tensor(x)))
    m.eval()
    tm.eval()
    assert_close(m(toolkit.tensor(x)), tm(torch.tensor(x)))


def test_same_seed_across_calls_matches_torch_sequence():
    x = np.ones((6, 7), dtype=np.float32)
    toolkit.manual_seed(11)
    outs = [F.dropout(toolkit.tensor(x), 0.5).numpy() for _ in range(3)]
    torch.manual_seed(11)
    touts = [torch.nn.functional.dropout(torch.tensor(x), 0.5).numpy() for _ in range(3)]
    for o, t in zip(outs, touts):
        np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"])
@pytest.mark.parametrize("inplace", [False, True])
def test_registry_ops_match_torch_ops_and_grad_fn(name, inplace):
    """``toolkit.dropout(x, p, train)`` and friends: PyTorch's masks, values and autograd nodes."""
    x = np.random.default_rng(4).standard_normal((3, 4, 5)).astype(np.float32)
    a, ta = toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    op = name + ("_" if inplace else "")
    toolkit.manual_seed(7)
    out = getattr(toolkit, op)(a * 1, 0.3, True)
    torch.manual_seed(7)
    tout = getattr(torch, op)(ta * 1, 0.3, True)
    assert_close(out, tout)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    out.sum().backward()
    tout.sum().backward()
    assert_close(a.grad, ta.grad)


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_registry_ops_not_training_return_the_input(name):
    x, tx = toolkit.rand(2, 3), torch.rand(2, 3)
    assert getattr(toolkit, name)(x, 0.5, False) is x
    assert getattr(toolkit, name + "_")(x, 0.5, False) is x
    assert getattr(torch, name)(tx, 0.5, False) is tx


def test_registry_op_rejects_bad_p_like_torch():
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        toolkit.dropout(toolkit.rand(3), 1.5, True)
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        torch.dropout(torch.rand(3), 1.5, True)


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_seeded_gradcheck_and_gradgradcheck(name):
    """With the generator reseeded on every call the mask is fixed, so the op's derivative can be checked."""
    x = toolkit.tensor(np.random.default_rng(5).standard_normal((3, 4)), requires_grad=True)

    def fn(t):
        toolkit.manual_seed(11)
        return getattr(toolkit, name)(t, 0.4, True)

    assert toolkit.autograd.gradcheck(fn, (x,))
    assert toolkit.autograd.gradgradcheck(fn, (x,))
