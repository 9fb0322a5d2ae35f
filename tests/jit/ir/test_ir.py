"""The IR: values, nodes, blocks, use lists, insertion points, names, copying, verification, type propagation."""

import pytest

import toolkit
from toolkit.jit import Graph, VerificationError
from toolkit.jit.ir import types as T
from toolkit.jit.ir.propagate import propagate_types
from toolkit.ops import registry as R

F3 = T.TensorType(toolkit.float32, (3,), (1,), toolkit.device("cpu"), False)


def _mul_graph():
    g = Graph()
    x = g.add_input("x", F3)
    two = g.insert_constant(2)
    n = g.insert("aten::mul", [x, two], op=R.get("mul"))
    n.output().type = F3
    g.register_output(n.output())
    return g, x, two, n


def test_use_lists_follow_inputs():
    g, x, two, n = _mul_graph()
    assert [(u.user, u.offset) for u in x.uses] == [(n, 0)]
    y = g.add_input("y", F3)
    n.replace_input(1, y)
    assert two.uses == [] and [(u.user, u.offset) for u in y.uses] == [(n, 1)]
    g.verify()


def test_replace_all_uses_with_updates_returns():
    g, x, two, n = _mul_graph()
    x.replace_all_uses_with(g.add_input("z", F3))
    n.output().replace_all_uses_with(g.inputs[1])
    assert g.outputs == [g.inputs[1]] and x.uses == []
    n.destroy()
    two.node.destroy()
    g.verify()
    assert len(g.nodes()) == 0


def test_destroy_refuses_node_with_uses():
    g, x, two, n = _mul_graph()
    with pytest.raises(RuntimeError, match="still has uses"):
        two.node.destroy()


def test_debug_names_are_uniqued():
    g = Graph()
    a = g.add_input("x")
    b = g.add_input("x")
    c = g.add_input("x")
    assert (a.debug_name, b.debug_name, c.debug_name) == ("x", "x.1", "x.2")
    d = g.add_input()
    assert d.debug_name == str(d.unique) and not d.has_debug_name()
    a.set_debug_name("y")
    assert g.add_input("x").debug_name == "x"


def test_insertion_points():
    g, x, two, n = _mul_graph()
    with g.inserting_before(n):
        c = g.insert_constant(3)
    assert g.nodes().index(c.node) == g.nodes().index(n) - 1
    with g.inserting_after(n):
        m = g.insert("aten::neg", [n.output()], op=R.get("neg"))
    assert g.nodes()[-1] is m
    assert two.node.is_before(n) and not m.is_before(n)
    g.verify()


def test_copy_is_deep_and_equal():
    g, *_ = _mul_graph()
    h = g.copy()
    assert str(h) == str(g)
    h.nodes()[0]["value"] = 5
    assert str(h) != str(g)
    h.verify()


def test_verify_catches_use_before_definition():
    g, x, two, n = _mul_graph()
    two.node.move_before(n)  # still fine
    g.verify()
    n.move_before(two.node)
    with pytest.raises(VerificationError, match=rf"%{two.debug_name} is used before it is defined \(input 1 of .*aten::mul"):
        g.verify()


def test_verify_reads_block_counts_from_the_kinds():
    # How many blocks a node holds is its kind's declaration (prim::If 2, prim::Loop 1, ops and others 0).
    g, x, two, n = _mul_graph()
    n.add_block()
    with pytest.raises(VerificationError, match="aten::mul needs 0 blocks, has 1"):
        g.verify()
    g2, x2, two2, n2 = _mul_graph()
    t = g2.insert("prim::TupleConstruct", [x2])
    t.add_block()
    with pytest.raises(VerificationError, match="prim::TupleConstruct needs 0 blocks, has 1"):
        g2.verify()


