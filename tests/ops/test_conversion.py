"""Copies and fills: clone, _to_copy, copy_, fill_, zero_ (in place, with autograd)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close


def test_fill_and_zero_in_place():
    x = toolkit.ones(2, 3, dtype=toolkit.int32)
    v = x._version
    assert x.fill_(2.7) is x and x.tolist() == [[2] * 3] * 2 and x._version == v + 1
    x.zero_()
    assert x.tolist() == [[0] * 3] * 2
    y = toolkit.ones(3)
    y.fill_(toolkit.tensor(4.0))
    assert y.tolist() == [4.0] * 3
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        y.fill_(toolkit.ones(2))


def test_fill_through_view_writes_base():
    x = toolkit.zeros(3, 4)
    x.t()[1].fill_(5)
    assert x[:, 1].tolist() == [5.0, 5.0, 5.0]


def test_fill_gradients_match_torch():
    a = np.arange(6.0).reshape(2, 3)
    for lib in (toolkit, torch):
        x = lib.tensor(a, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        y = x * 1
        y.fill_(v)
        (y * lib.tensor(a)).sum().backward()
        if lib is toolkit:
            ours = (x.grad.numpy().copy(), v.grad.item())
        else:
            assert_close(toolkit.tensor(ours[0]), x.grad)
            assert ours[1] == v.grad.item()


def test_copy_broadcasts_and_casts():
    x = toolkit.zeros(2, 3, dtype=toolkit.int64)
    x.copy_(toolkit.tensor([1.9, 2.1, -3.5]))
    assert x.tolist() == [[1, 2, -3]] * 2
    with pytest.raises(RuntimeError, match="copy_"):
        x.copy_(toolkit.ones(4))


def test_clone_is_a_new_buffer_and_differentiable():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert not np.shares_memory(c.detach().numpy(), x.detach().numpy())
    (c * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert type(c.grad_fn).__name__ == "CloneBackward0"
