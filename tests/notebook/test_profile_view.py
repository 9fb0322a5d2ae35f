"""ProfileView's state from a real profile: rows, kinds (forward, backward, fused), the timeline."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

import toolkit
from toolkit.notebook import ProfileView
from toolkit.notebook.profile_static import STATIC_MAX_BARS, drawn_bars, nice_ticks, tick_label
from toolkit.notebook.profile_view import event_kind

from .untrusted import sanitize, untrusted_mime
from .views_helpers import profiled_chain


def test_rows_are_the_key_averages_sorted_by_self_time():
    prof = profiled_chain()
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
    prof = profiled_chain()
    bars = ProfileView(prof).timeline()
    assert len(bars) == len(prof.events())
    assert bars == sorted(bars, key=lambda b: b["start_us"]) and bars[0]["start_us"] == 0
    step = next(b for b in bars if b["name"] == "step")
    assert step["depth"] == 0 and step["kind"] == "annotation"
    fused = next(b for b in bars if b["kind"] == "fused")
    assert fused["depth"] >= 1  # inside the step range
    assert any(b["kind"] == "backward" for b in bars)


def test_html_has_sortable_table_bars_and_timeline():
    prof = profiled_chain()
    html = ProfileView(prof).to_html()
    assert '<table class="tk-table tk-ops"' in html and "tk-bar tk-fused" in html and "tk-bar tk-bwd" in html
    data = _timeline_json(html)
    assert len(data["ev"]) == len(prof.events())  # the interactive timeline gets every event
    assert {"fused", "backward"} <= {data["kinds"][e[1]] for e in data["ev"]}
    assert "\naten::" not in html  # a table printed beside it keeps its rows countable
    assert 'data-act="perfetto"' in html and "ui.perfetto.dev" in html and "PING" in html


def _timeline_json(html: str) -> dict:
    text = html.split('class="tk-timeline-data">', 1)[1].split("</script>", 1)[0]
    return json.loads(text.replace("<\\/", "</"))


def test_bundle_carries_a_static_drawing_jupyterlab_shows_untrusted():
    prof = profiled_chain()
    bundle = ProfileView(prof)._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml"}
    assert bundle["text/plain"].startswith("<ProfileView ")
    svg = bundle["image/svg+xml"]
    assert svg.startswith("<svg") and svg.count("<rect") == len(prof.events())
    assert untrusted_mime(bundle) == "text/html"  # JupyterLab 4 sanitizes it rather than show an image
    shown = sanitize(bundle["text/html"])
    assert "<svg" not in shown and "<script" not in shown and "<style" not in shown
    assert "aten::mul" in shown and "MulBackward0" in shown  # the table survives
    static = shown.split('class="tk-timeline-static"', 1)[1]
    bars = re.findall(r'<div title="([^"]*)" style="position:absolute;left:[\d.]+%;width:[\d.]+%;top:\d+px', static)
    assert len(bars) == len(prof.events())  # every event drawn, positioned by inline style
    assert "toolkitProfile" not in shown and '"ev":' not in shown  # no script or data leaks as text
    assert "open in Perfetto" in shown and 'class="tk-tools" style="display:none"' in shown  # hidden untrusted


def test_row_limit_is_honoured_in_the_view():
    prof = profiled_chain()
    view = ProfileView(prof, row_limit=3)
    body = view.to_html().split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == 3
    assert f"3 of {len(prof.key_averages())} ops shown (row_limit=3)" in view.to_html()
    assert "ops shown" not in ProfileView(prof).to_html()
    with pytest.raises(ValueError, match="row_limit must be a positive int"):
        ProfileView(prof, row_limit=0)


def test_long_names_are_cut_with_an_ellipsis_not_overprinted():
    long = "my_model.encoder.layers.11.self_attention.scaled_dot_product_attention." + "x" * 150
    with toolkit.profiler.profile() as prof:
        with toolkit.profiler.record_function(long):
            toolkit.ones(3).sum()
    shown = sanitize(ProfileView(prof).to_html())  # inline styles: they hold untrusted too
    assert 'style="table-layout:fixed;width:100%"' in shown
    cell = re.search(r'<td title="([^"]*)" style="([^"]*)">' + re.escape(long) + "</td>", shown)
    assert cell and cell.group(1) == long
    assert "text-overflow:ellipsis" in cell.group(2) and "overflow:hidden" in cell.group(2)
    assert "white-space:nowrap" in cell.group(2)


def test_static_drawings_state_what_they_leave_out():
    prof = profiled_chain()
    bars = ProfileView(prof).timeline()
    kept, note = drawn_bars(bars, limit=5)
    assert len(kept) == 5 and kept == sorted(kept, key=lambda b: b["start_us"])
    assert min(b["dur_us"] for b in kept) >= max(b["dur_us"] for b in bars if b not in kept)
    assert f"the 5 longest of {len(bars)} events" in note and f"other {len(bars) - 5} are shorter" in note
    assert drawn_bars(bars) == (bars, "")


def test_many_events_are_all_in_the_interactive_timeline_and_the_cut_is_stated():
    x = toolkit.ones(4)
    with toolkit.profiler.profile() as prof:
        for _ in range(STATIC_MAX_BARS // 2 + 10):
            x.add(1).sum()
    n = len(prof.events())
    assert n > STATIC_MAX_BARS
    html = ProfileView(prof).to_html()
    assert len(_timeline_json(html)["ev"]) == n
    assert f"the {STATIC_MAX_BARS:,} longest of {n:,} events" in sanitize(html)
    assert f"the {STATIC_MAX_BARS:,} longest of {n:,} events" in ProfileView(prof).timeline_svg()


def test_colours_follow_the_jupyterlab_theme():
    html = ProfileView(profiled_chain()).to_html()
    for var in ("--jp-layout-color1", "--jp-layout-color2", "--jp-ui-font-color1", "--jp-border-color1"):
        assert f"var({var}, #" in html  # a theme variable with a light fallback
    assert "table.tk-table th { background: var(--jp-layout-color2" in html


def test_ticks_are_round_numbers_covering_the_span():
    assert nice_ticks(23_000) == [0, 5000, 10000, 15000, 20000]
    assert nice_ticks(0.9) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8])
    assert [tick_label(t) for t in (0, 250, 1500, 2e6)] == ["0us", "250us", "1.5ms", "2s"]


def test_averages_alone_have_no_timeline():
    view = ProfileView(profiled_chain().key_averages())
    assert view.events is None and view.timeline() == []
    assert "no timeline" in view.to_html()


def test_event_kind_of_backward_engine_events():
    prof = profiled_chain()
    engine = [e for e in prof.events() if e.name.startswith("autograd::engine")]
    assert engine and all(event_kind(e) == "backward" for e in engine)


# tick labels that stick out of the timeline (a label at the right edge must turn to the left of its tick)
_TICKS_OUTSIDE = """() => {
  const box = document.querySelector("svg.tk-timeline").getBoundingClientRect();
  return Array.from(document.querySelectorAll("svg.tk-timeline .tk-axis text"), t => [t.textContent,
    t.getBoundingClientRect()]).filter(([, r]) => r.left < box.left - 0.5 || r.right > box.right + 0.5)
    .map(([text]) => text);
}"""


def test_interactive_timeline_in_a_browser(tmp_path):
    """Trusted: the script draws every event, hides the static drawing, zooms with the wheel; theme colours apply."""
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        pytest.skip("Debian's chromium is not installed")
    prof = profiled_chain()
    dark = ("<style>body { --jp-layout-color1: rgb(17, 17, 17); --jp-ui-font-color1: rgb(221, 221, 221); }</style>")
    path = tmp_path / "profile.html"
    path.write_text(dark + ProfileView(prof).to_html(), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        errors: list = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"file://{path}")
        assert page.locator("svg.tk-timeline .tk-event").count() == len(prof.events())
        assert not page.locator(".tk-timeline-static").is_visible() and page.locator(".tk-tools").is_visible()
        ticks = page.locator("svg.tk-timeline .tk-axis text").all_text_contents()
        assert len(ticks) >= 3 and ticks[0] == "0us"
        assert page.evaluate(_TICKS_OUTSIDE) == []
        page.locator("svg.tk-timeline").hover()
        page.mouse.wheel(0, -800)
        assert page.locator("svg.tk-timeline .tk-axis text").all_text_contents() != ticks
        assert page.evaluate(_TICKS_OUTSIDE) == []
        page.locator("svg.tk-timeline").dblclick()
        assert page.locator("svg.tk-timeline .tk-axis text").all_text_contents() == ticks
        style = page.eval_on_selector(".tk-profile", "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
        assert style == ["rgb(17, 17, 17)", "rgb(221, 221, 221)"]
        browser.close()
    assert errors == []
