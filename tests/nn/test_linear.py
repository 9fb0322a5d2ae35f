"""Identity, Linear, Bilinear, Flatten and Unflatten against torch.nn (same seed -> same weights)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close, to_torch
from toolkit import nn


def _same(a, b) -> None:
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("bias", [True, False])
def test_linear_init_forward_backward_match_torch(bias):
    toolkit.manual_seed(0)
    m = nn.Linear(20, 30, bias=bias)
    torch.manual_seed(0)
    t = torch.nn.Linear(20, 30, bias=bias)
    _same(m.weight, t.weight)
    if bias:
        _same(m.bias, t.bias)
    else:
        assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    assert repr(m) == repr(t)
    x = toolkit.randn(4, 7, 20, requires_grad=True)
    tx = to_torch(x)
    y, ty = m(x), t(tx)
    assert_close(y, ty, accum=20)
    y.square().sum().backward()
    ty.square().sum().backward()
    assert_close(x.grad, tx.grad, accum=20 + 30)  # y's sum of 20 terms, then one over the 30 outputs
    assert_close(m.weight.grad, t.weight.grad, accum=20 + 4 * 7)  # y's sum, then one over the 4 * 7 rows


def test_linear_dtype_and_zero_features():
    m = nn.Linear(3, 2, dtype=toolkit.float64)
    assert m.weight.dtype is toolkit.float64 and m.bias.dtype is toolkit.float64
    assert m(toolkit.ones(5, 3, dtype=toolkit.float64)).dtype is toolkit.float64
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        z = nn.Linear(0, 2)
    assert z(toolkit.ones(4, 0)).shape == (4, 2)


def test_bilinear_matches_torch():
    toolkit.manual_seed(1)
    m = nn.Bilinear(3, 4, 5)
    torch.manual_seed(1)
    t = torch.nn.Bilinear(3, 4, 5)
    _same(m.weight, t.weight)
    _same(m.bias, t.bias)
    assert repr(m) == repr(t)
    a, b = toolkit.randn(6, 3), toolkit.randn(6, 4)
    assert_close(m(a, b), t(to_torch(a), to_torch(b)), accum=3 * 4)


def test_identity_flatten_unflatten():
    x = toolkit.randn(2, 3, 4, 5)
    assert nn.Identity(54, unused="x")(x) is x
    for args in [(), (0,), (1, 2), (-3, -1)]:
        assert nn.Flatten(*args)(x).shape == torch.nn.Flatten(*args)(to_torch(x)).shape
        assert repr(nn.Flatten(*args)) == repr(torch.nn.Flatten(*args))
    u, tu = nn.Unflatten(1, (3, 1)), torch.nn.Unflatten(1, (3, 1))
    assert repr(u) == repr(tu)
    assert_close(u(x), tu(to_torch(x)))
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float at pos 0"):
        nn.Unflatten(1, (1.5, 2))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 3)
