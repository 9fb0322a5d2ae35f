"""Canonicalization: equivalent graphs print identically; nothing observable moves."""

import toolkit
from toolkit.jit import Graph, Interpreter, PassManager
from toolkit.jit.ir import types as T
from toolkit.jit.passes import canonicalize_graph

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3, dtype=toolkit.float64)


def _build(order: str, waste: int = 0) -> Graph:
    """sin(x) * cos(y) with the two independent branches inserted in either order."""
    g = Graph()
    x = g.add_input("x", F)
    y = g.add_input("y", F)
    for _ in range(waste):  # numbers used up by values that are gone, as after other passes
        g._next_unique()
    if order == "sin_first":
        a = aten(g, "sin", x, typ=F)
        b = aten(g, "cos", y, typ=F)
    else:
        b = aten(g, "cos", y, typ=F)
        a = aten(g, "sin", x, typ=F)
    g.register_output(aten(g, "mul", a, b, typ=F))
    return g


GOLDEN = """\
graph(%x : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %2 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::cos(%y)
  %3 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::sin(%x)
  %4 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%3, %2)
  return (%4)
"""


def test_golden_independent_nodes_ordered_and_renumbered():
    g1, g2 = _build("sin_first"), _build("cos_first", waste=7)
    assert text(g1) != text(g2)
    canonicalize_graph(g1)
    canonicalize_graph(g2)
    g1.verify()
    g2.verify()
    assert text(g1) == text(g2) == GOLDEN
    canonicalize_graph(g1)
    assert text(g1) == GOLDEN  # idempotent


def test_values_and_grads_unchanged():
    xs = [toolkit.randn(2, 3, dtype=toolkit.float64) for _ in range(2)]
    g = _build("sin_first")
    before = Interpreter(g).run(xs)[0]
    g = PassManager(["canonicalize"]).run(g)
    assert toolkit.equal(Interpreter(g).run(xs)[0], before)
    check_same_values_and_grads(lambda x, y: x.sin() * y.cos(), g, xs)


def test_side_effects_keep_their_order():
    # the exp reads x before the in-place add; the sin after it: neither may cross it
    g = Graph()
    x = g.add_input("x", F)
    a = aten(g, "sin", x, typ=F)
    aten(g, "add_", x, g.insert_constant(1.0), g.insert_constant(1), typ=F)
    b = aten(g, "exp", x, typ=F)
    g.register_output(aten(g, "mul", a, b, typ=F))
    canonicalize_graph(g)
    g.verify()
    kinds = [n.kind for n in g.nodes() if n.kind.startswith("aten::")]
    assert kinds == ["aten::sin", "aten::add_", "aten::exp", "aten::mul"]
    xv = toolkit.randn(2, 3, dtype=toolkit.float64)
    expected = xv.sin() * (xv + 1.0).exp()
    assert toolkit.allclose(Interpreter(g).run([xv.clone()])[0], expected)


def test_names_dropped_on_request_for_traced_graphs():
    def f(x, y):
        first = x.sin()
        second = y.cos()
        return first * second

    def g(u, v):
        q = v.cos()
        p = u.sin()
        return p * q

    args = (toolkit.randn(2, 3, dtype=toolkit.float64), toolkit.randn(2, 3, dtype=toolkit.float64))
    a = toolkit.jit.trace(f, args).graph.copy()
    b = toolkit.jit.trace(g, args).graph.copy()
    assert text(a) != text(b)
    canonicalize_graph(a, keep_names=False)
    canonicalize_graph(b, keep_names=False)
    assert text(a) == text(b)
    assert "%0 : Double(2, 3" in text(a)
    check_same_values_and_grads(f, a, list(args))


def test_nested_blocks_are_canonicalized():
    def build(flip: bool) -> Graph:
        g = Graph()
        x = g.add_input("x", F)
        c = g.add_input("c", T.BOOL)
        n = g.insert("prim::If", [c], 0)
        n.add_output(F)
        for _ in range(2):
            b = n.add_block()
            with g.inserting_at_end(b):
                if flip:
                    q, p = aten(g, "cos", x, typ=F), aten(g, "exp", x, typ=F)
                else:
                    p, q = aten(g, "exp", x, typ=F), aten(g, "cos", x, typ=F)
                b.register_output(aten(g, "add", p, q, g.insert_constant(1), typ=F))
        g.register_output(n.output())
        return g

    g1, g2 = build(False), build(True)
    assert text(g1) != text(g2)
    canonicalize_graph(g1)
    canonicalize_graph(g2)
    g1.verify()
    assert text(g1) == text(g2)
    xv = toolkit.randn(2, 3, dtype=toolkit.float64)
    for cond in (True, False):
        check_same_values_and_grads(lambda x: x.exp() + x.cos(), _bind(g1, cond), [xv])


def _bind(g: Graph, cond: bool) -> Graph:
    """A copy of ``g`` with its bool input replaced by a constant, so it takes tensors only."""
    h = g.copy()
    with h.inserting_before(h.nodes()[0]):
        k = h.insert_constant(cond)
    h.inputs[1].replace_all_uses_with(k)
    del h.block.inputs[1]
    h.verify()
    return h
