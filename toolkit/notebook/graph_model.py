"""The state a graph view draws: an IR graph as nested views of laid-out nodes and edges.

Every block of the IR becomes a *view*: the top graph, each block of a
``prim::If``/``prim::Loop`` and each ``prim::FusionGroup``'s subgraph. A node
that owns blocks or a subgraph is a *group* box in its view whose ``children``
name the views it expands to; a fusion group also carries its generated kernel
source. Plumbing is folded into its users by default, so a real model reads
as its ops: constants, ``prim::GetAttr`` chains (``self.conv1.weight``) and
lists built from them become labelled arguments of the op that uses them
(``conv2d(%x, weight=self.conv1.weight, stride=[1, 1])``, ``mul(%x, 2)``;
arguments equal to the schema's default are left out of the box, not the
details). ``show_constants=True`` draws constants as boxes of their own,
``show_plumbing=True`` draws constants, GetAttr and list/tuple constructions.
Geometry is not part of the model: ``layout.py`` draws each view with Graphviz.
The model is plain JSON-able data, so it is what tests check and what the HTML
view embeds.

    >>> m = graph_model(fn.graph_for(x, y))
    >>> [n["kind"] for n in m["nodes"].values() if n["role"] == "fusion"]
    ['prim::FusionGroup']
"""

from __future__ import annotations

import linecache
from typing import TYPE_CHECKING, Any

from .._core import dtypes as _dt
from ..jit.ir import types as T
from ..jit.ir.graph import Graph
from ..jit.ir.printer import format_constant
from ..jit.passes.inline_calls import CALLEE

if TYPE_CHECKING:
    from ..jit.ir.graph import Value
    from ..jit.ir.types import JitType

_FOLDABLE = ("prim::Constant", "prim::GetAttr", "prim::ListConstruct", "prim::TupleConstruct")
_POSITIONAL = ("self", "input", "other")  # schema names shown without ``name=``
_NO_VALUE = object()  # a folded value with no Python value (an attribute read)
CALL_WIDTH = 40  # characters per line of a box's call text before it wraps


def short_type(t) -> str:
    """``Float(4, 8)`` for a tensor type (strides, device and requires_grad left to the details), else the type."""
    if isinstance(t, T.TensorType):
        head = _dt.title(t.dtype) if t.dtype is not None else "Tensor"
        if t.sizes is None:
            return head
        return f"{head}({', '.join('*' if s is None else str(s) for s in t.sizes)})"
    if isinstance(t, T.TupleType):  # a call returning several tensors: each element as short as a tensor's
        return "(" + ", ".join(short_type(e) for e in t.elems) + ("," if len(t.elems) == 1 else "") + ")"
    return str(t)


def traced_type(v: Value) -> JitType:
    """The type the view shows for value ``v``: its IR type, or for a ``prim::CallMethod`` result the type its
    callee returned when traced.

    The IR types a call's result plain ``Tensor`` (as PyTorch prints it), but the callee's graph, held by the
    node, returns the value the trace saw, shape and dtype included; a nested call is followed down to it.
    """
    n = v.node
    if n is None or n.kind != "prim::CallMethod" or v not in n.outputs:
        return v.type
    callee = n.attributes.get(CALLEE)
    if not isinstance(callee, Graph) or len(callee.outputs) != len(n.outputs):
        return v.type
    return traced_type(callee.outputs[n.outputs.index(v)])


