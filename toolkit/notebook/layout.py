"""Drawing one view of a graph model: Graphviz's ``dot`` lays it out and draws it as SVG (and PNG).

``dot`` (through the ``graphviz`` package) does the layered layout, the edge
routing, room for edge labels (so they never overprint) and clusters: one per
module scope (``__module.conv1``), nested as the modules are. Nodes are drawn
at a fixed text size (``FONT_SIZE`` px; 1 pt of the drawing is 1 px), so a big
graph is a big drawing to scroll, never a small one to squint at. The SVG has
its own opaque white background and dark text, so it reads the same on a light
or a dark notebook theme; the interactive view recolours it with the theme's
CSS variables.

Every node's group carries ``class="node tk-node tk-<role>"``, ``data-node``
(its model id) and ``data-kind``; group boxes (fusion groups, blocks) have a
``text.tk-mark`` the script flips between + and -.

The ``graphviz`` Python package is a declared dependency, but the ``dot``
binary comes from the operating system (``make venv`` installs Debian's
``graphviz``). Where it is missing, ``fallback_svg`` draws the view as one
column of boxes with curved edges beside them, so views still build and the
tests that do not need ``dot`` run; ``has_dot`` tells which one is used.
"""

from __future__ import annotations

import html
import re
import shutil

import graphviz

from .graph_scopes import scope_parts

FONT = "monospace"
FONT_SIZE = 12  # px of a box's text; edge labels and types use SMALL_SIZE
SMALL_SIZE = 10
CHAR_W = 0.6 * FONT_SIZE  # a monospace character's advance, for the fallback's box widths

# role -> (fill, stroke, dashed): light colours on the drawing's own white background
ROLE_STYLE = {
    "op": ("#eef4ff", "#54aeff", False),
    "input": ("#f6f8fa", "#8c959f", False),
    "output": ("#f6f8fa", "#8c959f", False),
    "constant": ("#fff8c5", "#d4a72c", False),
    "fusion": ("#dafbe1", "#2da44e", True),
    "python": ("#fff1e5", "#bc4c00", True),
    "block": ("#fbefff", "#a475f9", True),
    "module": ("#f6f8fa", "#6e7781", True),
}
TEXT = "#1f2328"
MUTED = "#57606a"
EDGE = "#8c959f"
CLUSTER_FILL = "#f6f8fa"
CLUSTER_LINE = "#afb8c1"


def has_dot() -> bool:
    """Whether Graphviz's ``dot`` binary is on the PATH."""
    return shutil.which("dot") is not None


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _h(s: str) -> str:
    return html.escape(str(s), quote=True)


def _lines(n: dict) -> list[str]:
    """A box's text lines: the call (or the label), then the output type."""
    head = list(n.get("call") or [n["label"]])
    return head + ([n["type"]] if n["type"] else [])


def _node_label(n: dict) -> str:
    head = list(n.get("call") or [n["label"]])
    span = ' colspan="2"' if n["children"] else ""
    rows = []
    for i, line in enumerate(head):
        text = f"<b>{_h(line)}</b>" if i == 0 and not n.get("call") else _h(line)
        mark = '<td align="right"><b>+</b></td>' if i == 0 and n["children"] else ""
        rows.append(f'<tr><td align="left">{text}</td>{mark}</tr>' if i == 0 else
                    f'<tr><td align="left"{span}>{text}</td></tr>')
    if n["type"]:
        rows.append(f'<tr><td align="left"{span}><font point-size="{SMALL_SIZE}" color="{MUTED}">'
                    f"{_h(n['type'])}</font></td></tr>")
    return '<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">' + "".join(rows) + "</table>>"


