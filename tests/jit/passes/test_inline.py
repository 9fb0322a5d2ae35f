"""Inlining subgraph nodes (``prim::FusionGroup``) back into their parent graph."""

import pytest

import toolkit
from toolkit.jit import Graph, PassManager
from toolkit.jit.ir import types as T
from toolkit.jit.passes import canonicalize_graph, inline_subgraph, inline_subgraphs

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3, dtype=toolkit.float64)


def _plain() -> Graph:
    """(x.sin() * y).exp() + x, as the graph before fusion."""
    g = Graph()
    x = g.add_input("x", F)
    y = g.add_input("y", F)
    m = aten(g, "mul", aten(g, "sin", x, typ=F), y, typ=F)
    e = aten(g, "exp", m, typ=F, name_as="e")
    g.register_output(aten(g, "add", e, x, g.insert_constant(1), typ=F))
    return g


def _ref(x, y):
    return (x.sin() * y).exp() + x


def _group(inner: Graph, inputs, kind="prim::FusionGroup", out_type=F):
    g = inputs[0].graph
    n = g.insert(kind, inputs, 0)
    for _ in inner.outputs:
        n.add_output(out_type)
    n["Subgraph"] = inner
    return n


def _fused() -> Graph:
    """The same computation with sin, mul and exp in a fusion group."""
    sub = Graph()
    a = sub.add_input(None, T.TENSOR)
    b = sub.add_input(None, T.TENSOR)
    sub.register_output(aten(sub, "exp", aten(sub, "mul", aten(sub, "sin", a), b)))
    g = Graph()
    x = g.add_input("x", F)
    y = g.add_input("y", F)
    grp = _group(sub, [x, y])
    grp.output().set_debug_name("e")
    g.register_output(aten(g, "add", grp.output(), x, g.insert_constant(1), typ=F))
    return g


def test_golden_inline_fusion_group():
    g = _fused()
    g.verify()
    assert "prim::FusionGroup_0" in text(g)
    inline_subgraphs(g)
    g.verify()
    assert text(g) == """\
graph(%x : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %5 : Tensor = aten::sin(%x)
  %6 : Tensor = aten::mul(%5, %y)
  %e : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::exp(%6)
  %3 : int = prim::Constant[value=1]()
  %4 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%e, %x, %3)
  return (%4)
"""


def test_inlining_undoes_grouping():
    fused = PassManager(["inline_subgraphs", "canonicalize"]).run(_fused())
    plain = canonicalize_graph(_plain())
    # the same nodes in the same order; only the inner values' types differ (the subgraph's are generic)
    assert [n.kind for n in fused.nodes()] == [n.kind for n in plain.nodes()]
    assert text(fused).replace("Tensor = ", "") == text(plain).replace(
        "Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::sin", "aten::sin").replace(
        "Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul", "aten::mul")


def test_values_and_grads_after_inlining():
    xs = [toolkit.randn(2, 3, dtype=toolkit.float64) for _ in range(2)]
    g = PassManager(["inline_subgraphs", "dce"]).run(_fused())
    assert "FusionGroup" not in text(g)
    check_same_values_and_grads(_ref, g, xs)


def test_nested_groups_and_groups_in_blocks():
    inner = Graph()
    a = inner.add_input(None, T.TENSOR)
    inner.register_output(aten(inner, "sin", a))
    outer = Graph()
    b = outer.add_input(None, T.TENSOR)
    c = outer.add_input(None, T.TENSOR)
    grp = _group(inner, [b], out_type=T.TENSOR)
    outer.register_output(aten(outer, "mul", grp.output(), c))

    g = Graph()
    x = g.add_input("x", F)
    y = g.add_input("y", F)
    cond = g.insert_constant(True)
    n = g.insert("prim::If", [cond], 0)
    n.add_output(F)
    b0 = n.add_block()
    with g.inserting_at_end(b0):
        b0.register_output(_group(outer, [x, y]).output())
    b1 = n.add_block()
    b1.register_output(x)
    g.register_output(n.output())
    g.verify()
    inline_subgraphs(g)
    g.verify()
    assert "FusionGroup" not in text(g)
    kinds = [m.kind for m in g.all_nodes()]
    assert kinds == ["prim::Constant", "prim::If", "aten::sin", "aten::mul"]
    xs = [toolkit.randn(2, 3, dtype=toolkit.float64) for _ in range(2)]
    check_same_values_and_grads(lambda x, y: x.sin() * y, g, xs)


def test_kinds_filter_and_arity_error():
    g = _fused()
    inline_subgraphs(g, kinds=["prim::DifferentiableGraph"])
    assert "prim::FusionGroup" in text(g)
    grp = next(n for n in g.nodes() if n.kind == "prim::FusionGroup")
    grp["Subgraph"].register_output(grp["Subgraph"].inputs[0])
    with pytest.raises(RuntimeError, match="returns 2 values, but the node has 2 inputs and 1 outputs"):
        inline_subgraph(g, grp)


def test_passthrough_output():
    """A subgraph that returns one of its inputs: uses of the group's output read the node's input."""
    sub = Graph()
    a = sub.add_input(None, T.TENSOR)
    sub.register_output(a)
    g = Graph()
    x = g.add_input("x", F)
    grp = _group(sub, [x])
    g.register_output(aten(g, "neg", grp.output(), typ=F))
    inline_subgraphs(g)
    g.verify()
    assert g.nodes()[0].inputs[0] is x and len(g.nodes()) == 1
