"""The training monitor, AutogradView and ProfileView in JupyterLab's light and dark themes, in Chromium.

Each view's notebook HTML is opened in a page shaped like JupyterLab's output area, the theme's ``--jp-*``
variables are set on the body, and every visible piece of text is measured against what is painted under it
(the stack of boxes and SVG shapes at its centre, alpha and opacity composited on a 1x1 canvas). WCAG's
contrast bar applies: 4.5 for normal text, 3 for large text. The view's card must take the theme's colour
itself, so a fixed light palette fails the dark theme even where its text is readable. A full-page
screenshot of each view and theme is kept (and copied to ``$TOOLKIT_TEST_ARTIFACTS`` when set).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

import toolkit
from toolkit.notebook import AutogradView, ProfileView, TrainingMonitor

from .chromium import playwright_or_skip
from .test_graph_browser import DARK, LIGHT, _contrast
from .views_helpers import profiled_chain

playwright_api = playwright_or_skip()
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed (apt-get install graphviz)")
THEMES = pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])

# Every rendered text node under `root`: its colour composited over what is painted beneath its centre.
# Hit testing is made to see every element (pointer-events), then the stack below the text is painted
# bottom-up on a 1x1 canvas over the page's white: HTML boxes by their background colour, SVG shapes by their
# fill, each with its own and its ancestors' opacity; the text's colour (fill in SVG) goes on top.
_TEXTS = """(rootSelector) => {
  const style = document.createElement("style");
  style.textContent = "* { pointer-events: auto !important; }";
  document.head.appendChild(style);
  const ctx = document.createElement("canvas").getContext("2d", {willReadFrequently: true});
  const SHAPES = new Set(["rect", "polygon", "path", "circle", "ellipse"]);
  function opacity(el) {
    let o = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
    return o;
  }
  function layer(el) {  // [colour, alpha factor] this element paints at a point, or null
    const cs = getComputedStyle(el);
    if (el instanceof SVGElement) {
      if (!SHAPES.has(el.tagName) || cs.fill === "none") return null;
      return [cs.fill, parseFloat(cs.fillOpacity) * opacity(el)];
    }
    return [cs.backgroundColor, opacity(el)];
  }
  function paint(layers) {
    ctx.globalAlpha = 1; ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, 1, 1);
    layers.forEach(([colour, alpha]) => { ctx.globalAlpha = alpha; ctx.fillStyle = colour; ctx.fillRect(0, 0, 1, 1); });
    return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
  }
  const out = [];
  const root = document.querySelector(rootSelector);
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const el = node.parentElement, text = node.textContent.trim();
    if (!text || ["SCRIPT", "STYLE", "title"].includes(el.tagName)) continue;
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const r = Array.from(range.getClientRects()).find(r => r.width > 0 && r.height > 0);
    if (!r) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const stack = document.elementsFromPoint(x, y).filter(e => e !== el && !el.contains(e));
    const below = stack.map(layer).filter(Boolean).reverse();
    const cs = getComputedStyle(el), svg = el instanceof SVGElement;
    out.push({text: text.slice(0, 40), tag: el.tagName, cls: el.getAttribute("class") || "",
              size: parseFloat(cs.fontSize), weight: parseInt(cs.fontWeight, 10),
              bg: paint(below), fg: paint(below.concat([[svg ? cs.fill : cs.color, opacity(el)]]))});
  }
  return out;
}"""

# what a view's card is coloured: its box's background, or for a drawing the fill of its background shape
_CARD = """(sel) => {
  const ctx = document.createElement("canvas").getContext("2d");
  const card = document.querySelector(sel), cs = getComputedStyle(card);
  const shape = card instanceof SVGElement ? card.querySelector(":scope > g > polygon, :scope > rect") : null;
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, 1, 1);
  ctx.fillStyle = shape ? getComputedStyle(shape).fill : cs.backgroundColor; ctx.fillRect(0, 0, 1, 1);
  return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
}"""

# each monitor curve's colour and its plot panel's, composited over the card
_CURVES = """() => Array.from(document.querySelectorAll(".tk-monitor svg.tk-plot")).map(svg => {
  const ctx = document.createElement("canvas").getContext("2d");
  const bg = svg.querySelector(".tk-plot-bg"), line = svg.querySelector("polyline");
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, 1, 1);
  ctx.fillStyle = getComputedStyle(svg.closest(".tk-monitor")).backgroundColor; ctx.fillRect(0, 0, 1, 1);
  ctx.globalAlpha = parseFloat(getComputedStyle(bg).fillOpacity);
  ctx.fillStyle = getComputedStyle(bg).fill; ctx.fillRect(0, 0, 1, 1);
  const panel = Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
  ctx.globalAlpha = 1; ctx.fillStyle = getComputedStyle(line).stroke; ctx.fillRect(0, 0, 1, 1);
  return {metric: svg.dataset.metric, panel, line: Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3))};
})"""


def _large(t: dict) -> bool:
    """WCAG's large text: 18pt (24px), or 14pt (about 18.7px) bold."""
    return t["size"] >= 24 or (t["weight"] >= 700 and t["size"] >= 18.66)


