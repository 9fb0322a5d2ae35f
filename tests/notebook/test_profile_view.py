"""ProfileView's state from a real profile: rows, kinds (forward, backward, fused), the timeline."""

from __future__ import annotations

import toolkit
from toolkit.notebook import ProfileView
from toolkit.notebook.profile_view import event_kind

from .views_helpers import traced_chain


def _profile():
    tr, x, y = traced_chain()
    w = toolkit.randn(4, 8, requires_grad=True)
    tr.graph_for(x, y)
    with toolkit.profiler.profile(record_shapes=True) as prof:
        with toolkit.profiler.record_function("step"):
            out = tr(x, y) * w
            out.sum().backward()
    return prof


def test_rows_are_the_key_averages_sorted_by_self_time():
    prof = _profile()
    view = ProfileView(prof)
    rows = view.rows()
    avg = {a.key: a for a in prof.key_averages()}
    assert {r["name"] for r in rows} == set(avg)
    assert [r["self_cpu_us"] for r in rows] == sorted((r["self_cpu_us"] for r in rows), reverse=True)
    for r in rows:
        assert r["calls"] == avg[r["name"]].count
    assert abs(sum(r["self_cpu_pct"] for r in rows) - 100.0) < 1e-6
    kinds = {r["name"]: r["kind"] for r in rows}
    assert kinds["aten::mul"] == "forward" and kinds["MulBackward0"] == "backward"
    assert kinds["step"] == "annotation"
    assert [k for n, k in kinds.items() if n.startswith("prim::FusionGroup_0")] == ["fused"]
    assert len(ProfileView(prof, row_limit=3).rows()) == 3


def test_timeline_holds_every_event_with_nesting_depth():
    prof = _profile()
    bars = ProfileView(prof).timeline()
    assert len(bars) == len(prof.events())
    assert bars == sorted(bars, key=lambda b: b["start_us"]) and bars[0]["start_us"] == 0
    step = next(b for b in bars if b["name"] == "step")
    assert step["depth"] == 0 and step["kind"] == "annotation"
    fused = next(b for b in bars if b["kind"] == "fused")
    assert fused["depth"] >= 1  # inside the step range
    assert any(b["kind"] == "backward" for b in bars)


def test_html_has_sortable_table_bars_and_timeline():
    html = ProfileView(_profile()).to_html()
    assert '<table class="tk-table">' in html and "tk-bar tk-fused" in html and "tk-bar tk-bwd" in html
    assert 'class="tk-event tk-fused"' in html and 'class="tk-event tk-backward"' in html
    assert "\naten::" not in html  # a table printed beside it keeps its rows countable


def test_averages_alone_have_no_timeline():
    view = ProfileView(_profile().key_averages())
    assert view.events is None and view.timeline() == []
    assert "no timeline" in view.to_html()


def test_event_kind_of_backward_engine_events():
    prof = _profile()
    engine = [e for e in prof.events() if e.name.startswith("autograd::engine")]
    assert engine and all(event_kind(e) == "backward" for e in engine)