def edge_label(t) -> str:
    """What an edge carrying a value of type ``t`` is labelled with: the shape (each named dim as ``name: size``,
    ``[N: 2, 3]``), or the type of a non-tensor."""
    if isinstance(t, T.TensorType):
        if t.sizes is None:
            return ""
        sizes = ["*" if s is None else str(s) for s in t.sizes]
        if t.names is not None:
            sizes = [s if n is None else f"{n}: {s}" for n, s in zip(t.names, sizes)]
        return "[" + ", ".join(sizes) + "]"
    if isinstance(t, T.TupleType):
        return "(" + ", ".join(edge_label(e) or short_type(e) for e in t.elems) + ("," if len(t.elems) == 1 else "") + ")"
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
    def __init__(self, kernels, times: dict, show_constants: bool, prefix: str = "",
                 show_plumbing: bool = False):
        self.prefix = prefix
        self.kernels = list(kernels or [])
        self.times = times
        self.show_constants = show_constants or show_plumbing
        self.show_plumbing = show_plumbing
        self.folded: dict = {}  # Value -> (text, Python value or _NO_VALUE), shared by nested blocks
        self.nodes: dict[str, dict] = {}
        self.views: dict[str, dict] = {}
        self.fusion_index: dict = {}

    def _new_id(self, prefix: str, table: dict) -> str:
        return f"{self.prefix}{prefix}{len(table)}"

    # -- one node -------------------------------------------------------------------------------
    def _node_entry(self, role: str, kind: str, label: str, type_text: str) -> dict:
        nid = self._new_id("n", self.nodes)
        entry = {"id": nid, "role": role, "kind": kind, "label": label, "type": type_text, "call": [],
                 "inputs": [], "outputs": [], "attributes": {}, "source": None, "code": None, "scope": "",
                 "children": [], "kernel": None, "time_us": None, "calls": None}
        self.nodes[nid] = entry
        return entry

    def _timing(self, entry: dict, key: str) -> None:
        hits = [(t, c) for name, (t, c) in self.times.items() if name == key or name.startswith(key + ":")]
        if hits:
            entry["time_us"] = round(sum(t for t, _ in hits), 3)
            entry["calls"] = sum(c for _, c in hits)

    # -- plumbing folded into its users -----------------------------------------------------------
    def _fold(self, n) -> bool:
        """Record ``n``'s output as an argument text of its users when ``n`` is plumbing; False if drawn."""
        if n.kind not in _FOLDABLE or len(n.outputs) != 1:
            return False
        if n.kind == "prim::Constant":
            if self.show_constants:
                return False
            value = n.attributes.get("value")
            text = str(value) if isinstance(value, bool) else format_constant(value)  # False, not 0
            self.folded[n.output()] = (text if "value" in n.attributes else "None", value)
            return True
        if self.show_plumbing or not all(v in self.folded or _is_module(v) for v in n.inputs):
            return False
        if n.kind == "prim::GetAttr":
            (owner,) = n.inputs
            base = self.folded[owner][0] if owner in self.folded else owner.debug_name
            self.folded[n.output()] = (f"{base}.{n.attributes['name']}", _NO_VALUE)
            return True
        if not all(v in self.folded for v in n.inputs):
            return False
        texts = [self.folded[v][0] for v in n.inputs]
        values = [self.folded[v][1] for v in n.inputs]
        value = _NO_VALUE if any(v is _NO_VALUE for v in values) else values
        if n.kind == "prim::TupleConstruct":
            text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
        else:
            text = "[" + ", ".join(texts) + "]"
        self.folded[n.output()] = (text, value)
        return True

    def _call(self, n) -> list:
        """The box's call text, wrapped: ``["conv2d(%x,", "weight=self.conv1.weight)"]``; [] when no input
        is folded (the box then shows the op name alone)."""
        args = list(n.op.schema.args) if getattr(n, "op", None) is not None else []
        parts, folded_any = [], False
        for i, v in enumerate(n.inputs):
            a = args[i] if i < len(args) and len(args) >= len(n.inputs) else None
            if v in self.folded:
                text, value = self.folded[v]
                if a is not None and a.has_default and _is_default(value, a.default):
                    continue
                folded_any = True
            else:
                text = "%" + v.debug_name
            parts.append(text if a is None or a.name in _POSITIONAL else f"{a.name}={text}")
        if not folded_any:
            return []
        head = n.kind.split("::", 1)[-1] + "("
        lines, cur = [], head
        for i, p in enumerate(parts):
            p += ", " if i < len(parts) - 1 else ")"
            if cur != head and len(cur) + len(p) > CALL_WIDTH:
                lines.append(cur.rstrip())
                cur = "  "
            cur += p
        lines.append(cur.rstrip())
        if not parts:
            lines = [head + ")"]
        return lines

    def _op_node(self, n, constant_text: dict) -> dict:
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
        elif kind == "prim::GetAttr":
            label = f"GetAttr .{n.attributes['name']}"
        elif kind == "prim::PythonOp":  # runs as Python (script fallback, @ignore): drawn apart from compiled ops
            role = "python"
            label = f"PythonOp {n.attributes['name']}" if "name" in n.attributes else "PythonOp"
        outs = ", ".join(short_type(traced_type(o)) for o in n.outputs)
        entry = self._node_entry(role, kind, label, outs)
        if role in ("op", "python"):
            entry["call"] = self._call(n)
        entry["inputs"] = [{"name": "%" + v.debug_name, "type": str(traced_type(v)),
                            "constant": constant_text[v][0] if v in constant_text else None} for v in n.inputs]
        entry["outputs"] = [{"name": "%" + o.debug_name, "type": str(traced_type(o))} for o in n.outputs]
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
        vid = self._new_id("v", self.views)
        view: dict = {"id": vid, "title": title, "nodes": [], "edges": []}
        self.views[vid] = view
        producer: dict = {}  # Value -> node id in this view
        constant_text = self.folded
        drawn = [n for n in block.nodes if not self._fold(n)]
        for v in inputs:
            if _is_module(v) and not self.show_plumbing and all(u.user not in drawn for u in v.uses):
                continue  # ``self``: every read of it is folded into an argument text
            e = self._node_entry("input", "input", "%" + v.debug_name, short_type(v.type))
            e["outputs"] = [{"name": "%" + v.debug_name, "type": str(v.type)}]
            producer[v] = e["id"]
            view["nodes"].append(e["id"])
        edges: list = []
        for n in drawn:
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
                               ", ".join(short_type(traced_type(v)) for v in outputs))
        ret["inputs"] = [{"name": "%" + v.debug_name, "type": str(traced_type(v)),
                          "constant": constant_text[v][0] if v in constant_text else None} for v in outputs]
        view["nodes"].append(ret["id"])
        for v in outputs:
            if v in constant_text:
                continue
            edges.append((producer.get(v) or self._outer(view, producer, v), ret["id"], v))
        view["edges"] = [{"src": a, "dst": b, "value": "%" + v.debug_name, "label": edge_label(traced_type(v))}
                         for a, b, v in edges]
        return vid

    def _outer(self, view: dict, producer: dict, v) -> str:
        """A value defined outside this block (captured by it) enters as an input node of its own."""
        e = self._node_entry("input", "outer", "%" + v.debug_name, short_type(traced_type(v)))
        e["outputs"] = [{"name": "%" + v.debug_name, "type": str(traced_type(v))}]
        producer[v] = e["id"]
        view["nodes"].insert(0, e["id"])
        return e["id"]



