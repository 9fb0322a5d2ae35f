"""``OnnxView``: an exported ONNX graph drawn beside the toolkit IR it came from.

The ONNX graph becomes a graph model of the shape ``graph_model`` makes (views, nodes, edges), so the
graph view draws it as it draws IR graphs: Graphviz's layout, the notebook's light or dark theme, the
static picture a saved (untrusted) notebook keeps, search and zoom. Each ONNX node is a box with its op
type and output shape, clustered by the module its name says it came from (``/conv1/Conv`` in ``conv1``);
initializers and ``Constant`` nodes are folded into their users' boxes (``Conv(%x, conv1.weight, ...)``),
and the node's attributes are in its tooltip and its details. ``If``/``Loop`` bodies are boxes that open
into their own drawing, as ``prim::If``/``prim::Loop`` blocks do::

    >>> toolkit.onnx.show("net.onnx", ir=traced)        # ONNX | the traced graph it was exported from
    >>> OnnxView(onnx.load("net.onnx")).save("net.html")
"""

from __future__ import annotations

import re

import numpy as np

from .._core import dtypes as _dt
from ._html import esc
from .graph_model import CALL_WIDTH
from .graph_scopes import collapse_scopes
from .graph_view import GraphView

_SMALL_CONSTANT = 8  # elements of a folded constant written out; bigger ones show their shape


def _attribute_text(value) -> str:
    if hasattr(value, "node"):  # a subgraph (If/Loop body): opened as a view of its own
        return f"graph({len(value.node)} nodes)"
    if hasattr(value, "dims") and hasattr(value, "data_type"):  # a TensorProto
        return f"tensor{list(value.dims)}"
    if isinstance(value, bytes):
        return repr(value.decode(errors="replace"))
    if isinstance(value, list):
        return "[" + ", ".join(_attribute_text(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _scope(node_name: str) -> str:
    """The module scope an ONNX node name written by the TorchScript exporter carries (``/conv1/Conv``)."""
    parts = [p for p in node_name.split("/") if p][:-1]
    return "__module." + ".".join(parts) if parts else ""


class _OnnxBuilder:
    """Builds the graph model of one ONNX ``GraphProto`` (nested bodies as child views)."""

    def __init__(self, proto, prefix: str):
        import onnx  # optional dependency: only ONNX views read models

        self.onnx = onnx
        try:
            proto = onnx.shape_inference.infer_shapes(proto)
        except Exception:  # shapes are only drawn where inference finds them
            pass
        self.types: dict[str, object] = {}
        self.prefix = prefix
        self.nodes: dict[str, dict] = {}
        self.views: dict[str, dict] = {}
        self.folded: dict[str, str] = {}  # value name -> the text its users show
        self.proto = proto

    def _types_of(self, g) -> None:
        for vi in [*g.input, *g.value_info, *g.output]:
            if vi.type.HasField("tensor_type"):
                self.types[vi.name] = vi.type.tensor_type

    def type_text(self, name: str) -> tuple[str, str]:
        """(box text ``Float(batch, 10)``, edge label ``[batch, 10]``) of a value, empty where unknown."""
        tt = self.types.get(name)
        if tt is None:
            return "", ""
        try:
            head = _dt.title(_dt.from_numpy_dtype(self.onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)))
        except (TypeError, KeyError, ValueError):
            head = "Tensor"
        if not tt.HasField("shape"):
            return head, ""
        dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "*") for d in tt.shape.dim]
        return f"{head}({', '.join(dims)})", "[" + ", ".join(dims) + "]"

    def entry(self, role: str, kind: str, label: str, type_text: str, scope: str = "") -> dict:
        nid = f"{self.prefix}n{len(self.nodes)}"
        e = {"id": nid, "role": role, "kind": kind, "label": label, "type": type_text, "call": [], "inputs": [],
             "outputs": [], "attributes": {}, "source": None, "code": None, "scope": scope, "children": [],
             "kernel": None, "time_us": None, "calls": None, "tip": kind}
        self.nodes[nid] = e
        return e

    def fold_constant(self, name: str, array: np.ndarray) -> None:
        if array.size <= _SMALL_CONSTANT:
            self.folded[name] = str(array.tolist())
        else:
            self.folded[name] = f"{name}{list(array.shape)}"

    def call(self, op_type: str, inputs: list) -> list:
        """The box's text: the op with its folded arguments, wrapped; [] when nothing is folded."""
        if not any(i in self.folded for i in inputs):
            return []
        parts = [self.folded.get(i, "%" + i) if i else "None" for i in inputs]
        lines, cur = [], op_type + "("
        for k, p in enumerate(parts):
            p += ", " if k < len(parts) - 1 else ")"
            if cur != op_type + "(" and len(cur) + len(p) > CALL_WIDTH:
                lines.append(cur.rstrip())
                cur = "  "
            cur += p
        return [*lines, cur.rstrip()]

    def view(self, g, title: str) -> str:
        self._types_of(g)
        for t in g.initializer:
            self.folded[t.name] = t.name if t.name else "initializer"
        vid = f"{self.prefix}v{len(self.views)}"
        view = {"id": vid, "title": title, "nodes": [], "edges": []}
        self.views[vid] = view
        producer: dict[str, str] = {}
        inits = {t.name for t in g.initializer}
        for vi in g.input:
            if vi.name in inits:
                continue
            view["nodes"].append(self._input("input", vi.name, producer))
        edges = []
        for n in g.node:
            attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in n.attribute}
            if n.op_type == "Constant" and "value" in attrs:
                self.fold_constant(n.output[0], self.onnx.numpy_helper.to_array(attrs["value"]))
                continue
            types = [self.type_text(o)[0] for o in n.output if o]
            e = self.entry("block" if any(hasattr(v, "node") for v in attrs.values()) else "op",
                           f"onnx::{n.op_type}", n.op_type, ", ".join(t for t in types if t), _scope(n.name))
            e["call"] = self.call(n.op_type, list(n.input))
            e["attributes"] = {k: _attribute_text(v) for k, v in attrs.items()}
            e["source"] = n.name or None
            e["tip"] = n.op_type + "".join(f"\n{k}={v}" for k, v in e["attributes"].items())
            e["inputs"] = [{"name": "%" + i, "type": self.type_text(i)[0], "constant": self.folded.get(i)}
                           for i in n.input]
            e["outputs"] = [{"name": "%" + o, "type": self.type_text(o)[0]} for o in n.output if o]
            for k, v in sorted(attrs.items(), key=lambda kv: kv[0] != "then_branch"):  # then before else
                if hasattr(v, "node"):
                    e["children"].append(self.view(v, f"{n.op_type} {k}"))
            view["nodes"].append(e["id"])
            for i in n.input:
                if i and i not in self.folded:
                    edges.append((producer.get(i) or self._outer(view, producer, i), e["id"], i))
            for o in n.output:
                producer[o] = e["id"]
        ret = self.entry("output", "return", "return", ", ".join(self.type_text(o.name)[0] for o in g.output))
        ret["inputs"] = [{"name": "%" + o.name, "type": self.type_text(o.name)[0], "constant": None}
                         for o in g.output]
        view["nodes"].append(ret["id"])
        for o in g.output:
            if o.name not in self.folded:
                edges.append((producer.get(o.name) or self._outer(view, producer, o.name), ret["id"], o.name))
        view["edges"] = [{"src": a, "dst": b, "value": "%" + v, "label": self.type_text(v)[1]} for a, b, v in edges]
        return vid

    def _outer(self, view: dict, producer: dict, name: str) -> str:
        """A value of an enclosing graph read by a nested body enters as an input node of its own."""
        nid = self._input("outer", name, producer)
        view["nodes"].insert(0, nid)
        return nid

    def _input(self, kind: str, name: str, producer: dict) -> str:
        """An input box (``kind`` "input" or "outer") giving the value ``name``; returns its id."""
        e = self.entry("input", kind, "%" + name, self.type_text(name)[0])
        e["outputs"] = [{"name": "%" + name, "type": e["type"]}]
        producer[name] = e["id"]
        return e["id"]


