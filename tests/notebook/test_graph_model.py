"""The graph views' state: IR graphs to nested views of nodes, edges, groups, kernels and timings."""

from __future__ import annotations

import json
import os

import pytest

import toolkit
from toolkit.notebook import GraphView
from toolkit.notebook.graph_model import count, graph_model

from .views_helpers import looped, traced_chain


def _labels(model, vid):
    return [model["nodes"][i]["label"] for i in model["views"][vid]["nodes"]]


def test_traced_graph_nodes_edges_and_shapes():
    tr, x, y = traced_chain()
    m = graph_model(tr.graph)
    root = m["views"][m["root"]]
    assert _labels(m, m["root"]) == ["%x", "%y", "mul", "add", "sigmoid", "tanh", "mul", "sub", "return"]
    assert count(m, "op") == 6 and count(m, "input") == 2 and count(m, "output") == 1
    assert count(m, "constant") == 0  # folded into their users
    ops = [n for n in m["nodes"].values() if n["role"] == "op"]
    assert all(n["type"] == "Float(4, 8)" for n in ops)
    add = next(n for n in ops if n["label"] == "add")
    assert [i["constant"] for i in add["inputs"]] == [None, "1.5", "1"]
    assert add["source"].endswith(f"views_helpers.py:{chain_line()}") and "sigmoid" in add["code"]
    # one edge per tensor use, each labelled with its shape; folded constants are named in the box
    assert len(root["edges"]) == 10
    assert {e["label"] for e in root["edges"]} == {"[4, 8]"}
    assert add["call"] == ["add(%2, 1.5)"]  # alpha=1 is the schema default: left out of the box
    assert next(n for n in ops if n["label"] == "sigmoid")["call"] == []
    json.dumps(m)  # the model is what the page embeds


def chain_line() -> int:
    import inspect

    from . import views_helpers

    return inspect.getsourcelines(views_helpers.chain)[1] + 1


def test_show_constants_draws_them():
    tr, _, _ = traced_chain()
    m = graph_model(tr.graph, show_constants=True)
    assert count(m, "constant") == 3
    assert sorted(n["label"] for n in m["nodes"].values() if n["role"] == "constant") == ["1", "1", "1.5"]


def test_graph_for_fusion_group_expands_to_its_subgraph_and_kernel():
    tr, x, y = traced_chain()
    gf = tr.graph_for(x, y)
    m = graph_model(gf)
    assert _labels(m, m["root"]) == ["%x", "%y", "FusionGroup_0", "return"]
    group = next(n for n in m["nodes"].values() if n["role"] == "fusion")
    assert group["kind"] == "prim::FusionGroup"
    assert group["kernel"] == gf.kernels[0].source()
    assert group["kernel_path"] == str(gf.kernels[0].source_path())
    (child,) = group["children"]
    assert _labels(m, child) == ["%x", "%y", "mul", "add", "sigmoid", "tanh", "mul", "sub", "return"]
    assert count(m, "op", child) == len([n for n in gf.graph.nodes()[0]["Subgraph"].nodes()
                                         if n.kind != "prim::Constant"])


def test_control_flow_blocks_become_nested_views():
    m = graph_model(looped.graph)
    assert _labels(m, m["root"]) == ["%x", "%n", "Loop", "relu", "return"]
    loop = next(n for n in m["nodes"].values() if n["kind"] == "prim::Loop")
    assert loop["role"] == "block"
    (body,) = loop["children"]
    assert _labels(m, body) == ["%_", "%y", "sum", "gt", "Bool", "If", "->"]
    branch = next(m["nodes"][i] for i in m["views"][body]["nodes"] if m["nodes"][i]["kind"] == "prim::If")
    assert [_labels(m, v) for v in branch["children"]] == [["%y", "mul", "->"], ["%y", "sub", "->"]]
    assert [m["views"][v]["title"] for v in branch["children"]] == ["prim::If block0", "prim::If block1"]


def test_profiled_times_attach_to_ops_and_fusion_groups():
    tr, x, y = traced_chain()
    tr.graph_for(x, y)
    with toolkit.profiler.profile() as prof:
        for _ in range(3):
            tr(x, y)
    events = [e for e in prof.events() if e.name.startswith("prim::FusionGroup_0")]
    m = graph_model(tr.graph_for(x, y), profile=prof)
    group = next(n for n in m["nodes"].values() if n["role"] == "fusion")
    assert group["calls"] == len(events) == 3
    assert group["time_us"] == pytest.approx(sum(e.cpu_time_total for e in events), rel=1e-6)
    assert all(n["time_us"] is None for n in m["nodes"].values() if n["role"] == "input")


