"""Module scopes collapsed into expandable boxes: the interactive drawing of a big model opens small."""

from __future__ import annotations

import toolkit
from toolkit.notebook import GraphView
from toolkit.notebook.graph_model import graph_model
from toolkit.notebook.graph_scopes import collapse_scopes


def _transformer_view() -> GraphView:
    layer = toolkit.nn.TransformerEncoderLayer(16, 2).eval()
    return GraphView(toolkit.jit.trace(layer, (toolkit.randn(5, 3, 16),)))


def _labels(model, vid):
    return [model["nodes"][i]["label"] for i in model["views"][vid]["nodes"]]


def test_a_module_with_several_nodes_is_one_box_that_opens_to_them():
    m = _transformer_view().model
    top = m["top"]
    assert top != m["root"]
    (box,) = [m["nodes"][i] for i in m["views"][top]["nodes"] if m["nodes"][i]["role"] == "module"]
    assert box["label"] == "self_attn" and box["children"]
    inner_ids = m["views"][box["children"][0]]["nodes"]
    inside = [m["nodes"][i] for i in inner_ids if m["nodes"][i]["role"] == "op"]
    in_scope = [n for n in m["nodes"].values() if n["scope"] == "__module.self_attn" and n["role"] == "op"]
    assert {n["id"] for n in inside} == {n["id"] for n in in_scope}  # every op of the module, no other
    assert box["type"] == f"{len(in_scope)} nodes"
    # one-op modules (norm1, linear1, ...) stay drawn as their op; the module's edges go to its box
    assert "layer_norm" in _labels(m, top) and "linear" in _labels(m, top)
    edges = m["views"][top]["edges"]
    assert any(e["dst"] == box["id"] for e in edges) and any(e["src"] == box["id"] for e in edges)
    assert not any(e["src"] in {n["id"] for n in inside} for e in edges)
    # inside, the module's input comes in as an input node and its result leaves through "->"
    assert _labels(m, box["children"][0])[0] == "%src" and _labels(m, box["children"][0])[-1] == "->"


def test_graphs_without_big_modules_keep_their_view_and_html_draws_the_collapsed_one():
    net = toolkit.nn.Sequential(toolkit.nn.Linear(4, 4), toolkit.nn.ReLU())
    m = graph_model(toolkit.jit.trace(net, (toolkit.randn(2, 4),)).inlined_graph)
    assert collapse_scopes(m, m["root"]) == m["root"]
    view = _transformer_view()
    html = view.to_html()
    assert 'class="node tk-node tk-module"' in html and "tk-module-panel" in html
    assert "tk-module" not in view.to_svg()  # the static picture shows every module as a cluster


def test_a_module_box_fed_by_a_module_call_shows_the_traced_shapes():
    nn = toolkit.nn

    class Head(nn.Module):  # a list argument keeps the call inlined: its nodes form a scope box
        def forward(self, x, dims):
            return x.permute(dims).relu() * 2

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 6)
            self.head = Head()

        def forward(self, x):
            return self.head(self.proj(x), [1, 0])

    traced = toolkit.jit.trace(Net().eval(), (toolkit.randn(2, 4),))
    assert " : Tensor = prim::CallMethod" in str(traced.graph)  # the call of proj stays a call
    m = GraphView(traced.graph).model
    (box,) = [m["nodes"][i] for i in m["views"][m["top"]]["nodes"] if m["nodes"][i]["role"] == "module"]
    assert box["label"] == "head"
    (inp,) = box["inputs"]
    assert inp["type"].startswith("Float(2, 6, strides=[6, 1]")  # proj's result, as traced
    assert box["outputs"][0]["type"].startswith("Float(6, 2, ")
    inner = m["views"][box["children"][0]]
    first, last = (m["nodes"][inner["nodes"][0]], m["nodes"][inner["nodes"][-1]])
    assert first["type"] == "Float(2, 6)" and first["outputs"][0]["type"] == inp["type"]
    assert last["label"] == "->" and last["inputs"][0]["type"] == box["outputs"][0]["type"]
    assert all(e["label"] for v in (m["views"][m["top"]], inner) for e in v["edges"])
