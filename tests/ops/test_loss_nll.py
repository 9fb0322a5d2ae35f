"""nll_loss's gradient op (``nll_loss_backward``) and the cross_entropy built on log_softmax and nll_loss, against
PyTorch: weights, ignore_index, reductions, 1-d and spatial inputs, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F
from toolkit.ops import api

from ..conftest import assert_close, to_torch

REDUCTIONS = ["none", "mean", "sum"]


def _grads(fn, x, *rest):
    """``fn``'s value and input gradient in toolkit and in torch (``rest``: tensors or None, not differentiated)."""
    out = []
    for lib, conv in ((toolkit, lambda t: t), (torch, to_torch)):
        xi = conv(x).detach().requires_grad_()
        loss = fn(lib, xi, *[None if r is None else conv(r) for r in rest])
        (loss.sum() * 1.5).backward()
        out.append((loss, xi.grad))
    return out


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(300, 17), (17,), (4, 5, 3), (2, 5, 3, 2)], ids=str)
def test_cross_entropy_matches_torch(rng, reduction, weighted, shape):
    x = toolkit.tensor(rng.standard_normal(shape)).to(toolkit.float32)
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = rng.integers(0, c, tshape)
    if t.ndim:
        t.flat[::4] = -100
    target = toolkit.tensor(t)
    weight = toolkit.tensor(rng.uniform(0.5, 2, c)).to(toolkit.float32) if weighted else None
    got, expected = _grads(lambda lib, xi, tt, w: lib.nn.functional.cross_entropy(xi, tt, w, reduction=reduction),
                           x, target, weight)
    assert_close(got, expected, accum=c)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_ignore_index_and_all_ignored(rng, reduction):
    x = toolkit.tensor(rng.standard_normal((6, 4)))
    for t in (toolkit.tensor([0, 3, 3, 1, 3, 2]), toolkit.tensor([3] * 6)):
        got, expected = _grads(lambda lib, xi, tt: lib.nn.functional.nll_loss(
            xi, tt, ignore_index=3, reduction=reduction), x, t)
        assert_close(got, expected)


def test_nll_loss_backward_matches_torch(rng):
    x = rng.standard_normal((5, 4))
    t = np.array([1, -100, 2, 3, 0])
    w = rng.uniform(0.5, 2, 4)
    for reduction, g, weight, total in ((0, rng.standard_normal(5), None, 1.0), (1, np.array(2.0), w, 1.7),
                                        (2, np.array(-1.0), w, 1.0), (1, np.array(1.0), None, 0.0)):
        args = (g, x, t, weight, reduction, -100, np.array(total))
        got = api.nll_loss_backward(*[toolkit.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
        expected = torch.ops.aten.nll_loss_backward(*[torch.tensor(a) if isinstance(a, np.ndarray) else a
                                                      for a in args])
        assert_close(got, expected)


def test_nll_loss_backward_errors_match_torch():
    x, t, g = np.zeros((3, 4)), np.array([1, 0, 2]), np.array(1.0)
    cases = [
        ((g, x, np.array([1, 7, 2]), None, 1, -100, np.array(2.0)), IndexError, "Target 7 is out of bounds."),
        ((g, x, t[:2], None, 1, -100, np.array(2.0)), RuntimeError,
         r"size mismatch \(got input: \[3, 4\], target: \[2\]\)"),
        ((np.ones(2), x, t, None, 0, -100, np.array(2.0)), RuntimeError,
         r"Expected a tensor of dimension 1 and tensor.size\[0\] == 3 but got: dimension 1 and tensor.size\[0\] = 2"),
        ((np.ones(2), x, t, None, 1, -100, np.array(2.0)), RuntimeError,
         r"Expected a single element grad_output tensor, but got: \[2\]"),
        ((g, x, t, None, 1, -100, np.ones(2)), RuntimeError,
         r"expected total_weight to be a  single element tensor, got: \[2\] \(2 elements\)"),
        ((g, np.zeros((2, 3, 4)), t, None, 1, -100, np.array(2.0)), RuntimeError, "input tensor should be 1D or 2D"),
    ]
    for args, error, message in cases:
        for lib, fn in ((toolkit, api.nll_loss_backward), (torch, torch.ops.aten.nll_loss_backward)):
            with pytest.raises(error, match=message):
                fn(*[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args])


def test_cross_entropy_double_backward_matches_torch(rng):
    x = rng.standard_normal((5, 4))
    t = np.array([1, 0, 3, 3, 2])
    results = []
    for lib in (toolkit, torch):
        xi = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.cross_entropy(xi, lib.tensor(t)), xi, create_graph=True)
        results.append((g, lib.autograd.grad((g * g).sum(), xi)[0]))
    assert_close(results[0], results[1])


def test_functional_nll_loss_keeps_its_result_dtype(rng):
    x = toolkit.tensor(rng.standard_normal((3, 4))).to(toolkit.float32).requires_grad_()
    F.nll_loss(x, toolkit.tensor([0, 1, 2])).backward()
    assert x.grad.dtype is toolkit.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_batch_without_weights_matches_torch(rng, dtype, reduction):
    """(N, C) scores without class weights take one compiled pass each way (float32/float64): the loss and its
    gradient as PyTorch's, for transposed scores, uint8 targets, ignored targets, and the out-of-range errors."""
    x = rng.standard_normal((10, 64)).astype(dtype).T  # (64, 10), not contiguous
    row = toolkit.tensor(x[:1]).expand(64, 10)  # read-only scores
    assert_close(toolkit.nn.functional.nll_loss(row, toolkit.tensor(np.arange(64) % 10), reduction=reduction),
                 torch.nn.functional.nll_loss(to_torch(row), torch.tensor(np.arange(64) % 10), reduction=reduction),
                 accum=64)
    for t in (rng.integers(0, 10, 64), rng.integers(0, 10, 64).astype(np.uint8), np.r_[[-100, 3] * 32]):
        got, expected = _grads(lambda lib, xi, tt: lib.nn.functional.nll_loss(xi, tt, reduction=reduction),
                               toolkit.tensor(x), toolkit.tensor(t))
        assert_close(got, expected, accum=64)
    for bad in (10, -1):
        t = np.r_[[1, 2, bad, 4, 11]]
        for lib in (toolkit, torch):
            with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
                lib.nn.functional.nll_loss(lib.tensor(x[:5]), lib.tensor(t), reduction=reduction)
    for lib in (toolkit, torch):  # an empty batch with a 0-d target
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
            lib.nn.functional.nll_loss(lib.tensor(x[:0]), lib.tensor(1), reduction=reduction)