def _expand_fusion_groups(model: dict, vid: str) -> tuple[list, list, dict]:
    """(node and group ids, edges, {group id: its inner node ids}) of a view with every fusion group's subgraph drawn
    in place of its box: edges into the group go to the inner users of that input, edges out of it leave
    from the inner node that computes that output."""
    view, nodes = model["views"][vid], model["nodes"]
    ids, edges, inner = [], list(view["edges"]), {}
    for nid in view["nodes"]:
        n = nodes[nid]
        if n["role"] != "fusion" or len(n["children"]) != 1:
            ids.append(nid)
            continue
        child = model["views"][n["children"][0]]
        ins = [c for c in child["nodes"] if nodes[c]["role"] == "input"]
        ret = next(c for c in child["nodes"] if nodes[c]["role"] == "output")
        body = [c for c in child["nodes"] if c not in ins and c != ret]
        in_name = {c: n["inputs"][i]["name"] for i, c in enumerate(ins) if i < len(n["inputs"])}
        out_src = {}
        for j, r in enumerate(nodes[ret]["inputs"]):
            e = next((e for e in child["edges"] if e["dst"] == ret and e["value"] == r["name"]), None)
            if e is not None and j < len(n["outputs"]) and e["src"] in body:
                out_src[n["outputs"][j]["name"]] = e["src"]
        moved = []
        for e in edges:
            if e["dst"] == nid:
                moved += [{**e, "dst": ce["dst"]} for ce in child["edges"]
                          if in_name.get(ce["src"]) == e["value"] and ce["dst"] in body]
            elif e["src"] == nid:
                if e["value"] in out_src:
                    moved.append({**e, "src": out_src[e["value"]]})
            else:
                moved.append(e)
        edges = moved + [ce for ce in child["edges"] if ce["src"] in body and ce["dst"] in body]
        inner[nid] = body
        ids.append(nid)  # stands for its cluster
    return ids, edges, inner


def to_dot(model: dict, vid: str, rounded: bool = True, expand_groups: bool = False) -> str:
    """The DOT source of one view: its nodes (clustered by module scope) and edges.

    ``rounded=False``: square boxes, for gd's PNG renderer, which draws no outline around rounded ones.
    ``expand_groups``: fusion groups drawn as clusters of their fused ops (the static picture, which cannot
    be clicked open) instead of one box that expands."""
    view, nodes = model["views"][vid], model["nodes"]
    if expand_groups:
        node_ids, edges, inner = _expand_fusion_groups(model, vid)
    else:
        node_ids, edges, inner = view["nodes"], view["edges"], {}
    out = ["digraph G {",
           f'graph [rankdir=TB, nodesep=0.25, ranksep=0.3, pad=0.15, bgcolor="#ffffff", fontname={_q(FONT)}, '
           f'fontsize={SMALL_SIZE}, fontcolor="{MUTED}", labeljust=l, style="{"rounded," if rounded else ""}filled", '
           f'fillcolor="{CLUSTER_FILL}", color="{CLUSTER_LINE}", penwidth=1];',
           f'node [shape=box, style="rounded,filled", fontname={_q(FONT)}, fontsize={FONT_SIZE}, '
           f'fontcolor="{TEXT}", margin="0.1,0.04", height=0.3, penwidth=1.2];',
           f'edge [fontname={_q(FONT)}, fontsize={SMALL_SIZE}, fontcolor="{MUTED}", color="{EDGE}", '
           'arrowsize=0.6, penwidth=1.1];']
    tree: dict = {}  # scope prefix -> {"nodes": [...], "children": {...}}
    root_nodes = []
    for nid in node_ids:
        parts = scope_parts(nodes[nid].get("scope", ""))[view.get("scope_depth", 0):]
        if not parts or nid in inner:
            root_nodes.append(nid)
            continue
        level = tree
        for k, p in enumerate(parts):
            level = level.setdefault(p, {"nodes": [], "children": {}, "path": ".".join(parts[:k + 1])})
            if k < len(parts) - 1:
                level = level["children"]
        level["nodes"].append(nid)

    def node_line(nid: str) -> str:
        n = nodes[nid]
        fill, stroke, dashed = ROLE_STYLE.get(n["role"], ROLE_STYLE["op"])
        style = ("rounded," if rounded else "") + ("filled,dashed" if dashed else "filled")
        return (f'{_q(nid)} [id={_q(nid)}, class={_q("tk-node tk-" + n["role"])}, label={_node_label(n)}, '
                f'fillcolor="{fill}", color="{stroke}", style="{style}"];')

    counter = [0]

    def cluster(name: str, entry: dict) -> None:
        counter[0] += 1
        out.append(f"subgraph {_q(f'cluster_{vid}_{counter[0]}')} {{")
        out.append(f'class="tk-scope"; label={_q(name)};')
        out.extend(node_line(nid) for nid in entry["nodes"])
        for child, sub in entry["children"].items():
            cluster(child, sub)
        out.append("}")

    for nid in root_nodes:
        if nid not in inner:
            out.append(node_line(nid))
            continue
        _, stroke, _ = ROLE_STYLE["fusion"]
        out.append(f"subgraph {_q(f'cluster_{nid}')} {{")
        out.append(f'class="tk-fusion-group"; label={_q(nodes[nid]["label"])}; style="{"rounded," if rounded else ""}dashed,filled"; '
                   f'color="{stroke}"; penwidth=1.5;')
        out.extend(node_line(c) for c in inner[nid])
        out.append("}")
    for name, entry in tree.items():
        cluster(name, entry)
    for e in edges:
        label = f", label={_q(' ' + e['label'])}" if e["label"] else ""
        out.append(f'{_q(e["src"])} -> {_q(e["dst"])} [class="tk-edge"{label}];')
    out.append("}")
    return "\n".join(out)


