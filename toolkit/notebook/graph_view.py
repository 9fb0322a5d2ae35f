"""``GraphView``: an IR graph drawn as a layered DAG you can zoom, pan, click and expand.

Nodes show their op and output type, edges their shapes; ``prim::If``/``prim::Loop``
blocks and ``prim::FusionGroup`` subgraphs are boxes that expand (click) into their
own drawing, with the fused kernel's generated source. Clicking a node shows its
inputs, outputs, source line, scope and, given a profile, its time. The SVG is
drawn by Graphviz (``layout.py``) at a fixed text size; the canvas scrolls, and
zoom (buttons, Ctrl/Cmd + wheel) scales it. Node details and expanded groups
open beside the clicked box. A traced model's submodules holding several nodes
start collapsed into boxes that open the same way (``graph_scopes.py``); the
static picture draws every module as a cluster and fusion groups open. The toolbar's search box
highlights the boxes whose name (op, attribute path such as ``conv1.weight``, value) holds the text
and Enter scrolls to the next; its plumbing toggle swaps in the drawing with constants, GetAttr chains
and lists as boxes (carried for graphs up to ``PLUMBING_MAX_NODES``); a drawing bigger than its canvas
gets a minimap in the corner that frames the part in sight and scrolls where clicked.

Saved notebooks: JupyterLab 4 shows an *untrusted* output (a notebook reopened
elsewhere) through its safe renderers only: ``text/html`` is sanitized (SVG,
style and script stripped: the drawing turns to run-on text), ``image/svg+xml``
is refused ("Cannot display an untrusted SVG"), ``image/png`` is shown. And it
picks ``text/html`` over any image in the same bundle, trusted or not. So in
IPython a view displays as two outputs (``_ipython_display_``): the static
picture (``image/svg+xml`` for trusted front ends, ``image/png`` for untrusted
ones, ``text/plain``), then the interactive HTML, whose markup sanitized is a
one-line note (its drawings sit in script elements) and whose script, once it
runs, hides the picture above it. ``_repr_mimebundle_`` (other front ends,
nbconvert) carries all of them in one bundle.

    >>> GraphView(fn.graph_for(x, y))               # in a notebook cell: draws it
    >>> GraphView.compare(fn, x, y)                 # before / after optimization, side by side
    >>> GraphView(fn.graph_for(x, y), profile=prof).save("graph.html")
"""

from __future__ import annotations

import base64
import io
import os
import re

from PIL import Image, ImageDraw, ImageFont

from ..jit.ir.graph import Graph
from . import _html
from ._html import esc
from .graph_model import count, graph_model
from .graph_scopes import collapse_scopes
from .layout import FONT, FONT_SIZE, render_png, render_svg


def _resolve(obj):
    """(graph, kernels, default title) of a Graph, a graph_for result, or a scripted/traced function or module."""
    if isinstance(obj, Graph):
        return obj, None, "graph"
    if hasattr(obj, "kernels") and isinstance(getattr(obj, "graph", None), Graph):
        return obj.graph, obj.kernels, "graph_for"
    graph = getattr(obj, "inlined_graph", None) or getattr(obj, "graph", None)  # traced modules: calls inlined
    if isinstance(graph, Graph):
        return graph, None, getattr(obj, "__name__", None) or getattr(obj, "original_name", "graph")
    raise TypeError(f"GraphView: expected a toolkit.jit Graph, a graph_for result, or a scripted or traced "
                    f"function or module, got {type(obj).__name__}")


# the plumbing drawing (constants, GetAttr chains, lists as boxes) rides along, unpacked on demand, for
# graphs up to this many nodes: it is several times the size of the folded drawing (a traced model's every
# parameter is a GetAttr chain), so a big graph's output would grow by megabytes for a rarely used view;
# ``GraphView(obj, show_plumbing=True)`` still draws any graph that way
PLUMBING_MAX_NODES = 64


