"""Common subexpression elimination: pure repeats merge; random, in-place and mutated values do not."""

import toolkit
from toolkit.jit import Graph
from toolkit.jit.passes import eliminate_common_subexpressions, run_passes

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3)


def test_golden_merges_same_op_inputs_and_attributes():
    g = Graph()
    x = g.add_input("x", F)
    y = g.add_input("y", F)
    one_a, one_b, two = g.insert_constant(1), g.insert_constant(1), g.insert_constant(2)
    a = aten(g, "add", x, y, one_a, typ=F, name_as="a")
    b = aten(g, "add", x, y, one_b, typ=F, name_as="b")  # same once the constants merge
    c = aten(g, "add", x, y, two, typ=F, name_as="c")  # different alpha
    d = aten(g, "add", y, x, one_a, typ=F, name_as="d")  # different input order
    g.register_output(g.insert("prim::TupleConstruct", [a, b, c, d]).output())
    eliminate_common_subexpressions(g)
    g.verify()
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %2 : int = prim::Constant[value=1]()
  %4 : int = prim::Constant[value=2]()
  %a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%x, %y, %2)
  %c : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%x, %y, %4)
  %d : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%y, %x, %2)
  %9 : Tensor = prim::TupleConstruct(%a, %a, %c, %d)
  return (%9)
"""


def test_constants_of_different_types_stay_apart():
    g = Graph()
    vals = [g.insert_constant(1), g.insert_constant(1.0), g.insert_constant(True), g.insert_constant(1)]
    g.register_output(g.insert("prim::TupleConstruct", vals).output())
    eliminate_common_subexpressions(g)
    g.verify()
    assert [n.kind for n in g.nodes()].count("prim::Constant") == 3


def test_random_ops_do_not_merge():
    g = Graph()
    x = g.add_input("x", F)
    none = g.insert_constant(None)
    a = aten(g, "bernoulli", x, none, typ=F)
    b = aten(g, "bernoulli", x, none, typ=F)
    g.register_output(aten(g, "mul", a, b, typ=F))
    eliminate_common_subexpressions(g)
    g.verify()
    assert [n.kind for n in g.nodes()].count("aten::bernoulli") == 2


def test_in_place_write_is_a_barrier_and_mutated_values_do_not_merge():
    g = Graph()
    x = g.add_input("x", F)
    a = aten(g, "exp", x, typ=F, name_as="a")
    b = aten(g, "exp", x, typ=F, name_as="b")  # would equal a, but a is written below
    aten(g, "mul_", a, a, typ=F)
    c = aten(g, "sin", x, typ=F, name_as="c")
    aten(g, "neg_", x, typ=F)  # x changes: sin(x) after it is another value
    d = aten(g, "sin", x, typ=F, name_as="d")
    g.register_output(g.insert("prim::TupleConstruct", [a, b, c, d]).output())
    before = text(g)
    eliminate_common_subexpressions(g)
    g.verify()
    assert text(g) == before


def test_traced_function_same_values_and_grads():
    def f(x, y):
        return (x * y).tanh() + (x * y).tanh() * (x * y)

    x, y = toolkit.randn(3, 4, dtype=toolkit.float64), toolkit.randn(3, 4, dtype=toolkit.float64)
    t = toolkit.jit.trace(f, (x, y))
    g = run_passes(t.graph.copy(), ["cse", "dce"])
    kinds = [n.kind for n in g.nodes()]
    assert kinds.count("aten::mul") == 2 and kinds.count("aten::tanh") == 1
    check_same_values_and_grads(f, g, [x, y])


def _lengths(xs: list[toolkit.Tensor], i: int) -> int:
    unused = len(xs) * 3  # noqa: F841 - dead: a pure builtin whose result nobody reads
    return len(xs) + len(xs) + abs(i) + abs(i) + min(i, 2) + min(i, 2)


def test_pure_builtins_merge_and_unused_ones_drop():
    # len, abs, min are pure by their schemas (no alias annotation, no CONSERVATIVE effects): repeats merge and
    # a result nobody reads is dropped, as PyTorch's passes do with aten::len and prim::min.
    fn = toolkit.jit.script(_lengths)
    g = fn.graph.copy()
    run_passes(g, ["dce", "cse", "dce"])
    g.verify()
    kinds = [n.kind for n in g.nodes()]
    assert (kinds.count("aten::len"), kinds.count("prim::abs"), kinds.count("prim::min")) == (1, 1, 1), kinds
    xs = [toolkit.ones(2), toolkit.ones(3)]
    assert fn(xs, -4) == _lengths(xs, -4) == 2 + 2 + 4 + 4 + -4 + -4
