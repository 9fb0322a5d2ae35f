"""broadcast_tensors and broadcast_shapes: PyTorch's results, errors, gradients, and script mode's varargs call."""

import re

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close

SHAPES = [((2, 1), (3,)), (2, (3, 1)), ((), (0, 1), (3,)), ((5, 1, 4), (1, 3, 1), (4,)), ((2, 3), (4,)),
          ((2, 0), (1,)), ((3, 1), (2, 3), (4, 1, 1))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_broadcast_shapes_like_torch(shapes):
    try:
        expected = torch.broadcast_shapes(*shapes)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match="^" + re.escape(e.args[0]) + "$"):
            toolkit.broadcast_shapes(*shapes)
        return
    got = toolkit.broadcast_shapes(*shapes)
    assert isinstance(got, toolkit.Size) and tuple(got) == tuple(expected)


@pytest.mark.parametrize("shapes", [((3, 1), (4,)), ((2, 1, 4), (3, 1), ()), ((2, 3),), ((2, 3), (4,))], ids=str)
def test_broadcast_tensors_values_gradients_and_errors_like_torch(shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    outs = {}
    for lib, make in ((torch, torch.from_numpy), (toolkit, toolkit.from_numpy)):
        xs = [make(a.copy()).requires_grad_(True) for a in arrays]
        try:
            ys = lib.broadcast_tensors(*xs)
        except RuntimeError as e:
            outs[lib] = str(e)
            continue
        assert isinstance(ys, tuple)
        sum(y * (i + 1) for i, y in enumerate(ys)).sum().backward()
        outs[lib] = ([y.detach() for y in ys], [x.grad for x in xs])
    if isinstance(outs[torch], str):
        assert outs[toolkit] == outs[torch]
        return
    for got, expected in zip(outs[toolkit], outs[torch]):
        assert_close(got, expected)


def _difference(a, b):
    x, t = toolkit.broadcast_tensors(a, b)
    return x - t


def test_script_mode_packs_the_tensors_into_the_list_as_eager_does():
    s = toolkit.jit.script(_difference)
    a, b = toolkit.randn(3, 1), toolkit.randn(4)
    assert_close(s(a, b), _difference(a, b))
    assert "aten::broadcast_tensors" in str(s.graph)