def test_graph_view_panes_have_distinct_ids_and_save_a_standalone_page(tmp_path):
    tr, x, y = traced_chain()
    view = GraphView.compare(tr, x, y)
    (t0, before), (t1, after) = view.panes
    assert t0.startswith("before") and t1.startswith("after")
    assert not set(before["nodes"]) & set(after["nodes"])
    assert count(before, "fusion") == 0 and count(after, "fusion") == 1
    html = view.to_html()
    assert html.count('class="tk-view"') == 3  # two panes and the fusion group's subgraph
    assert 'data-panel="p1n2" hidden' in html and 'class="tk-kernel"' in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    path = view.save(tmp_path / "g.html")
    text = open(path).read()
    assert text.startswith("<!DOCTYPE html>") and "window.toolkitViews.init" in text
    assert oct(os.stat(path).st_mode & 0o777) != "0o600"
    assert "2 nodes" not in repr(view) and "1 fusion groups" in repr(view)


def test_graph_view_of_a_scripted_function_and_bad_input():
    view = GraphView(looped)
    assert view.panes[0][0] == "looped"
    with pytest.raises(TypeError, match="GraphView: expected a toolkit.jit Graph"):
        GraphView(42)
    with pytest.raises(ValueError, match="nothing drawn yet"):
        GraphView().to_html()


def with_fallback(x):
    y = x * 2
    with toolkit.no_grad():
        y = y + 1
    return y


def test_python_fallback_nodes_have_their_own_role_and_source_line():
    import inspect
    import warnings

    from toolkit.jit.frontend.script import ScriptFallbackWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScriptFallbackWarning)
        s = toolkit.jit.script(with_fallback, fallback=True)
    x = toolkit.ones(2)
    assert s(x).tolist() == with_fallback(x).tolist()
    lines, first = inspect.getsourcelines(with_fallback)
    line = first + 2
    m = graph_model(s.graph_for(x))
    (py,) = [n for n in m["nodes"].values() if n["role"] == "python"]
    assert py["kind"] == "prim::PythonOp" and py["label"] == f"PythonOp with_fallback:{line}"
    assert py["source"] == f"{os.path.abspath(__file__)}:{line}" and py["code"] == "with toolkit.no_grad():"
    assert [n["label"] for n in m["nodes"].values() if n["role"] == "op"] == ["mul"]
    view = GraphView(s)
    assert 'class="node tk-node tk-python"' in view.to_html()
    assert "1 Python fallback nodes" in repr(view) and "2 nodes" in repr(view)
    traced = graph_model(toolkit.jit.trace(lambda a: a * 2, (x,)).graph)
    assert count(traced, "python") == 0


def _seed_net_graph():
    from toolkit.demo import seed_net

    net = seed_net().eval()
    return toolkit.jit.trace(net, (toolkit.randn(2, 1, 28, 28),)).inlined_graph


def test_module_plumbing_is_folded_into_its_users_by_default():
    g = _seed_net_graph()
    m = graph_model(g)
    kinds = [m["nodes"][i]["kind"] for i in m["views"][m["root"]]["nodes"]]
    assert "prim::GetAttr" not in kinds and "prim::ListConstruct" not in kinds and "prim::Constant" not in kinds
    assert _labels(m, m["root"])[0] == "%x.1"  # ``self`` is read only by folded GetAttrs: not drawn
    conv1 = next(n for n in m["nodes"].values() if n["scope"] == "__module.conv1")
    assert conv1["call"] == ["conv2d(%x.1, weight=self.conv1.weight,", "  bias=self.conv1.bias)"]
    assert [i["constant"] for i in conv1["inputs"]][1:4] == ["self.conv1.weight", "self.conv1.bias", "[1, 1]"]
    pool = next(n for n in m["nodes"].values() if n["kind"] == "aten::max_pool2d")
    assert pool["call"] == ["max_pool2d(%input.1, kernel_size=[2, 2])"]  # stride=[], padding=[0, 0], ... defaults
    drop = next(n for n in m["nodes"].values() if n["kind"] == "aten::dropout")
    assert "p=0.5, train=False" in drop["call"][0]
    assert count(m, "op") == 13 == sum(1 for n in g.nodes() if n.kind.startswith("aten::"))


def test_show_plumbing_draws_getattr_boxes_named_by_their_attribute():
    m = graph_model(_seed_net_graph(), show_plumbing=True)
    getattrs = [n for n in m["nodes"].values() if n["kind"] == "prim::GetAttr"]
    assert len(getattrs) == 12
    assert {n["label"] for n in getattrs} >= {"GetAttr .conv1", "GetAttr .weight", "GetAttr .bias"}
    assert count(m, "constant") > 0
    assert any(n["kind"] == "prim::ListConstruct" for n in m["nodes"].values())
    assert _labels(m, m["root"])[:2] == ["%self", "%x.1"]
    conv1 = next(n for n in m["nodes"].values() if n["kind"] == "aten::conv2d")
    assert conv1["call"] == []  # nothing folded: the box is the op's name


