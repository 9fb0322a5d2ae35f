"""The ``inline_calls`` pass: ``prim::CallMethod`` nodes replaced by their callees' graphs, recursively,
giving back the flat graph a traced module runs (``.inlined_graph``)."""

import pytest

import toolkit
from toolkit.jit import Graph, Interpreter, PassManager, run_passes
from toolkit.jit.ir import types as T
from toolkit.jit.ir.verify import verify
from toolkit.jit.passes import inline_call, inline_calls

from ..call_helpers import make_nested, structure
from ..frontend.test_golden import BasicBlock, Net
from ..pass_helpers import text


def _traced(make, x):
    toolkit.manual_seed(0)
    m = make().eval()
    return m, toolkit.jit.trace(m, x)


CASES = [
    (Net, lambda: toolkit.randn(2, 1, 28, 28)),
    (BasicBlock, lambda: toolkit.randn(1, 4, 5, 5)),
    (lambda: make_nested(toolkit), lambda: toolkit.randn(2, 4)),
]


@pytest.mark.parametrize("make,inputs", CASES)
def test_inlining_every_call_gives_the_inlined_graph(make, inputs):
    m, tm = _traced(make, inputs())
    before = text(tm.graph)
    g = run_passes(tm.graph.copy(), ["inline_calls"])
    assert text(tm.graph) == before  # the pass ran on a copy
    verify(g)
    assert "prim::CallMethod" not in text(g)
    assert structure(g) == structure(tm.inlined_graph)
    x = inputs()
    with toolkit.no_grad():
        a = Interpreter(g).run([m, x])[0]
        b = Interpreter(tm.graph).run([m, x])[0]
        assert toolkit.equal(a, b) and toolkit.equal(a, tm(x))


def test_before_and_after_on_a_nested_call():
    _, tm = _traced(lambda: make_nested(toolkit), toolkit.randn(2, 4))
    seq = tm.seq.graph.copy()
    assert [n.kind for n in seq.nodes()] == ["prim::GetAttr", "prim::CallMethod", "prim::GetAttr", "prim::CallMethod"]
    inline_calls(seq)
    verify(seq)
    # the Linear's call became its parameter reads and linear; ReLU's read of its module is dropped
    assert [n.kind for n in seq.nodes()] == ["prim::GetAttr", "prim::GetAttr", "prim::GetAttr", "aten::linear",
                                             "aten::relu"]
    reads = [n for n in seq.nodes() if n.kind == "prim::GetAttr"]
    assert [n["name"] for n in reads] == ["0", "weight", "bias"]
    assert reads[0].inputs[0] is seq.inputs[0] and reads[1].inputs[0] is reads[0].output()
    assert seq.nodes()[3].scope == "__module.seq.0" and seq.nodes()[4].scope == "__module.seq.1"


def test_a_returned_tuple_is_taken_apart_where_it_is_unpacked():
    _, tm = _traced(lambda: make_nested(toolkit), toolkit.randn(2, 4))
    g = tm.graph.copy()
    call = next(n for n in g.nodes() if n.kind == "prim::CallMethod" and n["name"] == "forward"
                and n.inputs[0].debug_name == "pair")
    unpack = call.output().uses[0].user
    assert unpack.kind == "prim::TupleUnpack"
    results = inline_call(g, call)
    verify(g)
    kinds = [n.kind for n in g.nodes()]
    assert "prim::TupleConstruct" not in kinds and "prim::TupleUnpack" not in kinds
    assert len(results) == 1
    relu = next(n for n in g.nodes() if n.kind == "aten::relu")
    mul = next(n for n in g.nodes() if n.kind == "aten::mul")
    assert mul.inputs[0] is relu.output()  # b, the tuple's second element, used directly


def test_one_call_at_a_time_keeps_the_others():
    _, tm = _traced(Net, toolkit.randn(2, 1, 28, 28))
    g = tm.graph.copy()
    first = next(n for n in g.nodes() if n.kind == "prim::CallMethod")
    inline_call(g, first)
    verify(g)
    kinds = [n.kind for n in g.nodes()]
    assert kinds.count("prim::CallMethod") == 4
    assert kinds[:4] == ["prim::GetAttr", "prim::GetAttr", "prim::GetAttr", "prim::Constant"]
    assert "aten::conv2d" in kinds


def test_submodule_inlined_graph_and_the_pass_manager():
    _, tm = _traced(lambda: make_nested(toolkit), toolkit.randn(2, 4))
    assert structure(tm.seq.inlined_graph) == structure(inline_calls(tm.seq.graph.copy()))
    pm = PassManager(["inline_calls", "dce"])
    g = pm.run(tm.graph.copy())
    assert "prim::CallMethod" not in text(g)
    assert pm.history[0].name == "inline_calls" and pm.history[0].changed
    assert pm.history[0].removed["prim::CallMethod"] == 4


def test_a_call_without_its_callee_is_a_clear_error():
    g = Graph()
    self_v = g.add_input("self", T.ModuleType(toolkit.nn.ReLU))
    x = g.add_input("x")
    n = g.insert("prim::CallMethod", [self_v, x])
    n["name"] = "forward"
    g.register_output(n.output())
    with pytest.raises(RuntimeError, match=r"prim::CallMethod\[name='forward'\]: the node has no callee graph"):
        inline_calls(g)
    with pytest.raises(RuntimeError, match=r"cannot run prim::CallMethod\[name='forward'\].*no callee graph"):
        Interpreter(g).run([toolkit.nn.ReLU(), toolkit.randn(2)])


def test_a_callee_of_the_wrong_arity_is_a_clear_error():
    _, tm = _traced(Net, toolkit.randn(2, 1, 28, 28))
    g = tm.graph.copy()
    call = next(n for n in g.nodes() if n.kind == "prim::CallMethod")
    call.remove_input(1)
    with pytest.raises(RuntimeError, match=r"takes 2 inputs and returns 1 values, but the node has 1 inputs"):
        inline_call(g, call)