def _is_module(v) -> bool:
    """Whether ``v`` holds a module object (``self`` and the submodules read from it)."""
    return isinstance(v.type, T.ModuleType)


def _is_default(value, default) -> bool:
    """Whether a folded argument equals its schema default (``[1, 1]`` equals a broadcast default ``1``)."""
    if value is _NO_VALUE:
        return False
    if isinstance(value, (list, tuple)) and not isinstance(default, (list, tuple)):
        return len(value) > 0 and all(type(e) is type(default) and e == default for e in value)
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return type(value) is type(default) and value == default


def _attr_text(v: Any) -> str:
    try:
        return format_constant(v)
    except Exception:
        return repr(v)


def graph_model(graph, kernels=None, profile=None, show_constants: bool = False, title: str = "graph",
                prefix: str = "", show_plumbing: bool = False) -> dict:
    """The nested views of ``graph`` (a ``Graph``, or a ``graph_for`` result whose kernels are taken along).

    ``profile``: a ``toolkit.profiler.profile``, an ``EventList`` or ``{name: (us, calls)}``;
    nodes whose op (or fusion group) appears in it carry its total time and call count.
    ``prefix`` starts every node and view id (views drawn side by side need distinct ids).
    ``show_constants`` / ``show_plumbing``: draw constants / all plumbing as boxes (see the module docstring).
    """
    if hasattr(graph, "kernels") and hasattr(graph, "graph") and kernels is None:
        graph, kernels = graph.graph, graph.kernels
    b = _Builder(kernels, profile_times(profile), show_constants, prefix, show_plumbing)
    for n in graph.all_nodes():
        if n.kind == "prim::FusionGroup":
            b.fusion_index[n] = len(b.fusion_index)
    root = b.view(graph.block, title, graph.inputs, graph.outputs)
    return {"root": root, "views": b.views, "nodes": b.nodes, "prefix": prefix}


def count(model: dict, role: str | None = None, view: str | None = None) -> int:
    """How many nodes the model has (of one role, in one view)."""
    ids = model["views"][view]["nodes"] if view else model["nodes"]
    return sum(1 for i in ids if role is None or model["nodes"][i]["role"] == role)
