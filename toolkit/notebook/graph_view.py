"""``GraphView``: an IR graph drawn as a layered DAG you can zoom, pan, click and expand.

Nodes show their op and output type, edges their shapes; ``prim::If``/``prim::Loop``
blocks and ``prim::FusionGroup`` subgraphs are boxes that expand (click) into their
own drawing, with the fused kernel's generated source. Clicking a node shows its
inputs, outputs, source line, scope and, given a profile, its time. The SVG is
drawn in Python (``layout.py``), so a saved view or a notebook without JavaScript
still shows the graph; the script shipped in ``static/`` adds the interaction.

    >>> GraphView(fn.graph_for(x, y))               # in a notebook cell: draws it
    >>> GraphView.compare(fn, x, y)                 # before / after optimization, side by side
    >>> GraphView(fn.graph_for(x, y), profile=prof).save("graph.html")
"""

from __future__ import annotations

import os

from . import _html
from ._html import esc
from .graph_model import graph_model


def _resolve(obj):
    """(graph, kernels, default title) of a Graph, a graph_for result, or a scripted/traced function or module."""
    from ..jit.ir import Graph

    if isinstance(obj, Graph):
        return obj, None, "graph"
    if hasattr(obj, "kernels") and isinstance(getattr(obj, "graph", None), Graph):
        return obj.graph, obj.kernels, "graph_for"
    graph = getattr(obj, "inlined_graph", None) or getattr(obj, "graph", None)  # traced modules: calls inlined
    if isinstance(graph, Graph):
        return graph, None, getattr(obj, "__name__", None) or getattr(obj, "original_name", "graph")
    raise TypeError(f"GraphView: expected a toolkit.jit Graph, a graph_for result, or a scripted or traced "
                    f"function or module, got {type(obj).__name__}")


def _edge_path(points: list, src: dict, dst: dict) -> str:
    pts = [list(p) for p in points]
    pts[0][1] += src["h"] / 2
    pts[-1][1] -= dst["h"] / 2 + 3
    d = [f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        my = (y0 + y1) / 2
        d.append(f"C{x0:.1f},{my:.1f} {x1:.1f},{my:.1f} {x1:.1f},{y1:.1f}")
    return " ".join(d)


def _node_svg(n: dict) -> str:
    x0, y0 = n["x"] - n["w"] / 2, n["y"] - n["h"] / 2
    tip = n["kind"] + (f" @ {n['source']}" if n.get("source") else "")
    parts = [f'<g class="tk-node tk-{n["role"]}{" tk-outer" if n["kind"] == "outer" else ""}" '
             f'data-node="{n["id"]}" data-kind="{esc(n["kind"])}" transform="translate({x0:.1f},{y0:.1f})">',
             f"<title>{esc(tip)}</title>",
             f'<rect width="{n["w"]:.1f}" height="{n["h"]:.1f}" rx="5"/>',
             f'<text x="{n["w"] / 2:.1f}" y="14">{esc(n["label"])}</text>',
             f'<text class="tk-type" x="{n["w"] / 2:.1f}" y="{n["h"] - 8:.1f}">{esc(n["type"])}</text>']
    if n["children"]:
        parts.append(f'<text class="tk-mark" x="{n["w"] - 5:.1f}" y="13">+</text>')
    parts.append("</g>")
    return "".join(parts)


def _view_svg(model: dict, vid: str, marker: str) -> str:
    view, nodes = model["views"][vid], model["nodes"]
    w, h = max(view["width"], 60), max(view["height"], 40)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.1f} {h:.1f}" width="{w:.0f}" '
           f'height="{h:.0f}" data-view="{vid}">',
           f'<defs><marker id="{marker}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#8c959f"/></marker></defs><g class="tk-edges">']
    for e in view["edges"]:
        src, dst = nodes[e["src"]], nodes[e["dst"]]
        out.append(f'<path class="tk-edge" data-value="{esc(e["value"])}" marker-end="url(#{marker})" '
                   f'd="{_edge_path(e["points"], src, dst)}"/>')
        if e["label"]:
            (x0, y0), (x1, y1) = e["points"][0], e["points"][1]
            lx, ly = (x0 + x1) / 2 + 4, y0 + src["h"] / 2 + (y1 - y0 - src["h"] / 2 - dst["h"] / 2) / 2 + 3
            out.append(f'<text class="tk-edge-label" x="{lx:.1f}" y="{ly:.1f}">{esc(e["label"])}</text>')
    out.append('</g><g class="tk-nodes">')
    out += [_node_svg(nodes[i]) for i in view["nodes"]]
    out.append("</g></svg>")
    return "".join(out)