def onnx_graph_model(model_proto, title: str = "ONNX", prefix: str = "") -> dict:
    """The graph model (``graph_model``'s shape) of an ONNX ``ModelProto``: what ``OnnxView`` draws."""
    b = _OnnxBuilder(model_proto, prefix)
    opset = next((o.version for o in b.proto.opset_import if o.domain in ("", "ai.onnx")), None)
    root = b.view(b.proto.graph, title + (f" (opset {opset})" if opset else ""))
    return {"root": root, "views": b.views, "nodes": b.nodes, "prefix": prefix}


# a node's tooltip in the SVG (``<\/`` where the drawing sits inside a script element)
_NODE_TITLE = re.compile(r'(<g class="node [^"]*" data-node="([^"]+)"[^>]*>\s*<title>)(.*?)(<\\?/title>)', re.S)


class OnnxView(GraphView):
    """An ONNX model drawn beside the toolkit IR it was exported from (see the module docstring).

    ``model``: an ``onnx.ModelProto``; ``ir``: a Graph, a traced or scripted function or module, or a
    ``graph_for`` result, drawn to the right (or None: the ONNX graph alone).
    """

    def __init__(self, model, ir=None, *, title: str = "ONNX", ir_title: str | None = None):
        super().__init__()
        onnx_model = onnx_graph_model(model, title, prefix=f"p{len(self.panes)}")
        onnx_model["top"] = collapse_scopes(onnx_model, onnx_model["root"])
        self.panes.append((title, onnx_model))
        if ir is not None:
            self.add(ir, title=ir_title or "toolkit IR")

    def _with_tips(self, text: str) -> str:
        """Each ONNX box's tooltip: its op type and attributes (the IR boxes keep theirs)."""
        nodes = {nid: n for _, model in self.panes for nid, n in model["nodes"].items() if "tip" in n}

        def retitle(m: re.Match) -> str:
            n = nodes.get(m.group(2))
            return m.group(0) if n is None else m.group(1) + esc(n["tip"]) + m.group(4)

        return _NODE_TITLE.sub(retitle, text)

    def to_html(self, deferred: bool = False) -> str:
        return self._with_tips(super().to_html(deferred))

    def to_svg(self) -> str:
        return self._with_tips(super().to_svg())
