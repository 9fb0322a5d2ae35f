"""Drawing graph views: DOT with a cluster per module scope, dot's SVG tagged for the script, the fallback."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import toolkit
from toolkit.notebook.graph_model import graph_model
from toolkit.notebook.layout import FONT_SIZE, fallback_svg, has_dot, render_png, render_svg, to_dot

from .views_helpers import looped, traced_chain

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(not has_dot(), reason="Graphviz's dot is not installed (`make graphviz` installs it)")


def _nested_model():
    class Block(toolkit.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = toolkit.nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x).relu()

    net = toolkit.nn.Sequential(Block(), Block())
    return graph_model(toolkit.jit.trace(net, (toolkit.randn(2, 4),)).inlined_graph)


def _node_groups(root):
    return [g for g in root.iter(f"{SVG}g") if "tk-node" in (g.get("class") or "").split()]


def test_dot_source_has_a_cluster_per_module_scope_nested_like_the_modules():
    m = _nested_model()
    scopes = sorted({n["scope"] for n in m["nodes"].values() if n["scope"]})
    assert scopes == ["__module.0", "__module.0.lin", "__module.1", "__module.1.lin"]
    dot = to_dot(m, m["root"])
    assert dot.count("subgraph \"cluster_") == 4
    assert 'label="lin"' in dot and 'label="0"' in dot
    # the Linear's cluster sits inside its Block's cluster
    first = dot.index('label="0"')
    assert first < dot.index('label="lin"', first) < dot.index('label="1"')


@needs_dot
def test_dot_svg_is_tagged_for_the_script_and_drawn_at_full_text_size():
    m = _nested_model()
    svg = render_svg(m, m["root"])
    root = ET.fromstring(svg)
    groups = _node_groups(root)
    assert {g.get("data-node") for g in groups} == set(m["views"][m["root"]]["nodes"])
    assert {g.get("data-kind") for g in groups} >= {"aten::linear", "aten::relu", "input", "return"}
    assert len([g for g in root.iter(f"{SVG}g") if "tk-scope" in (g.get("class") or "")]) == 4
    sizes = {float(t.get("font-size")) for t in root.iter(f"{SVG}text") if t.get("font-size")}
    assert min(sizes) >= 10 and FONT_SIZE in sizes
    # 1 unit of the drawing is 1 px: width/height equal the viewBox, nothing scaled down
    vb = [float(v) for v in root.get("viewBox").split()]
    assert [float(root.get("width")), float(root.get("height"))] == pytest.approx(vb[2:], abs=0.1)
    assert 'id="' not in svg  # ids would collide between views on one page
    labels = "".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "weight=self.0.lin.weight" in labels and "GetAttr" not in labels


@needs_dot
def test_group_boxes_carry_the_expand_mark_and_png_renders():
    tr, x, y = traced_chain()
    m = graph_model(tr.graph_for(x, y))
    root = ET.fromstring(render_svg(m, m["root"]))
    (group,) = [g for g in _node_groups(root) if "tk-fusion" in g.get("class")]
    marks = [t for t in group.iter(f"{SVG}text") if t.get("class") == "tk-mark"]
    assert [t.text for t in marks] == ["+"]
    png = render_png(m, m["root"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_fallback_draws_every_node_of_every_view_without_dot():
    m = graph_model(looped.graph)
    for vid, view in m["views"].items():
        root = ET.fromstring(fallback_svg(m, vid))
        assert [g.get("data-node") for g in _node_groups(root)] == view["nodes"]
        assert len([g for g in root.iter(f"{SVG}g") if "tk-edge" in (g.get("class") or "")]) == len(view["edges"])
    loop = next(n for n in m["nodes"].values() if n["kind"] == "prim::Loop")
    root = ET.fromstring(fallback_svg(m, m["root"]))
    (box,) = [g for g in _node_groups(root) if g.get("data-node") == loop["id"]]
    assert [t.text for t in box.iter(f"{SVG}text") if t.get("class") == "tk-mark"] == ["+"]


@needs_dot
def test_static_picture_draws_fusion_groups_open_as_clusters_of_their_ops():
    from toolkit.notebook import GraphView

    tr, x, y = traced_chain()
    view = GraphView.compare(tr, x, y)
    root = ET.fromstring(view.to_svg())
    clusters = [g for g in root.iter(f"{SVG}g") if "tk-fusion-group" in (g.get("class") or "")]
    assert len(clusters) == 1
    assert "FusionGroup_0" in "".join(t.text or "" for t in clusters[0].iter(f"{SVG}text"))
    kinds = [g.get("data-kind") for g in _node_groups(root)]
    assert kinds.count("aten::mul") == 4 and "prim::FusionGroup" not in kinds  # both panes: the ops, no box
    # the interactive drawing keeps the box, which expands on a click
    m = view.panes[1][1]
    assert "prim::FusionGroup" in [g.get("data-kind") for g in _node_groups(ET.fromstring(render_svg(m, m["root"])))]
    assert view.to_png()[:8] == b"\x89PNG\r\n\x1a\n"