def _output_page(browser, tmp_path, html: str, name: str, rendered: str = "jp-RenderedHTMLCommon"):
    """One output (``text/html``, or an SVG drawn inline) in JupyterLab's output-area markup, opened from disk."""
    path = tmp_path / f"{name}.html"
    path.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
                    f'<div class="jp-OutputArea-child"><div class="{rendered}">{html}</div></div>'
                    "</body></html>", encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    errors: list = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto("file://" + str(path))
    return page, errors


def _check_theme(page, errors, tmp_path, theme: dict, card: str, name: str) -> list[dict]:
    """Set ``theme`` on the body, keep a screenshot, assert the card follows it and every text's contrast."""
    page.evaluate("vars => Object.entries(vars).forEach(([k, v]) => document.body.style.setProperty(k, v))", theme)
    shot = tmp_path / f"{name}-{'dark' if theme is DARK else 'light'}.png"
    page.screenshot(path=str(shot), full_page=True)
    if os.environ.get("TOOLKIT_TEST_ARTIFACTS"):
        os.makedirs(os.environ["TOOLKIT_TEST_ARTIFACTS"], exist_ok=True)
        shutil.copy(shot, os.environ["TOOLKIT_TEST_ARTIFACTS"])
    dark_card = sum(page.evaluate(_CARD, card)) < 3 * 128
    assert dark_card == (theme is DARK), f"{name}: the card does not follow the theme"
    texts = page.evaluate(_TEXTS, card)
    low = [(round(_contrast(t["fg"], t["bg"]), 2), t) for t in texts
           if _contrast(t["fg"], t["bg"]) < (3 if _large(t) else 4.5)]
    assert low == [], f"{name}: text below WCAG contrast: {low}"
    assert errors == []
    return texts


def _monitor() -> TrainingMonitor:
    mon = TrainingMonitor(total=100, title="fit", display=False)
    for i in range(60):
        mon.update(loss=1.0 / (i + 1), acc=i / 60)
    return mon




def _autograd_view() -> AutogradView:
    net = toolkit.nn.Linear(3, 4)
    loss = net(toolkit.randn(5, 3)).tanh().pow(2).mean()
    return AutogradView(loss, params=dict(net.named_parameters()), show_saved=True)


@THEMES
def test_training_monitor_text_reads_in_light_and_dark_themes(browser, tmp_path, theme):
    mon = _monitor()
    page, errors = _output_page(browser, tmp_path, mon._repr_mimebundle_()["text/html"], "monitor")
    texts = _check_theme(page, errors, tmp_path, theme, ".tk-monitor", "monitor")
    shown = {t["text"] for t in texts}
    assert {"fit", "loss", "acc", "1", "60"} <= shown  # title, metric names, axis labels
    assert any(t.startswith("step 60/100") for t in shown)
    curves = page.evaluate(_CURVES)
    assert [c["metric"] for c in curves] == ["loss", "acc"]
    for c in curves:  # WCAG's 3:1 for graphics that carry meaning
        assert _contrast(c["line"], c["panel"]) >= 3, c


