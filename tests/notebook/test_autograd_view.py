"""AutogradView against PyTorch's own autograd graph (walked through ``grad_fn.next_functions``) for the same model."""

from __future__ import annotations

import base64
import shutil
import xml.etree.ElementTree as ET

import pytest
import torch

import toolkit
from toolkit.notebook import AutogradView

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed (apt-get install graphviz)")


def _model(lib):
    """Two parameters, one used twice, a shared leaf, cat, elementwise ops and reductions: a DAG, not a tree."""

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.randn(3, 4))
            self.b = lib.nn.Parameter(lib.randn(4))

        def forward(self, x):
            h = (x.mm(self.w) + self.b).tanh()
            return (h * h).mean() + lib.cat([self.w, self.w * 2]).sigmoid().sum() * 0.1

    lib.manual_seed(0)
    net = Net()
    return net, net(lib.randn(5, 3))


def _torch_graph(root, names: dict) -> list:
    """PyTorch's graph in depth-first order: (label, child positions) per node, each node once."""
    order: dict = {}
    rows: list = []

    def visit(fn) -> int:
        if fn in order:
            return order[fn]
        order[fn] = len(rows)
        rows.append(None)
        var = getattr(fn, "variable", None)
        label = f"{names.get(id(var), '')} {tuple(var.shape)}" if var is not None else type(fn).__name__
        kids = [visit(c) for c, _ in fn.next_functions if c is not None]
        rows[order[fn]] = (label, kids)
        return order[fn]

    visit(root.grad_fn)
    return rows


def _view_graph(view: AutogradView) -> list:
    """The view's graph in the same form, read from its nodes and (non-saved) edges."""
    by_id = {n.id: n for n in view.nodes}
    kids: dict = {}
    for a, b, saved in view.edges:
        if not saved:
            kids.setdefault(b, []).append(a)
    out = next(n for n in view.nodes if n.kind == "output")
    order: dict = {}
    rows: list = []

    def visit(nid) -> int:
        if nid in order:
            return order[nid]
        order[nid] = len(rows)
        rows.append(None)
        n = by_id[nid]
        if n.kind == "leaf":
            name, shape = n.label.split("\n")
            label = f"{name} {tuple(int(d) for d in shape.strip(' ()').split(',') if d)}"
        else:
            label = n.label
        rows[order[nid]] = (label, [visit(c) for c in kids.get(nid, [])])
        return order[nid]

    visit(kids[out.id][0])
    return rows


def test_nodes_and_edges_match_pytorchs_autograd_graph():
    tk_net, tk_loss = _model(toolkit)
    pt_net, pt_loss = _model(torch)
    view = AutogradView(tk_loss, params=dict(tk_net.named_parameters()))
    expected = _torch_graph(pt_loss, {id(v): k for k, v in pt_net.named_parameters()})
    assert _view_graph(view) == expected
    labels = [label for label, _ in expected]
    assert "MmBackward0" in labels and "CatBackward0" in labels and "w (3, 4)" in labels and "b (4,)" in labels
    assert labels.count("w (3, 4)") == 1  # a parameter used three times is one leaf with three edges
    assert sum(n.kind == "leaf" for n in view.nodes) == 2
    assert [n.kind for n in view.nodes].count("output") == 1


