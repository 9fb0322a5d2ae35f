"""The ONNX view: an exported ONNX graph drawn beside the toolkit IR it came from, as the graph view draws IR
graphs (boxes with op types and shapes, initializers folded, attributes in tooltips, If/Loop bodies that open,
the notebook's theme, the static picture a saved notebook keeps)."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET

import pytest
import torch

import toolkit
import toolkit.onnx
from toolkit import nn
from toolkit.notebook.layout import has_dot
from toolkit.notebook.onnx_view import OnnxView, onnx_graph_model

onnx = pytest.importorskip("onnx")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

SVG_G = "{http://www.w3.org/2000/svg}g"


def _twins():
    """A small conv net in PyTorch (exported by its TorchScript-based exporter) and its toolkit trace."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(64, 3))
    import io

    f = io.BytesIO()
    torch.onnx.export(tm.eval(), (torch.randn(1, 1, 6, 6),), f, dynamo=False, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}})
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3))
    return onnx.load_from_string(f.getvalue()), toolkit.jit.trace(model, toolkit.randn(1, 1, 6, 6))


def _ops(model: dict) -> list:
    return [model["nodes"][i] for i in model["views"][model["root"]]["nodes"]
            if model["nodes"][i]["role"] == "op"]


def test_onnx_nodes_with_shapes_folded_initializers_and_attributes():
    proto, _ = _twins()
    m = onnx_graph_model(proto)
    ops = _ops(m)
    assert [n["label"] for n in ops] == ["Conv", "Relu", "Flatten", "Gemm"]
    conv = ops[0]
    assert conv["kind"] == "onnx::Conv" and conv["type"] == "Float(batch, 4, 4, 4)"
    assert conv["call"] == ["Conv(%x, 0.weight, 0.bias)"]  # the initializers are named in the box, not drawn
    assert conv["attributes"]["kernel_shape"] == "[3, 3]" and conv["attributes"]["group"] == "1"
    assert "kernel_shape=[3, 3]" in conv["tip"] and conv["scope"] == "__module.0"
    assert [i["constant"] for i in conv["inputs"]] == [None, "0.weight", "0.bias"]
    root = m["views"][m["root"]]
    assert len(root["edges"]) == 5  # x -> Conv -> Relu -> Flatten -> Gemm -> return
    assert root["edges"][0]["label"] == "[batch, 1, 6, 6]"
    assert re.fullmatch(r"ONNX \(opset \d+\)", m["views"][m["root"]]["title"])
    json.dumps(m)


def test_constants_are_folded_into_their_users():
    h = onnx.helper
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 6])
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3, 4])
    nodes = [h.make_node("Constant", [], ["shape"], value=h.make_tensor("s", onnx.TensorProto.INT64, [2], [3, 4])),
             h.make_node("Reshape", ["x", "shape"], ["y"])]
    model = h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    m = onnx_graph_model(model)
    assert [n["call"] for n in _ops(m)] == [["Reshape(%x, [3, 4])"]]


def test_if_branches_open_into_views_of_their_own():
    h = onnx.helper
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])
    c = h.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3])

    def branch(op: str, name: str):
        out = h.make_tensor_value_info(f"{name}_out", onnx.TensorProto.FLOAT, [3])
        return h.make_graph([h.make_node(op, ["x"], [f"{name}_out"])], name, [], [out])

    node = h.make_node("If", ["c"], ["y"], then_branch=branch("Relu", "then"), else_branch=branch("Neg", "else"))
    model = h.make_model(h.make_graph([node], "g", [x, c], [y]), opset_imports=[h.make_opsetid("", 17)])
    m = onnx_graph_model(model)
    (box,) = _ops(m) or [n for n in m["nodes"].values() if n["role"] == "block"]
    assert box["role"] == "block" and len(box["children"]) == 2
    then_view = m["views"][box["children"][0]]
    labels = [m["nodes"][i]["label"] for i in then_view["nodes"]]
    assert labels == ["%x", "Relu", "return"]  # x comes from the enclosing graph
    assert m["nodes"][then_view["nodes"][0]]["kind"] == "outer"


def test_side_by_side_with_the_ir_and_tooltips_in_the_picture():
    proto, traced = _twins()
    view = toolkit.onnx.show(proto, ir=traced)
    assert isinstance(view, OnnxView) and [t for t, _ in view.panes] == ["ONNX", "toolkit IR"]
    b = view._repr_mimebundle_()
    svg = ET.fromstring(b["image/svg+xml"])
    kinds = {g.get("data-kind") for g in svg.iter(SVG_G)}
    assert {"onnx::Conv", "onnx::Gemm", "aten::conv2d", "aten::linear"} <= kinds
    tips = {g.get("data-kind"): g.find("{http://www.w3.org/2000/svg}title").text
            for g in svg.iter(SVG_G) if g.get("data-kind")}
    assert tips["onnx::Conv"].startswith("Conv\n") and "kernel_shape=[3, 3]" in tips["onnx::Conv"]
    assert tips["aten::conv2d"].startswith("aten::conv2d")  # the IR's boxes keep their own
    if has_dot():
        assert base64.b64decode(b["image/png"])[:4] == b"\x89PNG"
    html = view.to_html(deferred=True)
    assert "kernel_shape=[3, 3]" in html and 'data-kind="onnx::Conv"' in html
    assert "var(--jp-layout-color1, #fff)" in html  # the notebook's theme, light or dark
    assert 'class="tk-side"' in view.to_html()


def test_imported_model_and_paths(tmp_path):
    proto, _ = _twins()
    path = tmp_path / "m.onnx"
    onnx.save(proto, str(path))
    imported = toolkit.onnx.import_onnx(str(path))
    view = toolkit.onnx.show(str(path), ir=imported)
    assert "aten::convolution" in {n["kind"] for n in view.panes[1][1]["nodes"].values()}
    out = view.save(tmp_path / "view.html")
    text = (tmp_path / "view.html").read_text()
    assert out.endswith("view.html") and "onnx::Conv" in text
    assert len(toolkit.onnx.show(proto).panes) == 1
