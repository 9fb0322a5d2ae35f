"""A second backward through a graph whose saved values were freed: PyTorch's behaviour, case by case.

PyTorch frees what each node saved once the node has run (unless ``retain_graph``), and a node raises
"Trying to backward through the graph a second time" only when it needs a freed saved tensor. So a graph
whose nodes saved nothing runs again (and accumulates twice), while one node with a saved tensor anywhere
on the path makes the second backward raise. What counts as saved follows PyTorch's generated nodes:

* a Python number multiplied or divided by is a "wrapped number" tensor there (``x * 2``, ``x / 2``), saved
  like any tensor; one added or subtracted is not read by the derivative (``x + 1``, ``1 - x``);
* a value read for the gradients of several inputs is saved whatever needs a gradient (``other`` of
  ``div``, ``tensor2`` of ``addcdiv``), one read for a single input's gradient only when that input needs it;
* an in-place op on a view (``CopySlices``) drops its whole node, so it never runs twice.

Every case runs in PyTorch too, and the outcomes must agree.
"""

from __future__ import annotations

import pytest
import torch

import toolkit

from ..conftest import assert_close

FREED = "Trying to backward through the graph a second time"


def _leaf(m):
    return m.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)


def _const(m):
    return m.tensor([[1.5, 2.0], [-1.0, 0.5]])


def _inplace_on_view(method, *args):
    def f(m, x):
        y = x.clone()
        getattr(y[0], method)(*[a(m) if callable(a) else a for a in args])
        return y.sum()

    return f


# name -> f(module, leaf) -> scalar; whether PyTorch raises on the second backward is asserted from PyTorch.
CASES = {
    # nothing saved: the second backward runs and accumulates again
    "sum": lambda m, x: x.sum(),
    "mean": lambda m, x: x.mean(),
    "add number": lambda m, x: (x + 1).sum(),
    "add with alpha": lambda m, x: m.add(x, _const(m), alpha=2).sum(),
    "sub number": lambda m, x: (x - 1).sum(),
    "number minus": lambda m, x: (1 - x).sum(),
    "add 0-dim tensor": lambda m, x: (x + m.tensor(2.0)).sum(),
    "neg": lambda m, x: (-x).sum(),
    "views": lambda m, x: x.t().reshape(4)[1:].unsqueeze(0).expand(2, 3).sum(),
    "select and narrow": lambda m, x: x[0].sum() + x.narrow(1, 0, 1).sum(),
    "clone and casts": lambda m, x: x.clone().to(m.float64).float().sum(),
    "cat and stack": lambda m, x: m.cat([x, x]).sum() + m.stack([x, x]).sum(),
    "remainder by number": lambda m, x: (x % 2).sum(),
    "fmod by tensor": lambda m, x: m.fmod(x, _const(m)).sum(),
    "lerp with number weight": lambda m, x: m.lerp(x, _const(m), 0.5).sum(),
    "addcmul, self only": lambda m, x: m.addcmul(x, _const(m), _const(m), value=2).sum(),
    "in-place add number": lambda m, x: x.clone().add_(1).sum(),
    "in-place fill": lambda m, x: x.clone().fill_(1.0).sum() + x.sum(),
    # a saved tensor on the path: the second backward raises
    "mul by itself": lambda m, x: (x * x).sum(),
    "mul by number": lambda m, x: (x * 2).sum(),
    "number times": lambda m, x: (2 * x).sum(),
    "mul by bool": lambda m, x: (x * True).sum(),
    "div by number": lambda m, x: (x / 2).sum(),
    "div rounding by number": lambda m, x: m.div(x, 2, rounding_mode="floor").sum(),
    "true_divide by number": lambda m, x: m.true_divide(x, 2).sum(),
    "sum times number": lambda m, x: x.sum() * 3,
    "chain ending in a number product": lambda m, x: ((x + 1) * 2 - 3).reshape(4)[1:].sum(),
    "mul by constant": lambda m, x: (x * _const(m)).sum(),
    "div by constant": lambda m, x: (x / _const(m)).sum(),
    "addcdiv, self only": lambda m, x: m.addcdiv(x, _const(m), _const(m)).sum(),
    "exp": lambda m, x: x.exp().sum(),
    "pow number": lambda m, x: (x**2).sum(),
    "where": lambda m, x: m.where(_const(m) > 0, x, 0.0).sum(),
    "index by tensor": lambda m, x: x[m.tensor([1, 0, 1])].sum(),
    "in-place mul number": lambda m, x: x.clone().mul_(2).sum(),
    "in-place on a view, add": _inplace_on_view("add_", 1),
    "in-place on a view, mul": _inplace_on_view("mul_", 2),
    "in-place on a view, copy": _inplace_on_view("copy_", lambda m: _const(m)[0]),
    "setitem number": lambda m, x: (lambda y: (y.__setitem__(0, 5.0), y.sum())[1])(x.clone()),
}


def _second_backward(m, f):
    """(raised, grad after the second backward or None)."""
    x = _leaf(m)
    y = f(m, x)
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        assert FREED in str(e)
        return True, None
    return False, x.grad


@pytest.mark.parametrize("name", list(CASES))
def test_second_backward_raises_exactly_where_pytorch_does(name):
    f = CASES[name]
    raised, grad = _second_backward(torch, f)
    tk_raised, tk_grad = _second_backward(toolkit, f)
    assert tk_raised == raised, f"PyTorch {'raises' if raised else 'runs'}; toolkit {'raises' if tk_raised else 'runs'}"
    if not raised:
        assert_close(tk_grad, grad)


@pytest.mark.parametrize("name", list(CASES))
def test_retain_graph_allows_the_second_backward(name):
    f = CASES[name]
    grads = []
    for m in (torch, toolkit):
        x = _leaf(m)
        y = f(m, x)
        y.backward(retain_graph=True)
        y.backward()
        grads.append(x.grad)
    assert_close(grads[1], grads[0])


@pytest.mark.parametrize("name", ["mul by number", "div by number", "in-place on a view, add", "sum"])
def test_autograd_grad_twice_like_pytorch(name):
    f = CASES[name]
    outcomes = []
    for m in (torch, toolkit):
        x = _leaf(m)
        y = f(m, x)
        m.autograd.grad(y, x)
        try:
            outcomes.append(m.autograd.grad(y, x)[0].tolist())
        except RuntimeError as e:
            assert FREED in str(e)
            outcomes.append("raised")
    assert outcomes[1] == outcomes[0]


def test_a_shared_node_freed_by_one_backward_fails_the_other():
    for m in (torch, toolkit):
        x = _leaf(m)
        z = x * 2
        z.sum().backward()
        with pytest.raises(RuntimeError, match=FREED):
            (z + 1).sum().backward()


def test_a_freed_wrapped_number_cannot_be_read_back():
    x = _leaf(toolkit)
    y = x * 2
    assert y.grad_fn._saved_other == 2
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._saved_other  # noqa: B018 - the attribute access is what raises


def test_retain_graph_once_then_free():
    x = _leaf(toolkit)
    y = (x.clone() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()
    assert_close(x.grad, torch.full((2, 2), 4.0))
