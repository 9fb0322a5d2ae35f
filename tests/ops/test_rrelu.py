"""rrelu against PyTorch with equal seeds: training-mode slopes, outputs and gradients bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _same(a, b):
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert an.shape == bn.shape and an.dtype == bn.dtype, (an.shape, an.dtype, bn.shape, bn.dtype)
    np.testing.assert_array_equal(an, bn)


def _x(shape, dtype="float32", seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x.reshape(-1)[:2] = (0.0, np.nan) if x.size >= 2 else x.reshape(-1)[:2]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", [(), (0.1, 0.7), (0.25, 0.25)])
@pytest.mark.parametrize("shape", [(3, 4), (1000,), (2, 3, 5)])
def test_training_slopes_and_gradient_match_torch(dtype, bounds, shape):
    x = _x(shape, dtype)
    toolkit.manual_seed(7)
    torch.manual_seed(7)
    for _ in range(2):  # consecutive calls continue the same stream
        a = toolkit.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        ya, yb = F.rrelu(a, *bounds, training=True), torch.nn.functional.rrelu(b, *bounds, training=True)
        _same(ya, yb)
        g = np.random.default_rng(1).standard_normal(shape).astype(dtype)
        ya.backward(toolkit.tensor(g))
        yb.backward(torch.tensor(g))
        _same(a.grad, b.grad)


def test_slopes_lie_in_bounds_and_positive_elements_pass_through():
    x = toolkit.tensor(_x((4000,)))
    y = F.rrelu(x, 0.2, 0.4, training=True)
    neg = x.numpy() < 0
    slopes = y.numpy()[neg] / x.numpy()[neg]
    assert slopes.min() >= 0.2 - 1e-6 and slopes.max() <= 0.4 + 1e-6 and slopes.std() > 0.03
    np.testing.assert_array_equal(y.numpy()[x.numpy() > 0], x.numpy()[x.numpy() > 0])


def test_inplace_and_module_match_torch():
    x = _x((5, 6))
    toolkit.manual_seed(3)
    torch.manual_seed(3)
    a, b = toolkit.tensor(x), torch.tensor(x)
    assert F.rrelu(a, training=True, inplace=True) is a
    torch.nn.functional.rrelu(b, training=True, inplace=True)
    _same(a, b)
    m, tm = toolkit.nn.RReLU(0.1, 0.5), torch.nn.RReLU(0.1, 0.5)
    _same(m(toolkit.tensor(x)), tm(torch.tensor(x)))
    m.eval()
    tm.eval()
    _same(m(toolkit.tensor(x)), tm(torch.tensor(x)))


def test_eval_is_leaky_relu_with_the_mean_slope():
    x = _x((3, 4))
    out = F.rrelu(toolkit.tensor(x), 0.1, 0.3)
    assert_close(out, torch.nn.functional.rrelu(torch.tensor(x), 0.1, 0.3))
    assert_close(out, F.leaky_relu(toolkit.tensor(x), 0.2))


def test_gradcheck_and_gradgradcheck_with_the_slopes_held_by_the_seed():
    x = toolkit.tensor(np.random.default_rng(2).uniform(0.1, 1.0, (3, 4)) * np.sign(
        np.random.default_rng(3).standard_normal((3, 4))), requires_grad=True)

    def fn(t):
        toolkit.manual_seed(11)
        return F.rrelu(t, 0.1, 0.6, training=True)

    assert toolkit.autograd.gradcheck(fn, (x,))
    assert toolkit.autograd.gradgradcheck(fn, (x,))


@pytest.mark.filterwarnings("ignore::toolkit.jit.TracerWarning")
def test_trace_records_one_rrelu_node():
    g = toolkit.jit.trace(lambda t: F.rrelu(t, training=True), (toolkit.randn(3, 4),), check_trace=False).graph
    assert [n.kind for n in g.all_nodes() if n.kind != "prim::Constant"] == ["aten::rrelu"]


@pytest.mark.parametrize("training", [True, False])
def test_errors_match_torch(training):
    x = _x((3,))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(toolkit.tensor(x), 0.5, 0.1, training)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        torch.nn.functional.rrelu(torch.tensor(x), 0.5, 0.1, training)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.rrelu(toolkit.tensor([1, -2]), training=training)
