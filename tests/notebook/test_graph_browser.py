"""Graph views' script in Debian's Chromium (headless, Playwright): the output pair IPython displays, the
scrolling canvas and its zoom, details and expanded groups opening beside their box.

The page mimics JupyterLab's output area (``.jp-OutputArea-child`` holding a ``.jp-RenderedSVG`` picture,
then the interactive HTML), so the test checks what the views do there without starting a server.
"""

from __future__ import annotations

import pytest

from toolkit.notebook import GraphView

from .chromium import playwright_or_skip
from .views_helpers import traced_chain

playwright_api = playwright_or_skip()


def _lab_like_page(browser, tmp_path, view: GraphView):
    """The two outputs ``_ipython_display_`` sends, in JupyterLab's output-area markup, opened from disk."""
    static = view.static_bundle()
    html = ('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
            '<div class="jp-OutputArea-child" id="picture"><div class="jp-RenderedSVG">'
            f'{static["image/svg+xml"]}</div></div>'
            f'<div class="jp-OutputArea-child"><div class="jp-RenderedHTMLCommon">{view.to_html(deferred=True)}'
            "</div></div><div style='height:3000px'></div></body></html>")
    path = tmp_path / "lab_like.html"
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    errors: list = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto("file://" + str(path))
    return page, errors


def test_interactive_output_unpacks_its_drawing_and_hides_the_static_picture(browser, tmp_path):
    tr, x, y = traced_chain()
    page, errors = _lab_like_page(browser, tmp_path, GraphView.compare(tr, x, y))
    before = page.locator(".tk-side > .tk-view").nth(0)
    assert before.locator(".tk-canvas > svg .tk-node.tk-op").count() == 6
    assert page.locator(".tk-canvas > script.tk-svg").count() == 0
    assert not page.locator("#picture").is_visible()  # the picture is for untrusted reloads
    assert not page.locator(".tk-untrusted-note").is_visible()
    assert errors == []


def test_plain_wheel_scrolls_ctrl_wheel_zooms_and_fit_fits(browser, tmp_path):
    tr, x, y = traced_chain()
    page, errors = _lab_like_page(browser, tmp_path, GraphView(tr.graph))
    view = page.locator(".tk-view").first
    svg = view.locator(".tk-canvas > svg")
    width = float(svg.get_attribute("width"))
    svg.hover()
    page.mouse.wheel(0, 400)
    page.wait_for_timeout(200)
    assert float(svg.get_attribute("width")) == width  # no zoom
    assert page.evaluate("window.scrollY") > 0  # the page scrolled
    svg.hover()
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    assert float(svg.get_attribute("width")) > width
    view.locator('button[data-act="one"]').click()
    assert float(svg.get_attribute("width")) == pytest.approx(width, abs=0.1)
    view.locator('button[data-act="zoom-in"]').click()
    assert float(svg.get_attribute("width")) == pytest.approx(width * 1.25, abs=0.2)
    view.locator('button[data-act="fit"]').click()
    canvas = view.locator(".tk-canvas").bounding_box()
    box = svg.bounding_box()
    assert box["width"] <= canvas["width"] + 1 and box["height"] <= page.viewport_size["height"]
    assert errors == []


def test_details_and_expanded_groups_open_beside_the_clicked_box(browser, tmp_path):
    tr, x, y = traced_chain()
    page, errors = _lab_like_page(browser, tmp_path, GraphView(tr.graph_for(x, y)))
    group = page.locator(".tk-node.tk-fusion")
    group.click()
    g, info, panel = group.bounding_box(), page.locator(".tk-info"), page.locator(".tk-panel")
    assert "prim::FusionGroup" in info.inner_text()
    i = info.bounding_box()
    assert 0 <= i["y"] - (g["y"] + g["height"]) < 20 and abs(i["x"] - g["x"]) < 20  # just below the box
    p = panel.bounding_box()
    beside = 0 <= p["x"] - (g["x"] + g["width"]) < 30 and abs(p["y"] - g["y"]) < 20
    below = 0 <= p["y"] - (g["y"] + g["height"]) < 30
    assert beside or below, (g, p)
    assert panel.locator(".tk-node.tk-op").count() == 6
    assert group.locator("text.tk-mark").text_content() == "\u2212"
    group.click(force=True)
    assert not panel.is_visible()
    assert errors == []