def _view_html(model: dict, vid: str, uid: str, title: str | None, deferred: bool, plumbing: str | None = None) -> str:
    """One view's toolbar, canvas and expandable panels; ``plumbing``: ``"off"``/``"on"`` puts the toggle
    between the drawing without and with plumbing in the toolbar (top-level views with a twin drawing)."""
    view = model["views"][vid]
    svg = render_svg(model, vid)
    if deferred:  # inside a script: an untrusted (sanitized) output shows none of it as stray text
        svg = '<script type="text/x-toolkit-svg" class="tk-svg">' + svg.replace("</", "<\\/") + "</script>"
    toggle = ""
    if plumbing:
        pressed = "true" if plumbing == "on" else "false"
        toggle = (f'<button data-act="plumbing" aria-pressed="{pressed}" title="show constants, GetAttr chains '
                  'and lists as boxes of their own">plumbing</button>')
    parts = [f'<div class="tk-view" data-view="{vid}"><div class="tk-toolbar"><span class="tk-title">'
             f'{esc(title or view["title"])}</span>'
             '<input type="search" class="tk-search" placeholder="find" aria-label="find nodes by name" size="12">'
             '<span class="tk-count"></span>' + toggle +
             '<button data-act="zoom-in" title="zoom in (or Ctrl/Cmd + wheel)">+</button>'
             '<button data-act="zoom-out" title="zoom out (or Ctrl/Cmd + wheel)">&#8722;</button>'
             '<button data-act="one" title="actual size">1:1</button>'
             '<button data-act="fit" title="fit the whole graph">fit</button></div>',
             f'<div class="tk-stage"><div class="tk-canvas">{svg}</div></div>', '<div class="tk-panels">']
    for nid in view["nodes"]:
        n = model["nodes"][nid]
        if not n["children"]:
            continue
        cls = "tk-panel" + {"fusion": "", "module": " tk-module-panel"}.get(n["role"], " tk-block-panel")
        parts.append(f'<div class="{cls}" data-panel="{nid}" hidden><div class="tk-panel-head">'
                     f'{esc(n["label"])} <code>{esc(n["kind"])}</code></div>')
        parts += [_view_html(model, child, uid, None, deferred) for child in n["children"]]
        if n.get("kernel"):
            where = f" ({esc(n['kernel_path'])})" if n.get("kernel_path") else ""
            parts.append(f'<details open><summary>generated kernel{where}</summary>'
                         f'<pre class="tk-kernel">{esc(n["kernel"])}</pre></details>')
        parts.append("</div>")
    parts.append("</div></div>")
    return "".join(parts)


def _static_svg(panes: list) -> str:
    """The root view of every pane in one SVG, side by side under their titles, fusion groups drawn open as
    clusters of their ops (the static picture: nothing in it can be clicked open)."""
    svgs = [(title, render_svg(model, model["root"], expand_groups=True)) for title, model in panes]
    if len(svgs) == 1:
        return svgs[0][1]
    x, gap, head = 0.0, 24.0, 22.0
    inner, height = [], 0.0
    for title, svg in svgs:
        w, h = (float(v) for v in re.search(r'<svg width="([\d.]+)" height="([\d.]+)"', svg).groups())
        inner.append(f'<text x="{x + 4:.1f}" y="15" font-family="{FONT}" font-size="{FONT_SIZE}" '
                     f'font-weight="bold" fill="#1f2328">{esc(title)}</text>')
        inner.append(svg.replace("<svg ", f'<svg x="{x:.1f}" y="{head}" ', 1))
        x += w + gap
        height = max(height, h)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{x - gap:.0f}" height="{height + head:.0f}" '
            f'viewBox="0 0 {x - gap:.1f} {height + head:.1f}"><rect width="100%" height="100%" fill="#ffffff"/>'
            + "".join(inner) + "</svg>")


def _side_by_side(titles: list, pngs: list) -> bytes:
    """PNG drawings placed left to right, each under its title (Pillow)."""
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs]
    gap, head = 24, 24
    out = Image.new("RGB", (sum(i.width for i in images) + gap * (len(images) - 1),
                            head + max(i.height for i in images)), "white")
    draw = ImageDraw.Draw(out)
    try:
        font = ImageFont.load_default(size=FONT_SIZE + 1)
    except TypeError:  # Pillow before 10.1: one fixed size
        font = ImageFont.load_default()
    x = 0
    for title, image in zip(titles, images):
        draw.text((x + 4, 4), title, fill="#1f2328", font=font)
        out.paste(image, (x, head))
        x += image.width + gap
    buf = io.BytesIO()
    out.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _public_nodes(model: dict) -> dict:
    """What the script needs for node details (coordinates and sizes stay in the SVG)."""
    skip = ("x", "y", "w", "h", "kernel")
    return {k: {f: v for f, v in n.items() if f not in skip} for k, n in model["nodes"].items()}


