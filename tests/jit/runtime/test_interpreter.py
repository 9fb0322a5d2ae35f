"""The interpreter: runs graphs with the registry's ops through dispatch, frees values, names failing nodes."""

import gc
import inspect
import weakref

import numpy as np
import pytest

import toolkit
from toolkit.jit import Graph, Interpreter
from toolkit.jit.ir import types as T
from toolkit.ops import registry as R


def _add_then_mul(x, y):
    z = x + y
    return z * y


def test_error_names_node_and_user_line():
    t = toolkit.jit.trace(_add_then_mul, (toolkit.rand(3), toolkit.rand(3)))
    line = inspect.getsourcelines(_add_then_mul)[1] + 1
    with pytest.raises(RuntimeError, match=rf"(?s)add.*while executing %z : .* = aten::add\(%x, %y, %\d+\) at "
                                           rf"{__file__}:{line}$"):
        t(toolkit.rand(3), toolkit.rand(4))


def test_error_keeps_exception_type():
    g = Graph()
    x = g.add_input("x", T.TENSOR)
    d = g.insert_constant(5)
    n = g.insert("aten::select", [x, d, g.insert_constant(0)], op=R.get("select"))
    n.source = ("model.py", 12)
    g.register_output(n.output())
    with pytest.raises(IndexError, match=r"(?s)while executing .*aten::select.* at model.py:12"):
        Interpreter(g).run([toolkit.rand(2)])


def test_autograd_through_interpreter_matches_eager_including_double_backward():
    def f(x, w):
        return (x.mm(w).tanh() * 3).sum(1)

    x, w = toolkit.randn(3, 4, dtype=toolkit.float64), toolkit.randn(4, 2, dtype=toolkit.float64)
    t = toolkit.jit.trace(f, (x, w))
    xt, wt = x.clone().requires_grad_(), w.clone().requires_grad_()
    (g_t,) = toolkit.autograd.grad(t(xt, wt).sum(), wt, create_graph=True)
    xe, we = x.clone().requires_grad_(), w.clone().requires_grad_()
    (g_e,) = toolkit.autograd.grad(f(xe, we).sum(), we, create_graph=True)
    np.testing.assert_allclose(g_t.detach().numpy(), g_e.detach().numpy(), rtol=1e-12)
    (gg_t,) = toolkit.autograd.grad(g_t.sum(), xt)
    (gg_e,) = toolkit.autograd.grad(g_e.sum(), xe)
    np.testing.assert_allclose(gg_t.numpy(), gg_e.numpy(), rtol=1e-12)
    assert toolkit.autograd.gradcheck(t, (xt, wt))


def test_values_are_freed_after_last_use():
    def chain(x):
        a = x * 2
        b = a + 1
        c = b.exp()
        return c.neg()

    t = toolkit.jit.trace(chain, toolkit.rand(1000))
    seen = []

    def on_node(node, values):
        seen.extend(weakref.ref(v) for v in values if isinstance(v, toolkit.Tensor))
        gc.collect()
        alive = [r for r in seen[:-1] if r() is not None]
        assert len(alive) <= 1, f"{len(alive)} intermediates alive after {node.kind}"

    x = toolkit.rand(1000)
    out = t._interpreter.run([x], on_node)
    assert len(seen) == 4 and toolkit.allclose(out[0], chain(x))


def test_if_and_loop_blocks_run():
    g = Graph()
    c = g.add_input("c", T.BOOL)
    x = g.add_input("x", T.TENSOR)
    trip = g.insert_constant(3)
    true = g.insert_constant(True)
    loop = g.insert("prim::Loop", [trip, true, x])
    body = loop.add_block()
    body.add_input("i", T.INT)
    xi = body.add_input("x", T.TENSOR)
    with g.inserting_at_end(body):
        y = g.insert("aten::mul", [xi, xi], op=R.get("mul")).output()
    body.register_output(true)
    body.register_output(y)
    branch = g.insert("prim::If", [c])
    b0, b1 = branch.add_block(), branch.add_block()
    with g.inserting_at_end(b0):
        neg = g.insert("aten::neg", [loop.output()], op=R.get("neg")).output()
    b0.register_output(neg)
    b1.register_output(loop.output())
    g.register_output(branch.output())
    g.verify()
    run = Interpreter(g).run
    two = toolkit.full((2,), 2.0)
    assert toolkit.equal(run([True, two])[0], toolkit.full((2,), -256.0))
    assert toolkit.equal(run([False, two])[0], toolkit.full((2,), 256.0))


def test_wrong_number_of_inputs():
    t = toolkit.jit.trace(_add_then_mul, (toolkit.rand(3), toolkit.rand(3)))
    with pytest.raises(RuntimeError, match="the graph takes 2 inputs, but 1 were given"):
        t(toolkit.rand(3))
