"""Notebook graph views of real models: build time (Python side, Graphviz's dot included), output size, and the
time Chromium takes to draw a saved view.

Models: the seed's Net, a 50-layer MLP (``nn.Sequential`` of Linear + ReLU) and
``nn.TransformerEncoderLayer(16, 2)``, each traced. For each: boxes drawn,
seconds to build what a notebook cell shows (the static picture and the
interactive HTML, as ``_ipython_display_`` sends them), bytes of those outputs,
the smallest text size in the drawing (px; the views never scale text below it),
and, where Playwright and Chromium are installed, milliseconds from opening the
page ``GraphView.save`` writes until the drawing is on screen. Target: under 1 s
each to build, text at least 10 px.

The builds run in fresh toolkit processes (``ROUNDS`` of them, ``REPEAT`` timed
builds per model after one warm-up), the page loads in fresh processes that
import Playwright only, rounds interleaved with the builds::

    .venv/bin/python -m benchmarks.bench_graph_view
    .venv/bin/python benchmarks/run.py --suite graph_view
"""

from __future__ import annotations

import os
import re
import tempfile
import time

from .chromium import missing
from .common import cell
from .harness import REPEAT, ROUNDS, Timing, run_json

HERE = "benchmarks.bench_graph_view"


# -- in-process measurements: each runs in a fresh process (toolkit only, or Playwright only) ---------------------
def _models():
    import toolkit
    from toolkit.demo import seed_net

    nn = toolkit.nn
    mlp = nn.Sequential(*[m for _ in range(50) for m in (nn.Linear(32, 32), nn.ReLU())])
    layer = nn.TransformerEncoderLayer(16, 2).eval()
    return [("seed Net", seed_net().eval(), toolkit.randn(2, 1, 28, 28)),
            ("MLP, 50 x (Linear + ReLU)", mlp, toolkit.randn(4, 32)),
            ("TransformerEncoderLayer(16, 2)", layer, toolkit.randn(5, 3, 16))]


def _build(traced):
    from toolkit.notebook import GraphView

    view = GraphView(traced)
    static = view.static_bundle()
    html = view.to_html(deferred=True)
    return view, static, html


def build(repeat: int, save_dir: str) -> dict:
    """Each model traced, then its view built ``repeat`` times after one warm-up (seconds of each build), and
    saved as ``save_dir/<i>.html`` for the browser to open. Sizes in bytes, text in px."""
    import toolkit
    from toolkit.notebook.graph_model import count

    rows = []
    for i, (name, model, x) in enumerate(_models()):
        traced = toolkit.jit.trace(model, (x,))
        _build(traced)
        seconds = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            view, static, html = _build(traced)
            seconds.append(time.perf_counter() - t0)
        sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', static["image/svg+xml"])]
        page = view.save(os.path.join(save_dir, f"{i}.html"))
        m = view.model
        rows.append({"model": name, "boxes": count(m, None, m["root"]), "seconds": seconds,
                     "output_bytes": sum(len(v) for v in static.values()) + len(html),
                     "page": page, "page_bytes": os.path.getsize(page),
                     "min_text_px": min(sizes) if sizes else None})
    return {"rows": rows}


def drawn(paths: list, repeat: int) -> dict:
    """Milliseconds from navigating to each saved page until its drawing is on screen (the page's own clock),
    ``repeat`` loads per page after one warm-up load, each in a new tab of one headless Chromium."""
    from playwright.sync_api import sync_playwright

    from .chromium import launch, load_to_drawn

    out = []
    with sync_playwright() as p:
        browser = launch(p)
        for path in paths:
            url = "file://" + os.path.abspath(path)
            times = []
            for i in range(repeat + 1):
                page = browser.new_page(viewport={"width": 1200, "height": 800})
                t = load_to_drawn(page, url)
                page.close()
                if i:
                    times.append(t["page_ms"] / 1e3)
            out.append(times)
        browser.close()
    return {"seconds": out}


# -- table -------------------------------------------------------------------------------------------------------
def measure() -> tuple[list[dict], str]:
    """Per model: its build and (where a browser is installed) load-to-drawn times pooled over ``ROUNDS`` fresh
    processes, with its sizes; and why a build process gave no figures ('' when none failed)."""
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench_graph_view_") as d:
        for _ in range(ROUNDS):
            res = run_json(f"{HERE}:build", REPEAT, d)
            if "error" in res:
                return rows, res["error"]
            if not rows:
                rows = [{**r, "build": Timing([]), "drawn": Timing([])} for r in res["rows"]]
            for row, r in zip(rows, res["rows"]):
                row["build"].samples.extend(r["seconds"])
            if missing():
                continue
            loads = run_json(f"{HERE}:drawn", [r["page"] for r in rows], REPEAT)
            for row, seconds in zip(rows, loads.get("seconds", [[]] * len(rows))):
                row["drawn"].samples.extend(seconds)
                row["drawn"].error = loads.get("error", "")
    return rows, ""


def main() -> str:
    no_browser = missing()
    rows, error = measure()
    out = ["## Notebook graph views", "",
           "Target: each view built in under 1 s, its text at least 10 px. Build: the static picture and the "
           "interactive HTML a notebook cell shows, in fresh toolkit processes "
           f"({ROUNDS} processes, {REPEAT} builds per model in each after one warm-up). Output bytes: those outputs "
           "together. Drawn in Chromium: from opening the page `GraphView.save` writes until a frame showing its "
           f"boxes has been painted (the page's own clock; headless Chromium, {REPEAT} loads per page in each "
           "process after one warm-up, a new tab each time).", "",
           "| model | boxes | build (best / median) | output bytes | saved page bytes | smallest text, px "
           "| drawn in Chromium (best / median) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        shown = "no browser" if no_browser else cell(r["drawn"])
        out.append(f"| {r['model']} | {r['boxes']} | {cell(r['build'])} | {r['output_bytes']:,} | "
                   f"{r['page_bytes']:,} | {r['min_text_px']} | {shown} |")
    if error:
        out.append(f"| n/a ({error.replace('|', '/')}) | | | | | | |")
    if no_browser:
        out += ["", f"No browser: {no_browser}."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(main())
