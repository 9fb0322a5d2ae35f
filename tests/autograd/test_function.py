"""Custom ``autograd.Function``: PyTorch's API and behaviour, side by side with torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close


def make_exp(lib):
    class MyExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = x.exp() * scale
            ctx.save_for_backward(y)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y, None

    return MyExp


def both(fn):
    return fn(toolkit), fn(torch)


def test_forward_backward_names_and_needs_input_grad():
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = make_exp(lib).apply(x, 2.0)
        y.sum().backward()
        return type(y.grad_fn).__name__, y.grad_fn.needs_input_grad, y.grad_fn.scale, x.grad, y

    a, e = both(run)
    assert a[:3] == e[:3] == ("MyExpBackward", (True, False), 2.0)
    assert_close(a[3], e[3])
    assert_close(a[4], e[4])
    assert len(a[4].grad_fn.next_functions) == 1


def test_double_backward_through_function():
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = make_exp(lib).apply(x, 3.0)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        return g, g2

    for a, e in zip(*both(run)):
        assert_close(a, e)


def test_no_graph_when_no_input_requires_grad():
    y = make_exp(toolkit).apply(toolkit.ones(2), 1.0)
    assert y.grad_fn is None and not y.requires_grad
    with toolkit.no_grad():
        y = make_exp(toolkit).apply(toolkit.ones(2, requires_grad=True), 1.0)
    assert y.grad_fn is None


def test_saved_tensors_freed_and_version_checked():
    x = toolkit.tensor([0.5, 1.0], requires_grad=True)
    y = make_exp(toolkit).apply(x, 1.0)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    y = make_exp(toolkit).apply(x, 1.0)
    with toolkit.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_multiple_outputs_non_tensor_outputs_and_non_differentiable():
    def run(lib):
        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                idx = (x > 0).to(lib.int64)
                ctx.mark_non_differentiable(idx)
                return x * k, x * x, idx, "label"

            @staticmethod
            def backward(ctx, ga, gb, gidx, glabel):
                assert glabel is None
                return ga * 2 + gb, None

        x = lib.tensor([1.0, -2.0], requires_grad=True)
        a, b, idx, label = Split.apply(x, 2.0)
        (a.sum() + b.sum()).backward()
        return x.grad, idx.requires_grad, label, a.grad_fn is b.grad_fn

    a, e = both(run)
    assert_close(a[0], e[0])
    assert a[1:] == e[1:]


def test_materialize_grads_default_and_disabled():
    def run(lib, materialize):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append(gb is None)
                return ga * 2 if gb is None else ga * 2 + gb * 3

        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        return x.grad, seen

    for m in (True, False):
        (g, s), (tg, ts) = run(toolkit, m), run(torch, m)
        assert_close(g, tg)
        assert s == ts == [not m]


def test_mark_dirty_inplace_function():
    def run(lib):
        class AddOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = AddOne.apply(y)
        (z * z).sum().backward()
        return z is y, type(y.grad_fn).__name__, x.grad

    a, e = both(run)
    assert a[:2] == e[:2]
    assert_close(a[2], e[2])
    x = toolkit.tensor([1.0], requires_grad=True)

    class Dirty(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        Dirty.apply(x)


def test_setup_context_style():
    def run(lib):
        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y, g * x

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        Mul.apply(x, y).sum().backward()
        return x.grad, y.grad

    for a, e in zip(*both(run)):
        assert_close(a, e)


def test_input_returned_unchanged_gets_new_history():
    def run(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Ident.apply(x)
        y.sum().backward()
        return y is x, x.grad_fn is None, x.grad

    a, e = both(run)
    assert a[:2] == e[:2]
    assert_close(a[2], e[2])


def test_once_differentiable():
    def run(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * g * x

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x)
        (g,) = lib.autograd.grad(y.sum() * (x * x).sum(), x, create_graph=True)
        return g

    g, tg = both(run)
    assert_close(g, tg)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        toolkit.autograd.grad(g.sum(), _leaf_of(g))
    with pytest.raises(RuntimeError, match="@once_differentiable"):
        torch.autograd.grad(tg.sum(), _leaf_of(tg))


def _leaf_of(t):
    node = t.grad_fn
    seen = [node]
    while seen:
        n = seen.pop()
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            if type(nxt).__name__ == "AccumulateGrad":
                return nxt.variable
            seen.append(nxt)
    raise AssertionError("no leaf")


def test_wrong_number_and_shape_of_gradients():
    class TooFew(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    a, b = toolkit.ones(2, requires_grad=True), toolkit.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"):
        TooFew.apply(a, b).sum().backward()

    class BadShape(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    with pytest.raises(RuntimeError, match=r"Function BadShapeBackward returned an invalid gradient at index 0 - got "
                                           r"\[1\] but expected shape compatible with \[2\]"):
        BadShape.apply(a).sum().backward()

    class Broadcast(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g * toolkit.ones(3, 2)

    c = toolkit.ones(2, requires_grad=True)
    Broadcast.apply(c).backward()
    assert_close(c.grad, np.array([3.0, 3.0], dtype=np.float32))


def test_save_for_backward_rejects_non_tensors():
    class F(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        F.apply(toolkit.ones(1, requires_grad=True))


def test_function_gradcheck():
    class Cube(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x * x

    x = toolkit.tensor([0.3, -1.2, 2.0], dtype=toolkit.float64, requires_grad=True)
    assert toolkit.autograd.gradcheck(Cube.apply, (x,))
    assert toolkit.autograd.gradgradcheck(Cube.apply, (x,))
