"""The state a graph view draws: an IR graph as nested views of laid-out nodes and edges.

Every block of the IR becomes a *view*: the top graph, each block of a
``prim::If``/``prim::Loop`` and each ``prim::FusionGroup``'s subgraph. A node
that owns blocks or a subgraph is a *group* box in its view whose ``children``
name the views it expands to; a fusion group also carries its generated kernel
source. Constants are folded into their users' inputs (``show_constants=True``
draws them). The model is plain JSON-able data, so it is what tests check and
what the HTML view embeds.

    >>> m = graph_model(fn.graph_for(x, y))
    >>> [n["kind"] for n in m["nodes"].values() if n["role"] == "fusion"]
    ['prim::FusionGroup']
"""

from __future__ import annotations

import linecache
from typing import Any

from .layout import layout

CHAR_W = 6.6
NODE_H = 38.0
IO_H = 34.0


def short_type(t) -> str:
    """``Float(4, 8)`` for a tensor type (strides, device and requires_grad left to the details), else the type."""
    from ..jit import types as T

    if isinstance(t, T.TensorType):
        from .._core import dtypes as _dt

        head = _dt.title(t.dtype) if t.dtype is not None else "Tensor"
        if t.sizes is None:
            return head
        return f"{head}({', '.join('*' if s is None else str(s) for s in t.sizes)})"
    return str(t)


def edge_label(t) -> str:
    """What an edge carrying a value of type ``t`` is labelled with: the shape, or the type of a non-tensor."""
    from ..jit import types as T

    if isinstance(t, T.TensorType):
        if t.sizes is None:
            return ""
        return "[" + ", ".join("*" if s is None else str(s) for s in t.sizes) + "]"
    return str(t)


def profile_times(profile) -> dict:
    """``{event name: (total us, calls)}`` from a ``profile``, an ``EventList`` or a dict already in that form."""
    if profile is None:
        return {}
    if isinstance(profile, dict):
        return profile
    events = profile.events() if hasattr(profile, "events") and callable(profile.events) else profile
    out: dict = {}
    for e in events:
        total, calls = out.get(e.key, (0.0, 0))
        out[e.key] = (total + e.cpu_time_total, calls + getattr(e, "count", 1))
    return out


