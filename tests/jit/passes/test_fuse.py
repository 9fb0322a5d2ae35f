"""The fusion pass: before/after graphs, the rules of growing groups, nested blocks, and random elementwise graphs.

Hand-built graphs pin down what ``fuse`` does (groups grow backwards from a
consumer; a producer used before the group's place stays out; one shape per
group; constants copied in; values used later become group outputs; blocks
fused in place); traced functions and hypothesis-drawn elementwise programs
check that the fused plan computes what eager mode does, with kernel counts.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.jit import Graph, Interpreter, verify
from toolkit.jit.codegen.elementwise import fusibility
from toolkit.jit.ir import types as T
from toolkit.jit.passes.fuse import fuse, fusion_groups

from ..control_flow_graphs import if_node, loop
from ..frontend.test_golden import _lstm_args, lstm
from ..fusion_helpers import assert_close_chain, assert_same, fused_nodes, groups
from ..pass_helpers import aten, ftype, text

F = ftype(2, 3)


def _verify_all(g: Graph) -> None:
    verify(g)
    for n in fusion_groups(g):
        verify(n["Subgraph"])


def _run(g: Graph, inputs: list) -> list:
    return Interpreter(g).run(inputs)


def _x(*shape, seed=0, dtype=toolkit.float32):
    return toolkit.tensor(np.random.default_rng(seed).standard_normal(shape)).to(dtype)


def test_golden_chain_becomes_one_group_with_constants_copied_in():
    g = Graph()
    x, y = g.add_input("x", F), g.add_input("y", F)
    a = aten(g, "mul", x, y, typ=F, name_as="a")
    b = aten(g, "add", a, g.insert_constant(1.5), g.insert_constant(1), typ=F, name_as="b")
    g.register_output(aten(g, "sigmoid", b, typ=F, name_as="c"))
    before = g.copy()
    fuse(g)
    _verify_all(g)
    assert text(g) == """\
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %3 : float = prim::Constant[value=1.5]()
  %4 : int = prim::Constant[value=1]()
  %c : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::FusionGroup_0(%x, %y)
  return (%c)

with prim::FusionGroup_0 = graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
                                 %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%x, %y)
  %3 : float = prim::Constant[value=1.5]()
  %4 : int = prim::Constant[value=1]()
  %b : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%a, %3, %4)
  %c : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::sigmoid(%b)
  return (%c)
