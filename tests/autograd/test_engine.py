"""The backward engine, ``backward``/``grad`` arguments and errors, graph structure: all against PyTorch."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

import toolkit
from toolkit.autograd.node import AccumulateGrad

from ..conftest import assert_close


def pair(a, requires_grad=True):
    """The same data as a toolkit and a torch tensor."""
    a = np.asarray(a, dtype=np.float32)
    return (toolkit.tensor(a.copy(), requires_grad=requires_grad), torch.tensor(a.copy(), requires_grad=requires_grad))


def test_simple_chain_matches_torch():
    x, tx = pair([1.0, -2.0, 3.0])
    ((x * 3 + 1).tanh() * x).sum().backward()
    ((tx * 3 + 1).tanh() * tx).sum().backward()
    assert_close(x.grad, tx.grad)


def test_rnn_step_matches_torch(rng):
    xs, hs = rng.standard_normal((1, 10)), rng.standard_normal((1, 20))
    whs, wxs = rng.standard_normal((20, 20)), rng.standard_normal((20, 10))
    results = []
    for lib in (toolkit, torch):
        x = lib.tensor(xs.astype(np.float32))
        prev_h = lib.tensor(hs.astype(np.float32))
        W_h = lib.tensor(whs.astype(np.float32), requires_grad=True)
        W_x = lib.tensor(wxs.astype(np.float32), requires_grad=True)
        i2h = lib.mm(W_x, x.t())
        h2h = lib.mm(W_h, prev_h.t())
        next_h = (i2h + h2h).tanh()
        loss = next_h.sum()
        loss.backward()
        results.append((W_h.grad, W_x.grad, loss))
    for a, e in zip(*results):  # mm sums of 10 and 20 products, then the loss's sum over 20
        assert_close(a, e, accum=10 + 20 + 20)


def test_grad_accumulates_across_backward_calls():
    x, tx = pair([1.0, 2.0])
    for _ in range(3):
        (x * x).sum().backward()
        (tx * tx).sum().backward()
    assert_close(x.grad, tx.grad)
    g = x.grad
    (x * 2).sum().backward()
    assert x.grad is g  # accumulated in place, as PyTorch does outside create_graph


def test_gradient_argument_and_non_scalar_error():
    x, tx = pair([1.0, 2.0, 3.0])
    y, ty = x * x, tx * tx
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(toolkit.tensor([1.0, 0.5, 2.0]))
    ty.backward(torch.tensor([1.0, 0.5, 2.0]))
    assert_close(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(toolkit.ones(2))


def test_backward_twice_without_retain_graph_raises():
    x, _ = pair([1.0, 2.0])
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert_close(x.grad, torch.tensor([4.0, 8.0]))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()


def test_backward_twice_through_nodes_without_saved_tensors_is_fine():
    x, tx = pair([1.0, 2.0])
    z, tz = (x + 1).sum(), (tx + 1).sum()
    z.backward()
    z.backward()
    tz.backward()
    tz.backward()
    assert_close(x.grad, tx.grad)


def test_tensor_not_requiring_grad_errors():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        toolkit.ones(3).sum().backward()
    x = toolkit.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        toolkit.autograd.grad((x * 2).sum(), toolkit.ones(2))


def test_backward_on_leaf_sets_its_grad():
    x, tx = pair([1.0, 2.0])
    x.backward(toolkit.tensor([3.0, 4.0]))
    tx.backward(torch.tensor([3.0, 4.0]))
    assert_close(x.grad, tx.grad)


def test_backward_inputs_only_accumulates_those():
    (a, ta), (b, tb) = pair([1.0, 2.0]), pair([3.0, 4.0])
    (a * b).sum().backward(inputs=[a])
    (ta * tb).sum().backward(inputs=[ta])
    assert_close(a.grad, ta.grad)
    assert b.grad is None and tb.grad is None
    y = a * 2
    (y * b).sum().backward(inputs=[y])
    ty = ta * 2
    (ty * tb).sum().backward(inputs=[ty])
    assert_close(y.grad, ty.grad)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * b).sum().backward(inputs=[])


def test_grad_basic_allow_unused_and_materialize():
    (a, ta), (b, tb), (c, _) = pair([1.0, 2.0]), pair([3.0, 4.0]), pair([5.0, 6.0])
    ga, gb = toolkit.autograd.grad((a * b).sum(), (a, b))
    tga, tgb = torch.autograd.grad((ta * tb).sum(), (ta, tb))
    assert_close(ga, tga)
    assert_close(gb, tgb)
    assert a.grad is None  # grad() does not accumulate
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        toolkit.autograd.grad((a * b).sum(), (a, c))
    ga, gc_ = toolkit.autograd.grad((a * b).sum(), (a, c), allow_unused=True)
    assert gc_ is None
    ga, gc_ = toolkit.autograd.grad((a * b).sum(), (a, c), materialize_grads=True)
    assert_close(gc_, torch.zeros(2))
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        toolkit.autograd.grad((a * b).sum(), (a, c), allow_unused=False, materialize_grads=True)


def test_grad_outputs_and_multiple_outputs():
    x, tx = pair([1.0, 2.0, 3.0])
    y1, y2 = x * 2, x.exp()
    g = toolkit.autograd.grad((y1, y2), x, grad_outputs=(toolkit.ones(3), toolkit.tensor([1.0, 2.0, 3.0])))
    tg = torch.autograd.grad((tx * 2, tx.exp()), tx, grad_outputs=(torch.ones(3), torch.tensor([1.0, 2.0, 3.0])))
    assert isinstance(g, tuple) and len(g) == 1
    assert_close(g[0], tg[0])


def test_grad_runs_only_the_needed_part_of_the_graph():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    w = toolkit.tensor([3.0, 4.0], requires_grad=True)
    ran = []
    a = x * 2
    b = w * 3
    a.grad_fn.register_prehook(lambda g: ran.append("a"))
    b.grad_fn.register_prehook(lambda g: ran.append("b"))
    (gx,) = toolkit.autograd.grad((a + b).sum(), x)
    assert ran == ["a"]
    assert_close(gx, torch.tensor([2.0, 2.0]))
    assert w.grad is None


def test_grad_with_respect_to_intermediate():
    x, tx = pair([1.0, 2.0])
    y, ty = x.exp(), tx.exp()
    (g,) = toolkit.autograd.grad((y * y).sum(), y)
    (tg,) = torch.autograd.grad((ty * ty).sum(), ty)
    assert_close(g, tg)


@pytest.mark.parametrize("fn", [lambda m, x: (x * x * x), lambda m, x: m.tanh(x).exp(), lambda m, x: m.exp(m.tanh(x) * x)])
def test_third_derivative_matches_torch(fn):
    x, tx = pair([0.3, -0.7, 1.1])
    outs = []
    for lib, t in ((toolkit, x), (torch, tx)):
        y = fn(lib, t).sum()
        (g1,) = lib.autograd.grad(y, t, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), t, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), t)
        outs.append((g1, g2, g3))
    for a, e in zip(*outs):
        assert_close(a, e)


def test_create_graph_backward_builds_differentiable_grad():
    x, tx = pair([0.5, 1.5])
    (x * x * x).sum().backward(create_graph=True)
    (tx * tx * tx).sum().backward(create_graph=True)
    assert x.grad.requires_grad and tx.grad.requires_grad
    (g2,) = toolkit.autograd.grad(x.grad.sum(), x)
    (tg2,) = torch.autograd.grad(tx.grad.sum(), tx)
    assert_close(g2, tg2)


def test_retain_grad_requires_grad_detach_data_is_leaf():
    x, tx = pair([1.0, 2.0])
    y, ty = x * 3, tx * 3
    y.retain_grad()
    ty.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert_close(y.grad, ty.grad)
    assert x.is_leaf and not y.is_leaf and toolkit.ones(2).is_leaf
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf and d._base is None
    assert d.data_ptr() == y.data_ptr()
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    z = toolkit.ones(2)
    assert z.requires_grad_() is z and z.requires_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        toolkit.ones(2).retain_grad()
    y2 = x * 2
    y2.detach_()
    assert y2.grad_fn is None and not y2.requires_grad
    data = x.data
    assert not data.requires_grad and data.data_ptr() == x.data_ptr()


def test_grad_fn_names_and_next_functions():
    x, tx = pair([1.0, 2.0])
    y, ty = x * 2, tx * 2
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "MulBackward0"
    assert y.grad_fn.name() == ty.grad_fn.name()
    (n0, i0), (n1, i1) = y.grad_fn.next_functions
    assert isinstance(n0, AccumulateGrad) and type(n0).__name__ == "AccumulateGrad" and n0.variable is x
    assert (i0, n1, i1) == (0, None, 0)
    assert ty.grad_fn.next_functions[1] == (None, 0)
    z = (y.exp() + x).sum()
    tz = (ty.exp() + tx).sum()
    names = [type(z.grad_fn).__name__, type(z.grad_fn.next_functions[0][0]).__name__]
    tnames = [type(tz.grad_fn).__name__, type(tz.grad_fn.next_functions[0][0]).__name__]
    assert names == tnames
    assert x.grad_fn is None
    assert y.grad_fn.next_functions[0][0] is (x * 5).grad_fn.next_functions[0][0]  # one AccumulateGrad per leaf


def test_shared_subgraph_ordering():
    x, tx = pair([0.5, -1.0, 2.0])
    outs = []
    for t in (x, tx):
        a = t.exp()
        b = a * t
        c = a.tanh() + b
        d = (c * a + b * b).sum()
        d.backward()
        outs.append(t.grad)
    assert_close(*outs)


def test_long_chain_has_no_recursion_error():
    x = toolkit.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.sum().backward()
    assert_close(x.grad, torch.tensor([1.0]))


def test_multi_output_op_with_only_some_outputs_used():
    data = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], dtype=np.float32)
    x, tx = toolkit.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    vals, _ = x.sort(dim=1)
    tvals, _ = tx.sort(dim=1)
    (vals[:, 0] * 2).sum().backward()
    (tvals[:, 0] * 2).sum().backward()
    assert_close(x.grad, tx.grad)
    a, b = x.unbind(0)
    ta, tb = tx.unbind(0)
    (a * 3).sum().backward()
    (ta * 3).sum().backward()
    assert_close(x.grad, tx.grad)


def test_saved_tensors_released_after_backward():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    ref = weakref.ref(y)
    z = (y * y).sum()
    node = z.grad_fn.next_functions[0][0]
    del y
    gc.collect()
    assert ref() is not None  # kept alive by the saved tensors of MulBackward0
    z.backward()
    gc.collect()
    assert ref() is None
    assert node._saved is None


def test_retain_graph_keeps_saved_tensors():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    z = (x.exp() * x).sum()
    z.backward(retain_graph=True)
    assert z.grad_fn.next_functions[0][0]._saved is not None
    z.backward()
    assert_close(x.grad, torch.tensor([1.0, 2.0]).exp() * (torch.tensor([2.0, 3.0])) * 2)


def test_saved_tensor_attributes():
    x, tx = pair([1.0, 2.0])
    y, ty = x * x, tx * tx
    assert_close(y.grad_fn._saved_self, ty.grad_fn._saved_self)
    e = x.exp()
    assert_close(e.grad_fn._saved_result, tx.exp())


def test_is_grads_batched():
    x, tx = pair([1.0, 2.0, 3.0])
    y, ty = x * x, tx * tx
    eye = np.eye(3, dtype=np.float32)
    (jac,) = toolkit.autograd.grad(y, x, toolkit.tensor(eye), is_grads_batched=True)
    (tjac,) = torch.autograd.grad(ty, tx, torch.tensor(eye), is_grads_batched=True)
    assert_close(jac, tjac)


def test_integer_and_float_grad_dtypes():
    x = toolkit.tensor([1.0, 2.0], dtype=toolkit.float64, requires_grad=True)
    (x * toolkit.tensor([1, 2])).sum().backward()
    assert x.grad.dtype is toolkit.float64
    assert_close(x.grad, torch.tensor([1.0, 2.0], dtype=torch.float64))
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        toolkit.tensor([1, 2]).requires_grad_()