class GraphView(_html.View):
    """An interactive drawing of a graph (see the module docstring); ``panes`` hold one model per drawing."""

    def __init__(self, obj=None, *, kernels=None, profile=None, title: str | None = None,
                 show_constants: bool = False, show_plumbing: bool = False):
        self.panes: list[tuple[str, dict]] = []
        if obj is not None:
            self.add(obj, kernels=kernels, profile=profile, title=title, show_constants=show_constants,
                     show_plumbing=show_plumbing)

    def add(self, obj, *, kernels=None, profile=None, title: str | None = None,
            show_constants: bool = False, show_plumbing: bool = False) -> GraphView:
        """Draw another graph beside the ones already here (``show_plumbing``: constants, GetAttr and
        list constructions as boxes of their own instead of arguments of their users)."""
        graph, found_kernels, default = _resolve(obj)
        model = graph_model(graph, kernels if kernels is not None else found_kernels, profile, show_constants,
                            title=title or default, prefix=f"p{len(self.panes)}", show_plumbing=show_plumbing)
        model["top"] = collapse_scopes(model, model["root"])  # what the interactive drawing opens on
        if not show_plumbing and len(model["nodes"]) <= PLUMBING_MAX_NODES:
            twin = graph_model(graph, kernels if kernels is not None else found_kernels, profile, True,
                               title=title or default, prefix=f"p{len(self.panes)}s", show_plumbing=True)
            twin["top"] = collapse_scopes(twin, twin["root"])
            model["plumbing"] = twin  # the toolbar's plumbing toggle switches to it
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

    def _check(self) -> None:
        if not self.panes:
            raise ValueError("GraphView: nothing drawn yet (pass a graph or call add)")

    def to_html(self, deferred: bool = False) -> str:
        """The self-contained HTML fragment (style, SVG, script) a notebook output holds.

        ``deferred``: the drawings go inside script elements the page's script unpacks, so the markup left
        when a front end strips scripts (an untrusted JupyterLab output) is a one-line note; used when the
        static picture is shown as an output of its own (``_ipython_display_``)."""
        self._check()
        uid = _html.new_uid("tkgv")
        nodes: dict = {}
        body = ['<div class="tk-side">' if len(self.panes) > 1 else "<div>"]
        for title, model in self.panes:
            nodes.update(_public_nodes(model))
            twin = model.get("plumbing")
            body.append(_view_html(model, model.get("top", model["root"]), uid, title, deferred,
                                   "off" if twin else None))
            if twin:  # as a JSON string: no markup of it shows (or counts) until the toggle unpacks it
                html_twin = _view_html(twin, twin["top"], uid, title, False, "on")
                body.append(_html.json_script({"html": html_twin, "nodes": _public_nodes(twin)}, "tk-plumbing"))
        body.append('</div><div class="tk-help">Click a box for its details, a dashed box to expand it; '
                    "drag to pan, Ctrl/Cmd + wheel to zoom.</div><div class=\"tk-info\" hidden></div>")
        if deferred:
            body.append('<div class="tk-untrusted-note">Interactive graph view: run the cell or trust the notebook; '
                        "the picture above is its static copy.</div>")  # the script hides it where it runs
        body.append(_html.json_script({"nodes": nodes}, "tk-model"))
        html = _html.root("".join(body), uid, extra="graph")
        if deferred:
            html = html.replace(f'<div class="tk-root tk-graph" id="{uid}">',
                                f'<div class="tk-root tk-graph" id="{uid}" data-static-twin="1">', 1)
        return html

    def to_svg(self) -> str:
        """The static picture: every pane's top-level drawing, as one standalone SVG document."""
        self._check()
        return _static_svg(self.panes)

    def to_png(self) -> bytes | None:
        """Every pane's top-level drawing as one PNG, side by side under their titles (None without dot)."""
        self._check()
        pngs = [render_png(model, model["root"]) for _, model in self.panes]
        if any(p is None for p in pngs):
            return None
        return pngs[0] if len(pngs) == 1 else _side_by_side([t for t, _ in self.panes], pngs)

    def static_bundle(self) -> dict:
        """``text/plain``, ``image/svg+xml`` and (with dot) ``image/png``: what survives an untrusted reload."""
        bundle = {"text/plain": repr(self), "image/svg+xml": self.to_svg()}
        png = self.to_png()
        if png is not None:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        return bundle

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = {**self.static_bundle(), "text/html": self.to_html()}
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def _ipython_display_(self) -> None:
        """Two outputs: the static picture, then the interactive view (see the module docstring)."""
        from IPython.display import display  # optional: IPython

        display(self.static_bundle(), raw=True)
        display({"text/plain": "", "text/html": self.to_html(deferred=True)}, raw=True)

    def save(self, path: str | os.PathLike) -> str:
        """Write a standalone HTML page of the view (atomically); returns the path."""
        return _html.write_atomic(path, _html.document(self.to_html(), self.panes[0][0] if self.panes else ""))

    def summary(self) -> str:
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
