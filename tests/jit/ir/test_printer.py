"""Golden prints of graphs in TorchScript's format (the seed's slides), and of ``.code``."""

import inspect

import toolkit
from toolkit.jit import Graph
from toolkit.jit.ir import types as T
from toolkit.jit.ir.printer import format_constant
from toolkit.ops import registry as R


def foo(x, y):
    return 2 * x + y


FOO_LINE = inspect.getsourcelines(foo)[1] + 1

FOO_GRAPH = """\
graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu),
      %y : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %2 : int = prim::Constant[value=2]()
  %3 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %2)
  %4 : int = prim::Constant[value=1]()
  %5 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::add(%3, %y, %4)
  return (%5)
"""


def test_foo_golden():
    t = toolkit.jit.trace(foo, (toolkit.rand(3), toolkit.rand(3)))
    assert t.graph.to_string(source_locations=False) == FOO_GRAPH


def test_foo_source_locations_point_at_user_line():
    t = toolkit.jit.trace(foo, (toolkit.rand(3), toolkit.rand(3)))
    lines = str(t.graph).splitlines()
    assert lines[3].endswith(f"aten::mul(%x, %2) # {__file__}:{FOO_LINE}")
    assert all(n.source == (__file__, FOO_LINE) for n in t.graph.nodes())


def test_foo_code():
    t = toolkit.jit.trace(foo, (toolkit.rand(3), toolkit.rand(3)))
    assert t.code == (
        "def foo(x: Tensor,\n"
        "    y: Tensor) -> Tensor:\n"
        "  return torch.add(torch.mul(x, 2), y)\n"
    )


def test_lstm_cell_like_graph_with_tuple_output_and_list_unpack():
    def cell(x, hx, cx, w_ih, w_hh):
        gates = x.mm(w_ih.t()) + hx.mm(w_hh.t())
        i, f, g, o = gates.chunk(4, 1)
        cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
        hy = o.sigmoid() * cy.tanh()
        return hy, cy

    args = (toolkit.rand(3, 10), toolkit.rand(3, 20), toolkit.rand(3, 20), toolkit.rand(80, 10),
            toolkit.rand(80, 20))
    t = toolkit.jit.trace(cell, args)
    text = t.graph.to_string(source_locations=False)
    assert "%5 : Float(10, 80, strides=[1, 10], requires_grad=0, device=cpu) = aten::t(%w_ih)" in text
    assert "%13 : Tensor[] = aten::chunk(%gates, %11, %12)" in text  # values named after variables, as PyTorch's tracer does
    assert "%o : Float(3, 20, strides=[80, 1], requires_grad=0, device=cpu) = prim::ListUnpack(%13)" in text
    assert "%27 : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::mul(%25, %26)" in text
    assert "  i, f, g, o, = torch.chunk(gates, 4, 1)\n" in t.code  # as TorchScript prints it
    assert text.rstrip().endswith("return (%28)")
    assert "%28 : (Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu), " in text
    hy, cy = t(*args)
    ehy, ecy = cell(*args)
    assert toolkit.equal(hy, ehy) and toolkit.equal(cy, ecy)


def test_fusion_group_subgraph_prints_after_graph():
    f = T.TensorType(toolkit.float32, (None,))
    sub = Graph()
    a = sub.add_input(None, f)
    x = a
    for _ in range(2):
        n = sub.insert("aten::mul", [x, x], op=R.get("mul"))
        n.output().type = f
        n.output().set_debug_name("x")
        x = n.output()
    sub.register_output(x)
    g = Graph()
    inp = g.add_input("x", f)
    fg = g.insert("prim::FusionGroup", [inp])
    fg["Subgraph"] = sub
    fg.output().type = f
    fg.output().set_debug_name("x")
    g.register_output(fg.output())
    assert str(g) == (
        "graph(%x : Float(*)):\n"
        "  %x.1 : Float(*) = prim::FusionGroup_0(%x)\n"
        "  return (%x.1)\n"
        "\n"
        "with prim::FusionGroup_0 = graph(%0 : Float(*)):\n"
        "  %x : Float(*) = aten::mul(%0, %0)\n"
        "  %x.1 : Float(*) = aten::mul(%x, %x)\n"
        "  return (%x.1)\n"
    )
    g.verify()


def test_blocks_print_indented():
    g = Graph()
    c = g.add_input("c", T.BOOL)
    x = g.add_input("x", T.TENSOR)
    n = g.insert("prim::If", [c])
    b0, b1 = n.add_block(), n.add_block()
    with g.inserting_at_end(b0):
        y = g.insert("aten::neg", [x], op=R.get("neg")).output()
    b0.register_output(y)
    b1.register_output(x)
    g.register_output(n.output())
    assert str(g) == (
        "graph(%c : bool,\n"
        "      %x : Tensor):\n"
        "  %2 : Tensor = prim::If(%c)\n"
        "    block0():\n"
        "      %3 : Tensor = aten::neg(%x)\n"
        "      -> (%3)\n"
        "    block1():\n"
        "      -> (%x)\n"
        "  return (%2)\n"
    )


def test_constant_formats():
    assert format_constant(True) == "1"
    assert format_constant(1.0) == "1."
    assert format_constant(0.25) == "0.25"
    assert format_constant('a"b') == '"a\\"b"'
    assert format_constant(toolkit.tensor(2)) == "{2}"
    assert format_constant(toolkit.zeros(2)) == "<Tensor>"
    assert format_constant((1, 2)) == "[1, 2]"