"""
    inputs = [_x(2, 3), _x(2, 3, seed=1)]
    assert_same(_run(g, inputs)[0], _run(before, inputs)[0])


def test_producer_used_before_the_group_stays_out():
    g = Graph()
    x, y = g.add_input("x", F), g.add_input("y", F)
    a = aten(g, "exp", x, typ=F, name_as="a")
    u = aten(g, "cumsum", a, g.insert_constant(0), g.insert_constant(None), typ=F, name_as="u")
    b = aten(g, "mul", a, y, typ=F, name_as="b")
    c = aten(g, "tanh", b, typ=F, name_as="c")
    g.register_output(g.insert("prim::TupleConstruct", [c, u]).output())
    before = g.copy()
    fuse(g)
    _verify_all(g)
    [group] = fusion_groups(g)
    assert [n.kind for n in group["Subgraph"].nodes()] == ["aten::mul", "aten::tanh"]
    assert [v.debug_name for v in group.inputs] == ["a", "y"]
    assert [n.kind for n in g.nodes()][:2] == ["aten::exp", "prim::Constant"]  # exp stays where it was
    inputs = [_x(2, 3), _x(2, 3, seed=1)]
    for got, want in zip(_run(g, inputs)[0], _run(before, inputs)[0]):
        assert_same(got, want, 4)


def test_groups_grow_backwards_through_every_fusible_producer():
    g = Graph()
    x = g.add_input("x", F)
    v = x
    for k in range(6):  # a diamond-rich chain: each step reads the previous two values
        w = aten(g, "mul" if k % 2 else "add", v, x, *([g.insert_constant(1)] if k % 2 == 0 else []), typ=F)
        v = aten(g, "neg", w, typ=F)
    g.register_output(v)
    fuse(g)
    _verify_all(g)
    [group] = fusion_groups(g)
    assert len([n for n in group["Subgraph"].nodes() if n.kind != "prim::Constant"]) == 12
    assert [n.kind for n in g.nodes() if n.kind != "prim::Constant"] == ["prim::FusionGroup"]


def test_different_shapes_make_separate_groups():
    g = Graph()
    S = ftype(3)
    x, z = g.add_input("x", F), g.add_input("z", S)
    a = aten(g, "mul", x, x, typ=F, name_as="a")
    b = aten(g, "sigmoid", a, typ=F, name_as="b")
    p = aten(g, "exp", z, typ=S, name_as="p")
    q = aten(g, "neg", p, typ=S, name_as="q")
    g.register_output(aten(g, "add", b, q, g.insert_constant(1), typ=F, name_as="r"))
    before = g.copy()
    fuse(g)
    _verify_all(g)
    shapes = [tuple(n.outputs[0].type.sizes) for n in fusion_groups(g)]
    assert sorted(shapes) == [(2, 3), (3,)]
    [small] = [n for n in fusion_groups(g) if tuple(n.outputs[0].type.sizes) == (3,)]
    assert [n.kind for n in small["Subgraph"].nodes()] == ["aten::exp", "aten::neg"]
    inputs = [_x(2, 3), _x(3, seed=1)]
    assert_same(_run(g, inputs)[0], _run(before, inputs)[0], 4)


def test_values_used_later_become_group_outputs():
    g = Graph()
    x, y = g.add_input("x", F), g.add_input("y", F)
    a = aten(g, "mul", x, y, typ=F, name_as="a")
    b = aten(g, "exp", a, typ=F, name_as="b")
    c = aten(g, "add", b, a, g.insert_constant(1), typ=F, name_as="c")
    d = aten(g, "cumsum", b, g.insert_constant(1), g.insert_constant(None), typ=F, name_as="d")
    g.register_output(g.insert("prim::TupleConstruct", [c, a, d]).output())
    before = g.copy()
    fuse(g)
    _verify_all(g)
    [group] = fusion_groups(g)
    assert sorted(o.debug_name for o in group.outputs) == ["a", "b", "c"]
    assert len(group["Subgraph"].outputs) == 3
    inputs = [_x(2, 3), _x(2, 3, seed=1)]
    for got, want in zip(_run(g, inputs)[0], _run(before, inputs)[0]):
        assert_same(got, want, 4)


def test_single_fusible_node_and_non_constant_arguments_stay_unfused():
    g = Graph()
    x, y, alpha = g.add_input("x", F), g.add_input("y", F), g.add_input("alpha", T.INT)
    a = aten(g, "add", x, y, alpha, typ=F, name_as="a")  # alpha is not known when the kernel is generated
    b = aten(g, "cumsum", a, g.insert_constant(0), g.insert_constant(None), typ=F, name_as="b")
    g.register_output(aten(g, "neg", b, typ=F, name_as="c"))
    before = text(g)
    fuse(g)
    assert text(g) == before
    assert fusibility(a.node) == "argument alpha is not a constant"


def _nested_graph() -> Graph:
    """``if c: x*x then exp, else -x * x``; then a loop of ``z = tanh(z * x)``, every block fusible inside."""
    g = Graph()
    x, c = g.add_input("x", F), g.add_input("c", T.BOOL)
    n, then_b, else_b = if_node(g, c)
    n.outputs[0].type = F
    with g.inserting_at_end(then_b):
        t = aten(g, "mul", x, x, typ=F)
        then_b.register_output(aten(g, "exp", t, typ=F))
    with g.inserting_at_end(else_b):
        t = aten(g, "neg", x, typ=F)
        else_b.register_output(aten(g, "mul", t, x, typ=F))
    y = n.outputs[0]
    ln, body = loop(g, g.insert_constant(3), g.insert_constant(True), [y])
    ln.outputs[0].type = F
    body.inputs[1].type = F
    with g.inserting_at_end(body):
        z = aten(g, "mul", body.inputs[1], x, typ=F)
        z = aten(g, "tanh", z, typ=F)
        body.register_output(g.insert_constant(True))
        body.register_output(z)
    g.register_output(aten(g, "add", ln.outputs[0], x, g.insert_constant(1), typ=F))
    return g


def test_nested_blocks_fuse_in_place_and_verify():
    g = _nested_graph()
    before = g.copy()
    fuse(g)
    _verify_all(g)
    owners = sorted(n.owning_block.owning_node.kind for n in fusion_groups(g))
    assert owners == ["prim::If", "prim::If", "prim::Loop"]
    for cond in (True, False):
        inputs = [_x(2, 3), cond]
        assert_same(_run(g, inputs)[0], _run(before, inputs)[0], 4)


def test_lstm_gate_math_is_one_kernel():
    toolkit.manual_seed(0)
    args = _lstm_args()
    traced = toolkit.jit.trace(lstm, args)
    plan = traced.graph_for(*args)
    [group] = groups(plan)
    kinds = sorted(n.kind for n in fused_nodes(plan))
    assert kinds == sorted(["aten::sigmoid"] * 3 + ["aten::tanh"] * 2 + ["aten::mul"] * 3 + ["aten::add"] * 2
                           + ["aten::chunk", "prim::ListUnpack"])  # the add of the two linears joins through the chunk
    assert len(plan.kernels) == 1 and len(group.outputs) == 2  # hy and cy
    hy, cy = traced(*args)
    ehy, ecy = lstm(*args)
    assert_close_chain(hy, ehy)
    assert_close_chain(cy, ecy)
    assert plan.kernels[0].fallbacks == 0


# -- random elementwise programs --------------------------------------------------------------------------------

EXACT_UNARY = ("neg", "abs", "relu")
MATH_UNARY = ("sigmoid", "tanh", "exp")
BINARY = ("add", "sub", "mul", "maximum", "minimum")
DTYPES = (toolkit.float32, toolkit.float64, toolkit.int64)


@st.composite
def programs(draw):
    """Inputs (shapes broadcasting to one output shape, mixed dtypes) and steps ``(op, operand, operand)``."""
    out_shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n_inputs = draw(st.integers(1, 3))
    shapes = [out_shape]
    for _ in range(n_inputs - 1):
        drop = draw(st.integers(0, len(out_shape) - 1))
        shapes.append(tuple(1 if draw(st.booleans()) else s for s in out_shape[drop:]))
    dtypes = [draw(st.sampled_from(DTYPES)) for _ in shapes]
    ops = st.sampled_from(EXACT_UNARY + MATH_UNARY + BINARY)
    steps = draw(st.lists(st.tuples(ops, st.integers(0, 99), st.integers(0, 99)), min_size=2, max_size=7))
    return shapes, dtypes, steps


def _program(steps, n_inputs):
    def fn(*xs):
        values = list(xs)
        for name, i, j in steps:
            a = values[i % len(values)]
            if name in BINARY:
                b = values[j % len(values)]
                values.append(getattr(toolkit, name)(a, b))
            else:
                values.append(getattr(toolkit, name)(a))
        return values[-1], values[n_inputs + len(steps) // 2]

    return fn


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_elementwise_programs_fused_equal_eager(program):
    shapes, dtypes, steps = program
    inputs = [_x(*s, seed=k, dtype=d) * (3 if d == toolkit.int64 else 1) for k, (s, d) in enumerate(zip(shapes, dtypes))]
    fn = _program(steps, len(inputs))
    traced = toolkit.jit.trace(fn, tuple(inputs), check_trace=False)
    plan = traced.graph_for(*inputs)
    got, expected = traced(*inputs), fn(*inputs)
    exact = not any(name in MATH_UNARY for name, _, _ in steps)
    for g, e in zip(got, expected):
        if exact or not g.dtype.is_floating_point:
            assert_same(g, e)
        else:
            assert_close_chain(g, e)
    for k in plan.kernels:
        assert k.fallbacks == 0
    # Nothing fusible is left beside a group of its own shape that it could have joined (a feeds b directly).
    inside = set(fused_nodes(plan))
    for n in plan.graph.nodes():
        if n.kind.startswith("aten::") and fusibility(n) is None and n not in inside:
            for o in n.outputs:
                for u in o.uses:
                    assert u.user.kind != "prim::FusionGroup" or tuple(u.user.outputs[0].type.sizes) != tuple(
                        o.type.sizes) or any(w.user is not u.user for w in o.uses), f"{n} could join\n{plan}"


@pytest.mark.parametrize("n", [1, 2, 5])
def test_script_fn_chain_is_one_group_of_n_muls(n):
    def script_fn(x):
        for _ in range(n):
            x = x * x
        return x

    a = toolkit.rand(5)
    plan = toolkit.jit.trace(script_fn, (a,)).graph_for(a)
    assert len(groups(plan)) == (0 if n == 1 else 1)
    assert [m.kind for m in fused_nodes(plan)] == ([] if n == 1 else ["aten::mul"] * n)