@THEMES
def test_profile_view_text_reads_in_light_and_dark_themes(browser, tmp_path, theme):
    prof = profiled_chain()
    page, errors = _output_page(browser, tmp_path, ProfileView(prof)._repr_mimebundle_()["text/html"], "profile")
    assert page.locator("svg.tk-timeline .tk-event").count() == len(prof.events())  # the live timeline
    texts = _check_theme(page, errors, tmp_path, theme, ".tk-profile", "profile")
    shown = {t["text"] for t in texts}
    assert {"Name", "Self CPU", "# Calls", "forward", "backward", "fused", "annotation", "ops", "timeline",
            "fit", "open in Perfetto", "0us"} <= shown  # headers, legend, summaries, buttons, ticks
    assert any(t["text"] == "aten::mul" and t["tag"] == "TD" for t in texts)
    labels = [t for t in texts if t["tag"] == "text" and "tk-axis" not in t["cls"]]
    assert any(t["text"].startswith("step") for t in labels), labels  # labels on the timeline's bars


@needs_dot
@THEMES
def test_autograd_view_text_reads_in_light_and_dark_themes(browser, tmp_path, theme):
    """The SVG output inline in a themed page, as a notebook's HTML export draws it."""
    view = _autograd_view()
    svg = view._repr_mimebundle_()["image/svg+xml"]
    page, errors = _output_page(browser, tmp_path, svg[svg.index("<svg"):], "autograd", "jp-RenderedSVG")
    assert page.locator("svg.tk-autograd g.node").count() == len(view.nodes)
    texts = _check_theme(page, errors, tmp_path, theme, "svg.tk-autograd", "autograd")
    shown = {t["text"] for t in texts}
    assert {"weight", "bias", "(4, 3)", "TanhBackward0", "AddmmBackward0"} <= shown  # parameter names, shapes
    edges = page.evaluate("() => Array.from(document.querySelectorAll('svg.tk-autograd g.edge > path'),"
                          " p => getComputedStyle(p).stroke)")
    assert len(edges) == len(view.edges) and len(set(edges)) == 1


def _lab_theme_css(name: str):
    """The stylesheet of one of the installed JupyterLab's themes (None where JupyterLab is not installed)."""
    path = os.path.join(sys.prefix, "share", "jupyter", "lab", "themes", "@jupyterlab", name, "index.css")
    return path if os.path.exists(path) else None


@needs_dot
@pytest.mark.parametrize("theme", ["theme-dark-extension", "theme-dark-high-contrast-extension"])
def test_views_read_in_jupyterlabs_own_dark_themes(browser, tmp_path, theme):
    """The installed JupyterLab's dark theme stylesheets themselves (their muted greys are dimmer than DARK's)."""
    css = _lab_theme_css(theme)
    if css is None:
        pytest.skip("JupyterLab's themes are not installed (pip install -e '.[dev]' installs JupyterLab)")
    svg = _autograd_view().svg()
    views = [(_monitor().to_html(), ".tk-monitor", "jp-RenderedHTMLCommon"),
             (ProfileView(profiled_chain()).to_html(), ".tk-profile", "jp-RenderedHTMLCommon"),
             (svg[svg.index("<svg"):], "svg.tk-autograd", "jp-RenderedSVG")]
    for i, (html, card, rendered) in enumerate(views):
        page, errors = _output_page(browser, tmp_path, html, f"view{i}", rendered)
        page.add_style_tag(path=css)
        assert sum(page.evaluate(_CARD, card)) < 3 * 128, card
        texts = page.evaluate(_TEXTS, card)
        assert len(texts) > 10
        low = [t for t in texts if _contrast(t["fg"], t["bg"]) < (3 if _large(t) else 4.5)]
        assert low == [] and errors == [], (card, low, errors)
        for c in page.evaluate(_CURVES):
            assert _contrast(c["line"], c["panel"]) >= 3, c