def _view_html(model: dict, vid: str, uid: str, title: str | None = None) -> str:
    view = model["views"][vid]
    parts = [f'<div class="tk-view" data-view="{vid}"><div class="tk-toolbar"><span class="tk-title">'
             f'{esc(title or view["title"])}</span>'
             '<button data-act="zoom-in" title="zoom in">+</button>'
             '<button data-act="zoom-out" title="zoom out">&#8722;</button>'
             '<button data-act="fit" title="fit the whole graph">fit</button></div>',
             f'<div class="tk-canvas">{_view_svg(model, vid, f"{uid}-{vid}-arrow")}</div>',
             '<div class="tk-panels">']
    for nid in view["nodes"]:
        n = model["nodes"][nid]
        if not n["children"]:
            continue
        cls = "tk-panel" + ("" if n["role"] == "fusion" else " tk-block-panel")
        parts.append(f'<div class="{cls}" data-panel="{nid}" hidden><div class="tk-panel-head">'
                     f'{esc(n["label"])} <code>{esc(n["kind"])}</code></div>')
        parts += [_view_html(model, child, uid) for child in n["children"]]
        if n.get("kernel"):
            where = f" ({esc(n['kernel_path'])})" if n.get("kernel_path") else ""
            parts.append(f'<details open><summary>generated kernel{where}</summary>'
                         f'<pre class="tk-kernel">{esc(n["kernel"])}</pre></details>')
        parts.append("</div>")
    parts.append("</div></div>")
    return "".join(parts)


def _public_nodes(model: dict) -> dict:
    """What the script needs for node details (coordinates and sizes stay in the SVG)."""
    skip = ("x", "y", "w", "h", "kernel")
    return {k: {f: v for f, v in n.items() if f not in skip} for k, n in model["nodes"].items()}


class GraphView(_html.View):
    """An interactive drawing of a graph (see the module docstring); ``panes`` hold one model per drawing."""

    def __init__(self, obj=None, *, kernels=None, profile=None, title: str | None = None,
                 show_constants: bool = False):
        self.panes: list[tuple[str, dict]] = []
        if obj is not None:
            self.add(obj, kernels=kernels, profile=profile, title=title, show_constants=show_constants)

    def add(self, obj, *, kernels=None, profile=None, title: str | None = None,
            show_constants: bool = False) -> GraphView:
        """Draw another graph beside the ones already here."""
        graph, found_kernels, default = _resolve(obj)
        model = graph_model(graph, kernels if kernels is not None else found_kernels, profile, show_constants,
                            title=title or default, prefix=f"p{len(self.panes)}")
        self.panes.append((title or default, model))
        return self

    @classmethod
    def compare(cls, fn, *inputs, profile=None, show_constants: bool = False) -> GraphView:
        """``fn.graph`` beside ``fn.graph_for(*inputs)``: the graph as traced or scripted, and as it runs."""
        view = cls(getattr(fn, "inlined_graph", None) or fn.graph, title="before: graph", show_constants=show_constants)
        return view.add(fn.graph_for(*inputs), title="after: graph_for (optimized, fused)", profile=profile,
                        show_constants=show_constants)

    @property
    def model(self) -> dict:
        """The first drawing's model (``graph_model``'s views, nodes and edges)."""
        if not self.panes:
            raise ValueError("GraphView: nothing drawn yet (pass a graph or call add)")
        return self.panes[0][1]

    def to_html(self) -> str:
        """The self-contained HTML fragment (style, SVG, script) a notebook output holds."""
        if not self.panes:
            raise ValueError("GraphView: nothing drawn yet (pass a graph or call add)")
        uid = _html.new_uid("tkgv")
        nodes: dict = {}
        body = ['<div class="tk-side">' if len(self.panes) > 1 else "<div>"]
        for title, model in self.panes:
            nodes.update(_public_nodes(model))
            body.append(_view_html(model, model["root"], uid, title))
        body.append('</div><div class="tk-info">Click a node for its types, source line and time; '
                    "click a dashed box to expand it; scroll to zoom, drag to pan.</div>")
        body.append(_html.json_script({"nodes": nodes}, "tk-model"))
        return _html.root("".join(body), uid)

    def save(self, path: str | os.PathLike) -> str:
        """Write a standalone HTML page of the view (atomically); returns the path."""
        return _html.write_atomic(path, _html.document(self.to_html(), self.panes[0][0] if self.panes else ""))

    def summary(self) -> str:
        from .graph_model import count

        parts = []
        for title, model in self.panes:
            top = model["root"]
            nodes = sum(count(model, role, top) for role in ("op", "fusion", "block", "python"))
            python = count(model, "python")
            parts.append(f"{title}: {nodes} nodes, {count(model, 'fusion')} fusion groups, "
                         + (f"{python} Python fallback nodes, " if python else "") + f"{len(model['views'])} views")
        return "<GraphView " + "; ".join(parts) + ">"

    def __repr__(self) -> str:
        return self.summary()