def test_saved_tensors_are_shown_with_their_shapes_as_pytorch_saves_them():
    def saved(lib):
        lib.manual_seed(0)
        a, b = lib.randn(3, 4, requires_grad=True), lib.randn(3, 4, requires_grad=True)
        return ((a * b).tanh().exp() + lib.cat([a, b]).sigmoid().sum()).sum()

    tk_loss, pt_loss = saved(toolkit), saved(torch)
    view = AutogradView(tk_loss, show_saved=True)
    by_id = {n.id: n for n in view.nodes}
    got = sorted((by_id[a].label, by_id[b].label.split("\n")[0], by_id[b].label.split("\n")[1].strip())
                 for a, b, s in view.edges if s)
    expected, todo, seen = [], [pt_loss.grad_fn], set()
    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.add(fn)
        for attr in dir(fn):
            value = getattr(fn, attr) if attr.startswith("_saved_") else None
            if isinstance(value, torch.Tensor):
                shape = "(" + ", ".join(str(d) for d in value.shape) + ")"
                expected.append((type(fn).__name__, attr[len("_saved_"):], shape))
        todo.extend(c for c, _ in fn.next_functions if c is not None)
    assert got == sorted(expected)
    assert ("SigmoidBackward0", "result", "(6, 4)") in got


def test_saved_tensors_freed_by_backward_are_left_out():
    a = toolkit.randn(3, requires_grad=True)
    y = a.exp().sum()
    assert any(n.kind == "saved" for n in AutogradView(y, show_saved=True).nodes)
    y.backward()
    view = AutogradView(y, show_saved=True)
    assert [n.kind for n in view.nodes] == ["output", "fn", "fn", "leaf"]


@needs_dot
def test_mime_bundle_is_an_svg_drawing_of_every_node():
    net, loss = _model(toolkit)
    view = AutogradView(loss, params=dict(net.named_parameters()), show_saved=True)
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "image/png", "text/plain"}
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    svg = ET.fromstring(bundle["image/svg+xml"])
    ns = "{http://www.w3.org/2000/svg}"
    assert svg.tag == f"{ns}svg"
    boxes = [g for g in svg.iter(f"{ns}g") if g.get("class") == "node"]
    assert len(boxes) == len(view.nodes)
    texts = {t.text.strip() for t in svg.iter(f"{ns}text") if t.text and t.text.strip()}
    assert {"MmBackward0", "TanhBackward0", "CatBackward0", "AddBackward0", "w", "b", "(3, 4)"} <= texts
    fills = {p.get("fill") for g in boxes for p in g.iter(f"{ns}polygon")}
    assert {"lightblue", "orange", "#caff70"} <= fills  # darkolivegreen1, as dot writes it
    edges = [g for g in svg.iter(f"{ns}g") if g.get("class") == "edge"]
    assert len(edges) == len(view.edges)
    assert bundle["text/plain"].startswith("AutogradView: ")
    assert "MmBackward0" in bundle["text/plain"] and "w (3, 4)" in bundle["text/plain"]


@needs_dot
def test_save_writes_the_svg(tmp_path):
    y = (toolkit.randn(2, requires_grad=True) * 3).sum()
    path = AutogradView(y).save(tmp_path / "g.svg")
    assert ET.parse(path).getroot().tag.endswith("svg")


def test_pytorch_tensors_are_drawn_as_torchviz_draws_them():
    """The same reading of a real PyTorch graph: nn.Linear records AddmmBackward0 and TBackward0."""
    lin = torch.nn.Linear(3, 2)
    view = AutogradView(lin(torch.randn(4, 3)).sum(), params=dict(lin.named_parameters()))
    assert [n.label for n in view.nodes] == ["\n ()", "SumBackward0", "AddmmBackward0",
                                             "bias\n (2)", "TBackward0", "weight\n (2, 3)"]


def test_show_attrs_lists_non_tensor_saved_values():
    y = toolkit.randn(5, 2, requires_grad=True).pow(2).mean()
    labels = [n.label for n in AutogradView(y, show_attrs=True).nodes]
    assert any(label.startswith("PowBackward0\n") and "exponent: 2" in label for label in labels)


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="AutogradView: expected a tensor.*got int"):
        AutogradView(3)
    with pytest.raises(ValueError, match="no grad_fn and does not require grad"):
        AutogradView(toolkit.randn(2))
    with pytest.raises(TypeError, match="params maps names"):
        AutogradView(toolkit.randn(2, requires_grad=True).sum(), params={"w": 1.0})
