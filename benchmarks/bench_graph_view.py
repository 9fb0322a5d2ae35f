"""Notebook graph views of real models: build time (Python side, Graphviz's dot included) and output size.

Models: the seed's Net, a 50-layer MLP (``nn.Sequential`` of Linear + ReLU) and
``nn.TransformerEncoderLayer(16, 2)``, each traced. For each: boxes drawn,
seconds to build what a notebook cell shows (the static picture and the
interactive HTML, as ``_ipython_display_`` sends them; best of ``REPEAT``),
bytes of those outputs, and the smallest text size in the drawing (px; the
views never scale text below it). Target: under 1 s each, text at least 10 px.

    .venv/bin/python -m benchmarks.bench_graph_view
"""

from __future__ import annotations

import json
import re
import time

REPEAT = 3


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


def measure() -> list[dict]:
    import toolkit
    from toolkit.notebook.graph_model import count
    from toolkit.notebook.layout import has_dot

    rows = []
    for name, model, x in _models():
        traced = toolkit.jit.trace(model, (x,))
        best = float("inf")
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            view, static, html = _build(traced)
            best = min(best, time.perf_counter() - t0)
        sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', static["image/svg+xml"])]
        m = view.model
        rows.append({"model": name, "boxes": count(m, None, m["root"]), "seconds": round(best, 3),
                     "svg_bytes": len(static["image/svg+xml"]), "png_base64_bytes": len(static.get("image/png", "")),
                     "html_bytes": len(html), "total_bytes": sum(len(v) for v in static.values()) + len(html),
                     "min_text_px": min(sizes) if sizes else None, "dot": has_dot()})
    return rows


def main() -> None:
    rows = measure()
    head = f"{'model':32} {'boxes':>5} {'build s':>8} {'svg':>9} {'png b64':>9} {'html':>9} {'total':>9} {'min px':>6}"
    print(head)
    for r in rows:
        print(f"{r['model']:32} {r['boxes']:>5} {r['seconds']:>8.3f} {r['svg_bytes']:>9,} {r['png_base64_bytes']:>9,} "
              f"{r['html_bytes']:>9,} {r['total_bytes']:>9,} {r['min_text_px']!s:>6}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
