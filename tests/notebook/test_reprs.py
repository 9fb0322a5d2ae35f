"""Rich displays: text/plain stays each object's repr; text/html draws graphs, profiles, modules, tensors."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import toolkit
from toolkit.notebook.reprs import HISTOGRAM_MIN_NUMEL, mimebundle, tensor_stats

from .views_helpers import looped, traced_chain


def _bundle(obj):
    b = obj._repr_mimebundle_()
    assert b["text/plain"] == repr(obj)
    return b["text/html"]


def test_graphs_and_graph_for_are_drawn():
    tr, x, y = traced_chain()
    assert 'data-kind="aten::sigmoid"' in _bundle(tr.graph)
    html = _bundle(tr.graph_for(x, y))
    assert 'data-kind="prim::FusionGroup"' in html and "tk-kernel" in html
    assert "fused_" in html  # the kernel's cache file is named


def test_graph_bundles_carry_a_static_picture_untrusted_front_ends_show():
    import base64
    import xml.etree.ElementTree as ET

    from toolkit.notebook.layout import has_dot

    tr, x, y = traced_chain()
    for obj in (tr.graph, tr.graph_for(x, y), tr):
        b = obj._repr_mimebundle_()
        svg = ET.fromstring(b["image/svg+xml"])
        kinds = {g.get("data-kind") for g in svg.iter("{http://www.w3.org/2000/svg}g")}
        assert "aten::sigmoid" in kinds or "prim::FusionGroup" in kinds
        if has_dot():
            assert base64.b64decode(b["image/png"])[:4] == b"\x89PNG"


def test_graph_view_html_follows_the_notebook_theme():
    from toolkit.notebook import GraphView

    tr, _, _ = traced_chain()
    html = GraphView(tr.graph).to_html()
    for var in ("var(--jp-layout-color1, #fff)", "var(--jp-ui-font-color1, #1f2328)",
                "var(--jp-border-color1, #d0d7de)", "var(--jp-layout-color2, #f6f8fa)"):
        assert var in html
    assert ".tk-graph .tk-canvas { overflow: auto;" in html and "620px" not in html  # scrolls, never clipped


def test_graph_view_carries_its_plumbing_drawing_only_for_small_graphs():
    from toolkit.notebook import GraphView
    from toolkit.notebook.graph_view import PLUMBING_MAX_NODES

    nn = toolkit.nn
    small = toolkit.jit.trace(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), (toolkit.randn(2, 4),))
    html = GraphView(small).to_html()
    assert html.count('class="tk-plumbing"') == 1 and '<button data-act="plumbing"' in html
    assert 'data-kind="prim::GetAttr"' not in html.split('class="tk-plumbing"')[0]  # folded in the first drawing
    assert 'data-kind=\\"prim::GetAttr\\"' in html  # boxes of their own in the twin (a JSON string)
    assert 'class="tk-search"' in html
    layers = PLUMBING_MAX_NODES // 2 + 1
    big = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(4, 4), nn.ReLU())])
    html = GraphView(toolkit.jit.trace(big, (toolkit.randn(2, 4),))).to_html()
    assert 'class="tk-plumbing"' not in html and '<button data-act="plumbing"' not in html
    assert '<button data-act="plumbing"' not in GraphView(small, show_plumbing=True).to_html()  # drawn that way already


def test_graph_view_displays_as_a_static_picture_then_the_interactive_view():
    from IPython.core.interactiveshell import InteractiveShell

    from toolkit.notebook import GraphView

    shell = InteractiveShell.instance()
    published: list = []
    shell.display_pub.publish = lambda data, metadata=None, **kw: published.append(data)
    tr, _, _ = traced_chain()
    view = GraphView(tr.graph)
    shell.display_formatter.format(view)  # what IPython does for a cell's value: _ipython_display_
    picture, interactive = published
    assert "image/svg+xml" in picture and "text/html" not in picture
    html = interactive["text/html"]
    assert 'data-static-twin="1"' in html and 'class="tk-svg"' in html
    # untrusted (a saved notebook reopened): the picture shows as PNG where dot is installed; the sanitized
    # interactive output leaves no drawing text behind, only the note
    from toolkit.notebook.layout import has_dot

    from .untrusted import sanitize, untrusted_mime

    assert untrusted_mime(picture) == ("image/png" if has_dot() else "text/plain")
    assert untrusted_mime(interactive) == "text/html"
    shown = sanitize(html)
    assert "<svg" not in shown and "sigmoid" not in shown and "[4, 8]" not in shown
    assert "run the cell or trust the notebook" in shown


def test_scripted_function_and_module_show_graph_and_code():
    html = _bundle(looped)
    assert 'data-kind="prim::Loop"' in html and "def looped" in html
    lin = toolkit.nn.Linear(4, 3)
    traced = toolkit.jit.trace(lin, (toolkit.randn(2, 4),))
    html = _bundle(traced)
    assert "Linear" in html and "15 parameters" in html and 'data-kind="aten::linear"' in html


def test_module_tree_counts_parameters():
    net = toolkit.nn.Sequential(toolkit.nn.Linear(4, 8), toolkit.nn.ReLU(), toolkit.nn.Linear(8, 2))
    net[2].weight.requires_grad_(False)
    html = _bundle(net)
    assert "58 parameters (42 trainable)" in html
    assert html.count("<details") == 3  # the root, and the two Linear layers with parameters
    assert "frozen" in html and "[8, 4]" in html


def test_small_tensor_shows_values_and_stats():
    t = toolkit.tensor([[1.0, 2.0], [3.0, float("nan")]])
    html = _bundle(t)
    assert "tk-hist" not in html
    stats = tensor_stats(t)
    assert stats["nan"] == 1 and stats["min"] == 1.0 and stats["max"] == 3.0
    assert stats["std"] == pytest.approx(np.std([1.0, 2.0, 3.0], ddof=1))
    assert "<details open>" in html


def test_large_tensor_gets_a_histogram_matching_numpy():
    t = toolkit.randn(5000, requires_grad=True) * 3
    html = _bundle(t)
    a = t.detach().numpy().astype(np.float64)
    counts, _ = np.histogram(a, bins=30)
    titles = re.findall(r"<title>\[[^\]<]*\): (\d+)</title>", html)
    assert [int(c) for c in titles] == counts.tolist()
    assert "MulBackward0" in html and "requires_grad" in html
    assert tensor_stats(t)["mean"] == pytest.approx(a.mean())
    assert toolkit.ones(HISTOGRAM_MIN_NUMEL)._repr_mimebundle_()["text/html"].count("tk-hist") == 1


def test_bool_and_empty_tensors():
    assert tensor_stats(toolkit.tensor([True, False, True])) == {"numel": 3, "sampled": False, "true": 2,
                                                                 "false": 1}
    assert "shape" in _bundle(toolkit.zeros(0, 3))


def test_profile_and_event_lists():
    x = toolkit.randn(8, 8, requires_grad=True)
    with toolkit.profiler.profile() as prof:
        (x.mm(x).sigmoid()).sum().backward()
    assert "aten::mm" in _bundle(prof)
    assert "aten::mm" in _bundle(prof.key_averages())


def test_an_object_without_a_view_falls_back_to_text_with_a_warning():
    with pytest.warns(RuntimeWarning, match="no HTML view of this object"):
        assert mimebundle(object()).keys() == {"text/plain"}


def test_include_and_exclude():
    t = toolkit.ones(2)
    assert toolkit.ones(2)._repr_mimebundle_(include={"text/plain"}).keys() == {"text/plain"}
    assert t._repr_mimebundle_(exclude={"text/html"}).keys() == {"text/plain"}


def test_displaying_does_not_make_import_toolkit_load_the_notebook_package():
    code = ("import sys, toolkit; t = toolkit.ones(3); r = repr(t); "
            "assert 'toolkit.notebook' not in sys.modules; t._repr_mimebundle_(); "
            "assert 'toolkit.notebook.reprs' in sys.modules and 'IPython' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
