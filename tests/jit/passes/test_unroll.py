"""Loop unrolling: constant-count loops become copies of their body with carried values threaded through."""

import toolkit
from toolkit.jit import Graph, Interpreter, PassManager
from toolkit.jit.ir import types as T
from toolkit.jit.passes import unroll_loops
from toolkit.jit.passes.unroll import constant_trip_count

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3, dtype=toolkit.float64)


def _loop(g: Graph, trip, carried, cond=True, body_cond=True):
    """A ``prim::Loop`` over ``carried``; returns (loop node, body block)."""
    n = g.insert("prim::Loop", [trip, g.insert_constant(cond), *carried], 0)
    for v in carried:
        n.add_output(v.type)
    b = n.add_block()
    b.add_input("i", T.INT)
    for v in carried:
        b.add_input(None, v.type)
    return n, b, body_cond


def _finish(g, n, b, body_cond, outs):
    with g.inserting_at_end(b):
        b.register_output(g.insert_constant(body_cond))
    for v in outs:
        b.register_output(v)
    return n


def _power_loop(trip: int, body_cond=True):
    """y = x; for i in range(trip): y = y * x + i  (the counter is used)."""
    g = Graph()
    x = g.add_input("x", F)
    n, b, c = _loop(g, g.insert_constant(trip), [x])
    with g.inserting_at_end(b):
        y = aten(g, "mul", b.inputs[1], x, typ=F)
        y = aten(g, "add", y, b.inputs[0], g.insert_constant(1), typ=F)
    _finish(g, n, b, body_cond, [y])
    n.output().set_debug_name("y")
    g.register_output(n.output())
    return g


def _power_ref(trip):
    def fn(x):
        y = x
        for i in range(trip):
            y = y * x + i
        return y
    return fn


def test_golden_unroll_threads_carried_values():
    g = _power_loop(2)
    unroll_loops(g)
    g.verify()
    assert text(g) == """\
graph(%x : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=2]()
  %2 : bool = prim::Constant[value=1]()
  %10 : int = prim::Constant[value=0]()
  %11 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%x, %x)
  %12 : int = prim::Constant[value=1]()
  %13 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%11, %10, %12)
  %14 : bool = prim::Constant[value=1]()
  %15 : int = prim::Constant[value=1]()
  %16 : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%13, %x)
  %17 : int = prim::Constant[value=1]()
  %y : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%16, %15, %17)
  %19 : bool = prim::Constant[value=1]()
  return (%y)
"""
    PassManager(["dce", "canonicalize"]).run(g)
    assert "prim::Loop" not in text(g) and text(g).count("aten::mul") == 2


def test_values_and_grads_match_the_loop():
    x = toolkit.randn(2, 3, dtype=toolkit.float64)
    for trip in (0, 1, 3):
        g = _power_loop(trip)
        before = Interpreter(g).run([x])[0]
        check_same_values_and_grads(_power_ref(trip), g, [x])
        pm = PassManager(["unroll_loops", "dce"])
        g = pm.run(g)
        assert "prim::Loop" not in text(g)
        assert text(g).count("aten::mul") == trip
        after = Interpreter(g).run([x])[0]
        assert toolkit.equal(before, after)
        check_same_values_and_grads(_power_ref(trip), g, [x])


def test_zero_trips_returns_the_initial_value():
    g = _power_loop(0)
    unroll_loops(g)
    g.verify()
    assert g.outputs[0] is g.inputs[0]


def test_not_unrolled_when_not_constant():
    # a trip count that is a graph input
    g = Graph()
    x = g.add_input("x", F)
    trip = g.add_input("n", T.INT)
    n, b, c = _loop(g, trip, [x])
    with g.inserting_at_end(b):
        y = aten(g, "exp", b.inputs[1], typ=F)
    _finish(g, n, b, c, [y])
    g.register_output(n.output())
    assert constant_trip_count(n) is None
    before = text(g)
    unroll_loops(g)
    assert text(g) == before
    # a body whose condition is not constant true (a while loop) stays too
    g2 = _power_loop(3, body_cond=False)
    loop = next(m for m in g2.nodes() if m.kind == "prim::Loop")
    assert constant_trip_count(loop) is None
    before = text(g2)
    unroll_loops(g2)
    assert text(g2) == before


def test_too_large_loop_is_kept():
    g = _power_loop(100)
    before = text(g)
    unroll_loops(g, max_nodes=50)
    assert text(g) == before
    unroll_loops(g)
    assert "prim::Loop" not in text(g)


def test_nested_loops_flatten_and_keep_values():
    # y = x; for i in range(2): for j in range(3): y = y.sin() * x
    g = Graph()
    x = g.add_input("x", F)
    outer, ob, oc = _loop(g, g.insert_constant(2), [x])
    with g.inserting_at_end(ob):
        inner, ib, ic = _loop(g, g.insert_constant(3), [ob.inputs[1]])
        with g.inserting_at_end(ib):
            y = aten(g, "mul", aten(g, "sin", ib.inputs[1], typ=F), x, typ=F)
        _finish(g, inner, ib, ic, [y])
    _finish(g, outer, ob, oc, [inner.output()])
    g.register_output(outer.output())
    g.verify()

    def ref(x):
        y = x
        for _ in range(6):
            y = y.sin() * x
        return y

    xv = toolkit.randn(2, 3, dtype=toolkit.float64)
    check_same_values_and_grads(ref, g, [xv])
    g = PassManager(["unroll_loops", "dce"]).run(g)
    assert "prim::Loop" not in text(g)
    assert text(g).count("aten::sin") == 6
    check_same_values_and_grads(ref, g, [xv])


def test_loop_with_side_effects_keeps_order():
    # for i in range(2): x.add_(1)  -- unrolled into two in-place adds, in order
    g = Graph()
    x = g.add_input("x", F)
    n, b, c = _loop(g, g.insert_constant(2), [])
    with g.inserting_at_end(b):
        aten(g, "add_", x, g.insert_constant(1.5), g.insert_constant(1), typ=F)
    _finish(g, n, b, c, [])
    g.register_output(x)
    xv = toolkit.zeros(2, 3, dtype=toolkit.float64)
    g = PassManager(["unroll_loops", "dce"]).run(g)
    assert text(g).count("aten::add_") == 2
    out = Interpreter(g).run([xv])[0]
    assert out is xv and float(xv.sum()) == 18.0
