"""Peephole rewrites: identities, inverse transposes, no-op views and copies, only when types match exactly."""

import toolkit
from toolkit.jit import Graph
from toolkit.jit.passes import peephole_pass, run_passes

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3)
FT = ftype(3, 2, strides=(1, 3))


def _identity_graph(const, kind="mul", typ_x=F, typ_out=F, extra=()):
    g = Graph()
    x = g.add_input("x", typ_x)
    c = g.insert_constant(const)
    out = aten(g, kind, x, c, *[g.insert_constant(e) for e in extra], typ=typ_out)
    g.register_output(aten(g, "exp", out, typ=typ_out, name_as="y"))
    return g


def test_golden_identities():
    g = Graph()
    x = g.add_input("x", F)
    one, zero = g.insert_constant(1), g.insert_constant(0.0)
    a = aten(g, "mul", x, one, typ=F)
    b = aten(g, "add", zero, a, one, typ=F)
    c = aten(g, "sub", b, zero, g.insert_constant(3), typ=F)
    d = aten(g, "div", c, g.insert_constant(toolkit.ones(3)), g.insert_constant(None), typ=F)
    g.register_output(aten(g, "exp", d, typ=F, name_as="y"))
    peephole_pass(g)
    g.verify()
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %2 : float = prim::Constant[value=0.]()
  %5 : int = prim::Constant[value=3]()
  %7 : Float(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %8 : NoneType = prim::Constant()
  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::exp(%x)
  return (%y)
"""


def test_identities_that_would_change_the_result_stay():
    i32 = ftype(2, 3, dtype=toolkit.int32)
    cases = [
        _identity_graph(2),  # not the identity
        _identity_graph(1.0, typ_x=i32, typ_out=F),  # int * 1.0 promotes to float
        _identity_graph(toolkit.ones(4, 2, 3), typ_out=ftype(4, 2, 3)),  # broadcasting grows the shape
        _identity_graph(1, kind="div", typ_x=i32, typ_out=F, extra=(None,)),  # true division makes floats
        _identity_graph(1, kind="div", extra=("floor",)),  # rounding mode set
        _identity_graph(0, kind="add", extra=(2,)),  # x + 0 * 2 is still x ...
    ]
    for g in cases[:-1]:
        before = text(g)
        peephole_pass(g)
        g.verify()
        assert text(g) == before
    peephole_pass(cases[-1])  # ... so alpha does not matter when the constant is ``other``
    assert "aten::add" not in text(cases[-1])


def test_alpha_matters_when_the_constant_is_self():
    g = Graph()
    x = g.add_input("x", F)
    out = aten(g, "add", g.insert_constant(0), x, g.insert_constant(2), typ=F)
    g.register_output(aten(g, "exp", out, typ=F))
    before = text(g)
    peephole_pass(g)
    assert text(g) == before


def test_golden_double_transpose_and_noop_views():
    g = Graph()
    x = g.add_input("x", F)
    a = aten(g, "t", aten(g, "t", x, typ=FT), typ=F)
    neg = g.insert_constant(-1)
    b = aten(g, "transpose", aten(g, "transpose", a, g.insert_constant(0), neg, typ=FT), neg,
             g.insert_constant(0), typ=F)
    shape = g.insert_constant([2, 3])
    c = aten(g, "view", b, shape, typ=F)
    d = aten(g, "transpose", c, g.insert_constant(0), g.insert_constant(1), typ=FT, name_as="kept")
    g.register_output(d)
    peephole_pass(g)  # the inner views become dead: ``dce`` removes them
    g.verify()
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu) = aten::t(%x)
  %3 : int = prim::Constant[value=-1]()
  %4 : int = prim::Constant[value=0]()
  %5 : Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu) = aten::transpose(%x, %4, %3)
  %6 : int = prim::Constant[value=0]()
  %8 : int[] = prim::Constant[value=[2, 3]]()
  %10 : int = prim::Constant[value=0]()
  %11 : int = prim::Constant[value=1]()
  %kept : Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu) = aten::transpose(%x, %10, %11)
  return (%kept)
"""


def test_different_transposes_stay():
    g = Graph()
    x = g.add_input("x", ftype(2, 3, 4))
    a = aten(g, "transpose", x, g.insert_constant(0), g.insert_constant(1), typ=ftype(3, 2, 4, strides=(4, 12, 1)))
    b = aten(g, "transpose", a, g.insert_constant(1), g.insert_constant(2), typ=ftype(3, 4, 2, strides=(4, 1, 12)))
    g.register_output(b)
    before = text(g)
    peephole_pass(g)
    assert text(g) == before


def test_copies_are_kept_when_written_or_returned():
    def graph(write: bool, returned: bool):
        g = Graph()
        x = g.add_input("x", F)
        c = aten(g, "clone", x, g.insert_constant(None), typ=F, name_as="c")
        if write:
            aten(g, "mul_", c, g.insert_constant(2), typ=F)
        g.register_output(c if returned else aten(g, "exp", c, typ=F))
        return g

    for write, returned in [(True, False), (False, True)]:
        g = graph(write, returned)
        before = text(g)
        peephole_pass(g)
        assert text(g) == before
    g = graph(False, False)
    peephole_pass(g)
    g.verify()
    assert "aten::clone" not in text(g)


def test_identity_not_applied_to_values_written_in_place():
    g = Graph()
    x = g.add_input("x", F)
    y = aten(g, "mul", x, g.insert_constant(1), typ=F, name_as="y")
    aten(g, "add_", y, x, g.insert_constant(1), typ=F)  # y is a fresh tensor here; x must not change
    g.register_output(aten(g, "exp", x, typ=F))
    before = text(g)
    peephole_pass(g)
    assert text(g) == before


def test_traced_function_same_values_and_grads():
    def f(x, y):
        a = (x * 1 + 0).t().t()
        b = (a - 0) / 1
        return (b * y).transpose(0, 1).transpose(1, 0).tanh()

    x, y = toolkit.randn(3, 4, dtype=toolkit.float64), toolkit.randn(3, 4, dtype=toolkit.float64)
    t = toolkit.jit.trace(f, (x, y))
    g = run_passes(t.graph.copy(), ["peephole", "dce"])
    assert [n.kind for n in g.nodes()] == ["aten::mul", "aten::tanh"]
    check_same_values_and_grads(f, g, [x, y])
