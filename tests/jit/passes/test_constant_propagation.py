"""Constant propagation: pure deterministic nodes over constants are evaluated by the registry's kernels."""

import numpy as np

import toolkit
from toolkit.jit import Graph
from toolkit.jit.ir import types as T
from toolkit.jit.passes import propagate_constants, run_passes

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3)
F6 = ftype(6)


def test_golden_folds_tensor_arithmetic_and_lists():
    g = Graph()
    x = g.add_input("x", F)
    c = g.insert_constant(toolkit.arange(6.0))
    two = g.insert_constant(2)
    shape = g.insert("prim::ListConstruct", [two, g.insert_constant(3)]).output()
    shape.type = T.ListType(T.INT)
    doubled = aten(g, "mul", c, two, typ=F6)
    v = aten(g, "view", doubled, shape, typ=F)
    g.register_output(aten(g, "add", x, v, g.insert_constant(1), typ=F, name_as="out"))
    propagate_constants(g)
    g.verify()
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : Float(6, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
  %9 : int[] = prim::Constant[value=[2, 3]]()
  %10 : Float(6, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %11 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %7 : int = prim::Constant[value=1]()
  %out : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%x, %11, %7)
  return (%out)
"""
    folded = g.nodes()[5]["value"]
    np.testing.assert_array_equal(folded.numpy(), (np.arange(6.0) * 2).reshape(2, 3))
    assert not folded.requires_grad


def test_random_in_place_and_returned_values_are_not_folded():
    g = Graph()
    size = g.insert_constant([2, 3])
    none = g.insert_constant(None)
    r = aten(g, "rand", size, none, none, none, none, none, g.insert_constant(False), typ=F)
    z = aten(g, "zeros", size, none, none, none, none, g.insert_constant(False), typ=F, name_as="z")
    aten(g, "add_", z, r, g.insert_constant(1), typ=F)  # z is written: folding it would share the write
    o = aten(g, "ones", size, none, none, none, none, g.insert_constant(False), typ=F, name_as="o")
    g.register_output(g.insert("prim::TupleConstruct", [z, o]).output())
    before = text(g)
    propagate_constants(g)
    g.verify()
    assert text(g) == before


def test_failing_node_is_left_for_run_time():
    g = Graph()
    a = g.insert_constant(toolkit.ones(2))
    b = g.insert_constant(toolkit.ones(3))
    s = aten(g, "add", a, b, g.insert_constant(1))
    g.register_output(aten(g, "neg", s))
    before = text(g)
    propagate_constants(g)
    assert text(g) == before


def test_large_results_are_not_folded():
    g = Graph()
    size = g.insert_constant([200, 200])
    none = g.insert_constant(None)
    o = aten(g, "ones", size, none, none, none, none, g.insert_constant(False))
    g.register_output(aten(g, "neg", o))
    propagate_constants(g, max_elements=1000)
    assert "aten::ones" in text(g)
    propagate_constants(g)
    assert "aten::ones" not in text(g) and "aten::neg" in text(g)  # neg's result is returned


def test_traced_function_same_values_and_grads():
    def f(x):
        scale = toolkit.ones(3, dtype=toolkit.float64) * 2 + 1
        return (x * scale).sin()

    x = toolkit.randn(4, 3, dtype=toolkit.float64)
    t = toolkit.jit.trace(f, (x,))
    g = run_passes(t.graph.copy(), ["constant_propagation", "dce"])
    assert [n.kind for n in g.nodes()] == ["prim::Constant", "aten::mul", "aten::sin"]
    check_same_values_and_grads(f, g, [x])


def _branch_on(g: Graph, cond, x):
    """``x * 2 if cond else x`` as a prim::If."""
    n = g.insert("prim::If", [cond])
    n.output().type = F
    taken = n.add_block()
    with g.inserting_at_end(taken):
        taken.register_output(aten(g, "mul", x, g.insert_constant(2), typ=F, name_as="doubled"))
    n.add_block().register_output(x)
    return n.output()


def test_builtin_on_constants_folds_and_if_on_a_constant_becomes_its_branch():
    import toolkit.jit.frontend.script  # noqa: F401  (registers scripted code's builtins such as aten::__not__)

    g = Graph()
    x = g.add_input("x", F)
    negated = g.insert("aten::__not__", [g.insert_constant(False)]).output()
    negated.type = T.BOOL
    g.register_output(_branch_on(g, negated, x))
    xs = toolkit.arange(6.0).reshape(2, 3)
    expected = toolkit.jit.Interpreter(g).run([xs])[0]
    run_passes(g, ["constant_propagation", "dce"])
    g.verify()
    assert [n.kind for n in g.nodes() if n.kind != "prim::Constant"] == ["aten::mul"]
    assert len(x.uses) == 1  # the dropped branch's use of x is gone too
    assert toolkit.equal(toolkit.jit.Interpreter(g).run([xs])[0], expected)


def test_if_on_a_run_time_condition_stays():
    g = Graph()
    x = g.add_input("x", F)
    cond = g.add_input("cond", T.BOOL)
    g.register_output(_branch_on(g, cond, x))
    before = text(g)
    propagate_constants(g)
    assert text(g) == before