def _postprocess(svg: str, model: dict) -> str:
    """dot's SVG as a fragment: no prolog or comments, 1 pt = 1 px, data attributes on node groups."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S).replace("&#45;", "-")
    if "xlink:" not in svg.replace("xmlns:xlink", ""):
        svg = svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "", 1)
    m = re.search(r'viewBox="0\.00 0\.00 ([\d.]+) ([\d.]+)"', svg)
    if m:
        w, h = m.groups()
        svg = re.sub(r'<svg width="[\d.]+pt" height="[\d.]+pt"', f'<svg width="{float(w):g}" height="{float(h):g}"',
                     svg, count=1)
    nodes = model["nodes"]

    def node_group(m: re.Match) -> str:
        nid, cls, body = m.groups()
        n = nodes.get(nid)
        if n is None:
            return m.group(0)
        tip = n["kind"] + (f" @ {n['source']}" if n.get("source") else "")
        body = re.sub(r"<title>.*?</title>", f"<title>{_h(tip)}</title>", body, count=1, flags=re.S)
        if n["children"]:
            body = re.sub(r"<text ([^>]*)>\+</text>", r'<text class="tk-mark" \1>+</text>', body, count=1)
        return f'<g class="node {cls}" data-node="{nid}" data-kind="{_h(n["kind"])}">{body}</g>'

    svg = re.sub(r'<g id="([^"]+)" class="node ([^"]*)">(.*?)</g>', node_group, svg, flags=re.S)
    return re.sub(r'<g id="[^"]*" class="', '<g class="', svg)  # ids would repeat across views on a page


def render_svg(model: dict, vid: str, expand_groups: bool = False) -> str:
    """One view drawn as SVG (dot when installed, else the one-column fallback)."""
    if not has_dot():
        return fallback_svg(model, vid)
    out = graphviz.pipe("dot", "svg", to_dot(model, vid, expand_groups=expand_groups).encode("utf-8"), quiet=True)
    return _postprocess(out.decode("utf-8"), model)


def render_png(model: dict, vid: str) -> bytes | None:
    """One view as a PNG (None without dot), fusion groups expanded: the picture untrusted outputs show.

    gd's renderer writes 8-bit palette PNGs, about a quarter of the size of cairo's RGBA ones for these
    drawings (a 50-layer MLP: 170 kB against 780 kB); cairo where a Graphviz build lacks gd."""
    if not has_dot():
        return None
    try:
        return graphviz.pipe("dot", "png", to_dot(model, vid, rounded=False, expand_groups=True).encode("utf-8"),
                             renderer="gd", quiet=True)
    except graphviz.CalledProcessError:
        return graphviz.pipe("dot", "png", to_dot(model, vid, expand_groups=True).encode("utf-8"), quiet=True)


def fallback_svg(model: dict, vid: str) -> str:
    """One column of boxes in the view's (topological) order, each edge a curve on the right."""
    view, nodes = model["views"][vid], model["nodes"]
    gap, pad, line_h = 22.0, 12.0, FONT_SIZE + 4.0
    box: dict = {}
    y = pad
    width = 0.0
    for nid in view["nodes"]:
        lines = _lines(nodes[nid])
        w = max(len(s) for s in lines) * CHAR_W + 20 + (14 if nodes[nid]["children"] else 0)
        h = len(lines) * line_h + 8
        box[nid] = (pad, y, w, h)
        width = max(width, w)
        y += h + gap
    right = pad + width
    edges = []
    for k, e in enumerate(view["edges"]):
        x0, y0, w0, h0 = box[e["src"]]
        x1, y1, w1, h1 = box[e["dst"]]
        bulge = right + 16 + 10 * (k % 6)
        a, b = (x0 + w0, y0 + h0 / 2), (x1 + w1, y1 + h1 / 2)
        edges.append(f'<g class="edge tk-edge"><path fill="none" stroke="{EDGE}" d="M{a[0]:.1f},{a[1]:.1f} '
                     f'C{bulge:.1f},{a[1]:.1f} {bulge:.1f},{b[1]:.1f} {b[0] + 6:.1f},{b[1]:.1f}"/>'
                     f'<polygon fill="{EDGE}" points="{b[0]:.1f},{b[1]:.1f} {b[0] + 7:.1f},{b[1] - 3.5:.1f} '
                     f'{b[0] + 7:.1f},{b[1] + 3.5:.1f}"/></g>')
    parts = []
    for nid in view["nodes"]:
        n = nodes[nid]
        x, y0, w, h = box[nid]
        fill, stroke, dashed = ROLE_STYLE.get(n["role"], ROLE_STYLE["op"])
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        parts.append(f'<g class="node tk-node tk-{n["role"]}" data-node="{nid}" data-kind="{_h(n["kind"])}">'
                     f'<title>{_h(n["kind"])}</title><rect x="{x:.1f}" y="{y0:.1f}" width="{w:.1f}" '
                     f'height="{h:.1f}" rx="4" fill="{fill}" stroke="{stroke}"{dash}/>')
        for i, line in enumerate(_lines(n)):
            small = i == len(_lines(n)) - 1 and n["type"]
            parts.append(f'<text x="{x + 10:.1f}" y="{y0 + 4 + (i + 1) * line_h - 4:.1f}" font-family="{FONT}" '
                         f'font-size="{SMALL_SIZE if small else FONT_SIZE}" fill="{MUTED if small else TEXT}">'
                         f"{_h(line)}</text>")
        if n["children"]:
            parts.append(f'<text class="tk-mark" x="{x + w - 6:.1f}" y="{y0 + line_h:.1f}" text-anchor="end" '
                         f'font-family="{FONT}" font-size="{FONT_SIZE}" fill="{TEXT}">+</text>')
        parts.append("</g>")
    total_w, total_h = right + 16 + 10 * 6 + pad, y - gap + pad
    return (f'<svg width="{total_w:.0f}" height="{total_h:.0f}" viewBox="0 0 {total_w:.1f} {total_h:.1f}" '
            f'xmlns="http://www.w3.org/2000/svg"><g class="graph"><rect class="tk-bg" width="100%" height="100%" '
            f'fill="#ffffff"/>{"".join(edges)}{"".join(parts)}</g></svg>')