def test_verify_catches_wrong_arity_and_type():
    g, x, two, n = _mul_graph()
    n.remove_input(1)
    with pytest.raises(VerificationError, match="aten::mul takes 2 inputs"):
        g.verify()
    g2, x2, two2, n2 = _mul_graph()
    s = g2.insert_constant("a")
    s.node.move_before(n2)
    n2.replace_input(1, s)
    with pytest.raises(VerificationError, match="argument 'other' of aten::mul must be Tensor, but %.* is str"):
        g2.verify()


def test_verify_catches_value_from_inner_block_used_outside():
    g = Graph()
    c = g.add_input("c", T.BOOL)
    x = g.add_input("x", F3)
    if_node = g.insert("prim::If", [c])
    if_node.output().type = F3
    b0, b1 = if_node.add_block(), if_node.add_block()
    with g.inserting_at_end(b0):
        inner = g.insert("aten::neg", [x], op=R.get("neg")).output()
    b0.register_output(inner)
    b1.register_output(x)
    g.register_output(if_node.output())
    g.verify()
    g.register_output(inner)
    with pytest.raises(VerificationError, match="returned but not defined"):
        g.verify()
    g.outputs.pop()
    b1.register_output(x)
    with pytest.raises(VerificationError, match="prim::If takes no inputs and returns 1 values"):
        g.verify()


def test_verify_checks_loop_arity():
    g = Graph()
    x = g.add_input("x", F3)
    trip = g.insert_constant(3)
    cond = g.insert_constant(True)
    loop = g.insert("prim::Loop", [trip, cond, x])
    body = loop.add_block()
    body.add_input("i", T.INT)
    xi = body.add_input("x", F3)
    with g.inserting_at_end(body):
        y = g.insert("aten::neg", [xi], op=R.get("neg")).output()
    body.register_output(cond)
    body.register_output(y)
    g.register_output(loop.output())
    g.verify()
    body.outputs.pop()
    with pytest.raises(VerificationError, match="prim::Loop"):
        g.verify()


def test_types_print_like_torchscript():
    cpu = toolkit.device("cpu")
    assert str(T.TensorType(toolkit.float32, (3, 20), (20, 1), cpu, False)) == \
        "Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu)"
    assert str(T.TensorType(toolkit.float32, (10, 80))) == "Float(10, 80)"
    assert str(T.TensorType(toolkit.int64, (None, 3))) == "Long(*, 3)"
    assert str(T.TensorType()) == "Tensor"
    assert str(T.ListType(T.INT)) == "int[]"
    assert str(T.TupleType([T.TENSOR, T.FLOAT])) == "(Tensor, float)"
    assert str(T.OptionalType(T.TENSOR)) == "Tensor?"
    assert T.NONE.is_subtype_of(T.OptionalType(T.INT)) and not T.STR.is_subtype_of(T.INT)
    assert T.TensorType(toolkit.float32, (2,)).is_subtype_of(T.TensorType(toolkit.float32))


def test_tensor_type_is_what_meta_rules_read():
    a = T.TensorType(toolkit.float32, (4, 1), device=toolkit.device("cpu"))
    b = T.TensorType(toolkit.int64, (3,), device=toolkit.device("cpu"))
    m = R.get("add").infer(a, b, 1)
    assert m.shape == (4, 3) and m.dtype is toolkit.float32
    with pytest.raises(RuntimeError, match="not known"):
        _ = T.TensorType(toolkit.float32, (None, 3)).shape


def test_propagated_types_agree_with_traced_ones():
    m = toolkit.nn.Sequential(toolkit.nn.Conv2d(3, 4, 3), toolkit.nn.ReLU(), toolkit.nn.Flatten(),
                              toolkit.nn.Linear(4 * 6 * 6, 5))
    tm = toolkit.jit.trace(m, toolkit.rand(2, 3, 8, 8))
    g = tm.graph.copy()
    propagate_types(g)
    for traced, inferred in zip(tm.graph.all_nodes(), g.all_nodes()):
        for a, b in zip(traced.outputs, inferred.outputs):
            if traced.op is not None:
                assert (b.type.sizes, b.type.dtype) == (a.type.sizes, a.type.dtype), traced.kind
    g.verify()
