"""Dead code elimination: unused pure nodes go; in-place, random and unknown prim nodes stay."""

import toolkit
from toolkit.jit import Graph
from toolkit.jit.ir import types as T
from toolkit.jit.passes import eliminate_dead_code, run_passes

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3)


def test_golden_keeps_side_effects_drops_unused():
    g = Graph()
    x = g.add_input("x", F)
    one = g.insert_constant(1)
    a = aten(g, "add", x, x, one, typ=F, name_as="a")
    aten(g, "exp", x, typ=F, name_as="unused")
    aten(g, "neg", aten(g, "sin", x, typ=F), typ=F)  # a dead chain
    aten(g, "add_", x, x, one, typ=F)
    aten(g, "bernoulli", x, g.insert_constant(None), typ=F)
    g.insert("prim::Print", [x], 0)
    g.register_output(a)
    eliminate_dead_code(g)
    g.verify()
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%x, %x, %1)
  %6 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add_(%x, %x, %1)
  %7 : NoneType = prim::Constant()
  %8 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::bernoulli(%x, %7)
   = prim::Print(%x)
  return (%a)
"""


def test_nested_blocks_and_unused_if():
    g = Graph()
    x = g.add_input("x", F)
    c = g.add_input("c", T.BOOL)
    used = g.insert("prim::If", [c], 0)
    used.add_output(F).set_debug_name("y")
    dead = g.insert("prim::If", [c], 0)
    dead.add_output(F)
    for node in (used, dead):
        for _ in range(2):
            b = node.add_block()
            with g.inserting_at_end(b):
                aten(g, "cos", x, typ=F)  # dead inside the block
                b.register_output(aten(g, "exp", x, typ=F))
    g.register_output(used.output())
    eliminate_dead_code(g)
    g.verify()
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %c : bool):
  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::If(%c)
    block0():
      %5 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::exp(%x)
      -> (%5)
    block1():
      %7 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::exp(%x)
      -> (%7)
  return (%y)
"""


def test_if_with_side_effect_inside_is_kept():
    g = Graph()
    x = g.add_input("x", F)
    c = g.add_input("c", T.BOOL)
    n = g.insert("prim::If", [c], 0)
    for _ in range(2):
        b = n.add_block()
        with g.inserting_at_end(b):
            aten(g, "mul_", x, x, typ=F)
    g.register_output(x)
    before = text(g)
    eliminate_dead_code(g)
    g.verify()
    assert text(g) == before


def test_traced_function_still_computes_the_same():
    def f(x, y):
        z = x * y
        w = z.exp()  # noqa: F841  (unused on purpose)
        return z.sin() + y

    x, y = toolkit.randn(3, 4, dtype=toolkit.float64), toolkit.randn(3, 4, dtype=toolkit.float64)
    t = toolkit.jit.trace(f, (x, y))
    assert "aten::exp" not in text(t.graph)  # the tracer drops dead nodes itself, as PyTorch's does
    g = run_passes(t.graph.copy(), ["dce"])
    assert [n.kind for n in g.nodes()] == [n.kind for n in t.graph.nodes()]
    check_same_values_and_grads(f, g, [x, y])


def test_an_unused_unchecked_cast_goes_and_a_write_through_one_stays():
    """A cast only retypes its input: dead when unused, and a write to its output writes the input."""
    g = Graph()
    x = g.add_input("x", T.OptionalType(F))
    dead = g.insert("prim::unchecked_cast", [x])
    dead.output().type = F
    live = g.insert("prim::unchecked_cast", [x])
    live.output().type = F
    one = g.insert_constant(1)
    aten(g, "add_", live.output(), live.output(), one, typ=F)  # writes the input through the cast
    g.register_output(g.insert_constant(None))
    eliminate_dead_code(g)
    g.verify()
    kinds = [n.kind for n in g.nodes()]
    assert kinds.count("prim::unchecked_cast") == 1 and "aten::add_" in kinds