def test_scalar_constant_is_an_argument_of_its_user():
    x = toolkit.randn(3)
    m = graph_model(toolkit.jit.trace(lambda a: a * 2, (x,)).graph)
    (mul,) = [n for n in m["nodes"].values() if n["role"] == "op"]
    assert mul["call"] == ["mul(%a, 2)"]  # the constant is drawn as the second argument, not left out
    assert [i["constant"] for i in mul["inputs"]] == [None, "2"]


def _calls(m):
    return [n for n in m["nodes"].values() if n["kind"] == "prim::CallMethod"]


def test_module_call_boxes_show_the_shapes_their_values_were_traced_with():
    from toolkit.demo import seed_net

    traced = toolkit.jit.trace(seed_net().eval(), (toolkit.randn(2, 1, 28, 28),))
    m = graph_model(traced.graph)
    calls = _calls(m)
    assert [n["type"] for n in calls] == ["Float(2, 10, 24, 24)", "Float(2, 20, 8, 8)", "Float(2, 20, 8, 8)",
                                          "Float(2, 50)", "Float(2, 10)"]
    conv2_drop = calls[2]  # its input is conv2's result: typed in the details as the trace saw it
    assert conv2_drop["inputs"][1]["type"].startswith("Float(2, 20, 8, 8, strides=[1280, 64, 8, 1]")
    assert conv2_drop["outputs"][0]["type"].startswith("Float(2, 20, 8, 8, strides=")
    assert all(e["label"] for e in m["views"][m["root"]]["edges"])  # every edge, calls' results included
    # the IR itself keeps PyTorch's typing of a call's result
    printed = [line for line in str(traced.graph).splitlines() if "prim::CallMethod" in line]
    assert len(printed) == 5 and all(" : Tensor = prim::CallMethod" in line for line in printed)


def test_nested_and_tuple_module_calls_carry_their_traced_shapes():
    nn = toolkit.nn

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 3), nn.Linear(4, 5)

        def forward(self, x):
            return self.a(x), self.b(x)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Sequential(nn.Linear(4, 6), nn.ReLU()), nn.Linear(6, 4))
            self.pair = Pair()

        def forward(self, x):
            return self.pair(self.seq(x))

    traced = toolkit.jit.trace(Outer().eval(), (toolkit.randn(2, 4),))
    m = graph_model(traced.graph)
    seq, pair = _calls(m)
    assert seq["type"] == "Float(2, 4)"  # the outer Sequential returns its inner call's result
    assert pair["type"] == "(Float(2, 3), Float(2, 5))"
    labels = {e["value"]: e["label"] for e in m["views"][m["root"]]["edges"]}
    assert labels[seq["outputs"][0]["name"]] == "[2, 4]"
    assert labels[pair["outputs"][0]["name"]] == "([2, 3], [2, 5])"
    assert "%3 : Tensor = prim::CallMethod" in str(traced.graph)
    assert "(Tensor, Tensor) = prim::CallMethod" in str(traced.graph)


def test_sequential_call_results_reach_the_return_with_their_shapes():
    net = toolkit.nn.Sequential(toolkit.nn.Linear(4, 3), toolkit.nn.ReLU())
    traced = toolkit.jit.trace(net, (toolkit.randn(2, 4),))
    m = graph_model(traced.graph)
    assert [n["type"] for n in _calls(m)] == ["Float(2, 3)", "Float(2, 3)"]
    (ret,) = [n for n in m["nodes"].values() if n["role"] == "output"]
    assert ret["type"] == "Float(2, 3)" and ret["inputs"][0]["type"].startswith("Float(2, 3, strides=[3, 1]")
    assert [e["label"] for e in m["views"][m["root"]]["edges"]] == ["[2, 4]", "[2, 3]", "[2, 3]"]
    assert str(traced.graph).count(" : Tensor = prim::CallMethod") == 2


def test_module_call_results_print_as_plain_tensor_like_pytorch():
    torch = pytest.importorskip("torch")

    def call_types(graph_text: str) -> list:
        return [line.split(" = ")[0].split(" : ", 1)[1] for line in graph_text.splitlines() if "CallMethod" in line]

    ours = toolkit.jit.trace(toolkit.nn.Sequential(toolkit.nn.Linear(4, 3), toolkit.nn.ReLU()),
                             (toolkit.randn(2, 4),))
    theirs = torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()), (torch.randn(2, 4),))
    assert call_types(str(ours.graph)) == call_types(str(theirs.graph)) == ["Tensor", "Tensor"]
    assert [n["type"] for n in _calls(graph_model(ours.graph))] == ["Float(2, 3)", "Float(2, 3)"]


def test_edges_of_named_values_show_their_names():
    def f(x, y):
        return (x * y).sum("C")

    tr = toolkit.jit.trace(f, (toolkit.randn(2, 3, names=("N", "C")), toolkit.randn(3)))
    m = graph_model(tr.graph)
    assert sorted(e["label"] for e in m["views"][m["root"]]["edges"]) == [
        "[3]", "[N: 2, C: 3]", "[N: 2, C: 3]", "[N: 2]"]
