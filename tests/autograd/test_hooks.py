"""Tensor hooks, node hooks, retain_grad and post-accumulate hooks, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close


def both(fn):
    """Run ``fn(lib, tensor_ctor)`` with toolkit and torch; return both results."""
    return fn(toolkit), fn(torch)


def test_leaf_hook_modifies_grad_and_handle_removes_it():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x.register_hook(lambda g: g * 10)
        (x * 2).sum().backward()
        first = x.grad.clone()
        h.remove()
        x.grad = None
        (x * 2).sum().backward()
        return first, x.grad

    (a1, a2), (e1, e2) = both(run)
    assert_close(a1, e1)
    assert_close(a2, e2)


def test_non_leaf_hook_sees_and_replaces_grad():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        seen = []
        y.register_hook(lambda g: seen.append(g.clone()))
        y.register_hook(lambda g: g * 2)
        (y * y).sum().backward()
        return seen[0], x.grad

    for a, e in zip(*both(run)):
        assert_close(a, e)


def test_hooks_run_before_retain_grad():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return y.grad, x.grad

    for a, e in zip(*both(run)):
        assert_close(a, e)


def test_leaf_hook_applies_to_autograd_grad():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.register_hook(lambda g: g * 3)
        return lib.autograd.grad((x * 2).sum(), x)[0]

    assert_close(*both(run))


def test_hook_on_tensor_not_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        toolkit.ones(2).register_hook(lambda g: g)


def test_grad_fn_register_hook_and_prehook():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        calls = []

        def post(grad_inputs, grad_outputs):
            calls.append(("post", grad_inputs[0].clone(), grad_outputs[0].clone()))
            return (grad_inputs[0] * 2, grad_inputs[1])

        def pre(grad_outputs):
            calls.append(("pre", grad_outputs[0].clone()))
            return (grad_outputs[0] + 1,)

        y.grad_fn.register_hook(post)
        h = y.grad_fn.register_prehook(pre)
        y.sum().backward()
        h.remove()
        return calls, x.grad

    (calls, g), (tcalls, tg) = both(run)
    assert [c[0] for c in calls] == [c[0] for c in tcalls]
    for c, tc in zip(calls, tcalls):
        for a, e in zip(c[1:], tc[1:]):
            assert_close(a, e)
    assert_close(g, tg)


def test_post_accumulate_grad_hook():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        return seen

    a, e = both(run)
    assert len(a) == len(e) == 2
    for u, v in zip(a, e):
        assert_close(u, v)
    y = toolkit.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        y.register_post_accumulate_grad_hook(lambda t: None)


def test_hook_handle_as_context_manager():
    x = toolkit.tensor([1.0], requires_grad=True)
    with x.register_hook(lambda g: g * 5):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert_close(x.grad, np.array([6.0], dtype=np.float32))


def test_hook_with_create_graph_is_differentiable():
    def run(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = x * x
        y.register_hook(lambda g: g * x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        return g, g2

    for a, e in zip(*both(run)):
        assert_close(a, e)