class _Builder:
    def __init__(self, kernels, times: dict, show_constants: bool, prefix: str = ""):
        self.prefix = prefix
        self.kernels = list(kernels or [])
        self.times = times
        self.show_constants = show_constants
        self.nodes: dict[str, dict] = {}
        self.views: dict[str, dict] = {}
        self.fusion_index: dict = {}
        self.constants: dict = {}  # constant Value -> its printed value, shared by nested blocks

    def _new_id(self, prefix: str, table: dict) -> str:
        return f"{self.prefix}{prefix}{len(table)}"

    # -- one node -------------------------------------------------------------------------------
    def _node_entry(self, role: str, kind: str, label: str, type_text: str) -> dict:
        nid = self._new_id("n", self.nodes)
        width = max(len(label), len(type_text)) * CHAR_W + 22
        entry = {"id": nid, "role": role, "kind": kind, "label": label, "type": type_text,
                 "w": round(max(width, 56.0), 1), "h": IO_H if role in ("input", "output") else NODE_H,
                 "inputs": [], "outputs": [], "attributes": {}, "source": None, "code": None, "scope": "",
                 "children": [], "kernel": None, "time_us": None, "calls": None}
        self.nodes[nid] = entry
        return entry

    def _timing(self, entry: dict, key: str) -> None:
        hits = [(t, c) for name, (t, c) in self.times.items() if name == key or name.startswith(key + ":")]
        if hits:
            entry["time_us"] = round(sum(t for t, _ in hits), 3)
            entry["calls"] = sum(c for _, c in hits)

    def _op_node(self, n, constant_text: dict) -> dict:
        from ..jit.printer import format_constant

        kind = n.kind
        role = "op"
        label = kind.split("::", 1)[-1]
        if kind == "prim::FusionGroup":
            role = "fusion"
            i = self.fusion_index.setdefault(n, len(self.fusion_index))
            label = f"FusionGroup_{i}"
        elif n.blocks:
            role = "block"
        elif kind == "prim::Constant":
            role = "constant"
            label = format_constant(n.attributes["value"]) if "value" in n.attributes else "None"
        elif kind == "prim::PythonOp":  # runs as Python (script fallback, @ignore): drawn apart from compiled ops
            role = "python"
            label = f"PythonOp {n.attributes['name']}" if "name" in n.attributes else "PythonOp"
        outs = ", ".join(short_type(o.type) for o in n.outputs)
        entry = self._node_entry(role, kind, label, outs)
        if n.blocks or role == "fusion":
            entry["w"] += 14  # room for the expand mark
        entry["inputs"] = [{"name": "%" + v.debug_name, "type": str(v.type),
                            "constant": constant_text.get(v)} for v in n.inputs]
        entry["outputs"] = [{"name": "%" + o.debug_name, "type": str(o.type)} for o in n.outputs]
        entry["attributes"] = {k: (short_type(v) if k == "Subgraph" else _attr_text(v))
                               for k, v in n.attributes.items() if k != "Subgraph"}
        if n.source:
            entry["source"] = f"{n.source[0]}:{n.source[1]}"
            line = linecache.getline(n.source[0], n.source[1]).strip()
            entry["code"] = line or None
        entry["scope"] = n.scope
        if role == "fusion":
            i = self.fusion_index[n]
            sub = n.attributes["Subgraph"]
            entry["children"] = [self.view(sub.block, f"{label} subgraph", sub.inputs, sub.outputs)]
            if i < len(self.kernels):
                k = self.kernels[i]
                entry["kernel"] = k.source()
                entry["kernel_path"] = str(k.source_path()) if hasattr(k, "source_path") else None
                self._timing(entry, getattr(k, "name", f"prim::FusionGroup_{i}"))
            else:
                self._timing(entry, f"prim::FusionGroup_{i}")
        else:
            for bi, b in enumerate(n.blocks):
                entry["children"].append(self.view(b, f"{kind} block{bi}", b.inputs, b.outputs))
            self._timing(entry, kind)
        return entry

    # -- one block ------------------------------------------------------------------------------
    def view(self, block, title: str, inputs, outputs) -> str:
        from ..jit.printer import format_constant

        vid = self._new_id("v", self.views)
        view: dict = {"id": vid, "title": title, "nodes": [], "edges": [], "width": 0, "height": 0}
        self.views[vid] = view
        producer: dict = {}  # Value -> node id in this view
        constant_text = self.constants
        for v in inputs:
            e = self._node_entry("input", "input", "%" + v.debug_name, short_type(v.type))
            e["outputs"] = [{"name": "%" + v.debug_name, "type": str(v.type)}]
            producer[v] = e["id"]
            view["nodes"].append(e["id"])
        edges: list = []
        for n in block.nodes:
            if n.kind == "prim::Constant" and not self.show_constants:
                constant_text[n.output()] = format_constant(n.attributes.get("value")) \
                    if "value" in n.attributes else "None"
                continue
            e = self._op_node(n, constant_text)
            view["nodes"].append(e["id"])
            for v in n.inputs:
                if v in constant_text:
                    continue
                src = producer.get(v) or self._outer(view, producer, v)
                edges.append((src, e["id"], v))
            for o in n.outputs:
                producer[o] = e["id"]
        ret = self._node_entry("output", "return", "return" if block.owning_node is None else "->",
                               ", ".join(short_type(v.type) for v in outputs))
        ret["inputs"] = [{"name": "%" + v.debug_name, "type": str(v.type), "constant": constant_text.get(v)}
                         for v in outputs]
        view["nodes"].append(ret["id"])
        for v in outputs:
            if v in constant_text:
                continue
            edges.append((producer.get(v) or self._outer(view, producer, v), ret["id"], v))
        self._place(view, edges)
        return vid

    def _outer(self, view: dict, producer: dict, v) -> str:
        """A value defined outside this block (captured by it) enters as an input node of its own."""
        e = self._node_entry("input", "outer", "%" + v.debug_name, short_type(v.type))
        e["outputs"] = [{"name": "%" + v.debug_name, "type": str(v.type)}]
        producer[v] = e["id"]
        view["nodes"].insert(0, e["id"])
        return e["id"]

    def _place(self, view: dict, edges: list) -> None:
        sizes = {nid: (self.nodes[nid]["w"], self.nodes[nid]["h"]) for nid in view["nodes"]}
        pairs = [(a, b) for a, b, _ in edges]
        lay = layout(sizes, pairs)
        for nid, (x, y) in lay.positions.items():
            self.nodes[nid]["x"], self.nodes[nid]["y"] = round(x, 1), round(y, 1)
        for i, (a, b, v) in enumerate(edges):
            view["edges"].append({"src": a, "dst": b, "value": "%" + v.debug_name, "label": edge_label(v.type),
                                  "points": [[round(x, 1), round(y, 1)] for x, y in lay.routes[i]]})
        view["width"], view["height"] = round(lay.width, 1), round(lay.height, 1)
        view["crossings"] = lay.crossings


def _attr_text(v: Any) -> str:
    from ..jit.printer import format_constant

    try:
        return format_constant(v)
    except Exception:
        return repr(v)


def graph_model(graph, kernels=None, profile=None, show_constants: bool = False, title: str = "graph",
                prefix: str = "") -> dict:
    """The nested views of ``graph`` (a ``Graph``, or a ``graph_for`` result whose kernels are taken along).

    ``profile``: a ``toolkit.profiler.profile``, an ``EventList`` or ``{name: (us, calls)}``;
    nodes whose op (or fusion group) appears in it carry its total time and call count.
    ``prefix`` starts every node and view id (views drawn side by side need distinct ids).
    """
    if hasattr(graph, "kernels") and hasattr(graph, "graph") and kernels is None:
        graph, kernels = graph.graph, graph.kernels
    b = _Builder(kernels, profile_times(profile), show_constants, prefix)
    for n in graph.all_nodes():
        if n.kind == "prim::FusionGroup":
            b.fusion_index[n] = len(b.fusion_index)
    root = b.view(graph.block, title, graph.inputs, graph.outputs)
    return {"root": root, "views": b.views, "nodes": b.nodes}


def count(model: dict, role: str | None = None, view: str | None = None) -> int:
    """How many nodes the model has (of one role, in one view)."""
    ids = model["views"][view]["nodes"] if view else model["nodes"]
    return sum(1 for i in ids if role is None or model["nodes"][i]["role"] == role)
