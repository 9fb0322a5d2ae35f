"""``add_graph``: trace a model with ``toolkit.jit`` and turn the graph into a GraphDef for the Graphs tab.

Names follow PyTorch's exporter: op nodes are ``<Model>/<Type>[<attr>]/.../<value>``
(so module scopes become collapsible name scopes), inputs ``input/<name>`` and
outputs ``output/output.<i>`` with op ``IO Node``. Each node carries
``_output_shapes``, ``dtype``, ``attr`` (its IR attributes) and ``_source``.
When fusion applies, each ``prim::FusionGroup`` becomes a ``FusionGroup_<i>``
scope holding its fused ops, named after their Python variable where the graph
kept one (``gates``) and otherwise after their op (``sigmoid``, ``sigmoid_1``),
as a kernel's ops have no value numbering worth reading; they carry the group as
their XLA cluster (``_XlaCluster``) and in their device (``/device:CPU:0/FusionGroup_0``),
so TensorBoard's "Color by XLA cluster" and "Color by device" paint each group
apart from the unfused ops (``/device:CPU:0``). Inputs and outputs may nest tuples, lists, dicts
and None: the model is traced through a wrapper that takes and returns flat tensors.
"""

from __future__ import annotations

import inspect
import warnings

from tensorboard.compat.proto import types_pb2
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ... import autograd
from ...jit import fusion_enabled
from ...jit.frontend.trace import record
from ...jit.ir import types as T
from ...jit.script_module import ScriptModule
from ...tensor import Tensor

_DEVICE = "/device:CPU:0"  # where the unfused ops run, as the run metadata's step stats say
_DT = {"float16": types_pb2.DT_HALF, "float32": types_pb2.DT_FLOAT, "float64": types_pb2.DT_DOUBLE,
       "bfloat16": types_pb2.DT_BFLOAT16, "int8": types_pb2.DT_INT8, "uint8": types_pb2.DT_UINT8,
       "int16": types_pb2.DT_INT16, "int32": types_pb2.DT_INT32, "int64": types_pb2.DT_INT64,
       "bool": types_pb2.DT_BOOL, "complex64": types_pb2.DT_COMPLEX64, "complex128": types_pb2.DT_COMPLEX128}


# -- flattening inputs and outputs ---------------------------------------------------------------------
def _flatten(obj, out: list):
    """Append the tensors of a nested structure to ``out``; return a template that rebuilds it from a list."""
    if isinstance(obj, Tensor):
        out.append(obj)
        i = len(out) - 1
        return lambda flat: flat[i]
    if isinstance(obj, (tuple, list)):
        parts = [_flatten(e, out) for e in obj]
        kind = type(obj) if type(obj) in (tuple, list) else (lambda items, t=type(obj): t(*items))
        return lambda flat: kind([p(flat) for p in parts])
    if isinstance(obj, dict):
        parts = {k: _flatten(v, out) for k, v in obj.items()}
        return lambda flat: {k: p(flat) for k, p in parts.items()}
    return lambda flat: obj  # None and other Python values pass through unchanged


def _tensors(obj) -> list:
    out: list = []
    _flatten(obj, out)
    return out


def _input_names(model, args: tuple) -> list:
    """``x`` for a tensor argument named x; ``x.0``, ``x.1``, ... for the tensors nested in it."""
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"input_{i}"
        n = len(_tensors(a))

        names += [base] if isinstance(a, Tensor) else [f"{base}.{j}" for j in range(n)]
    return names


def trace_for_graph(model, input_to_model):
    """Trace ``model`` on ``input_to_model`` through flat-tensor wrapping: (graph, flat inputs)."""
    if input_to_model is None:
        args: tuple = ()
    elif isinstance(input_to_model, tuple):
        args = input_to_model
    else:
        args = (input_to_model,)
    flat: list = []
    rebuild = _flatten(args, flat)

    def forward(*tensors):
        outs = _tensors(model(*rebuild(tensors)))
        return outs[0] if len(outs) == 1 else tuple(outs)

    g, _, _ = record(forward, tuple(flat), module=model, method=forward, strict=False,
                     names=_input_names(model, args))
    return g, flat


def _fused(model, g, flat):
    """The optimized graph the executor runs for these inputs (with fusion groups), or None if unavailable."""
    if not fusion_enabled():
        return None
    try:
        with autograd.no_grad():
            return ScriptModule(model, g).graph_for(*flat).graph
    except Exception as e:  # the plain traced graph is still worth showing
        warnings.warn(f"add_graph: could not build the fused graph ({type(e).__name__}: {e}); "
                      "showing the traced graph without fusion groups", stacklevel=3)
        return None


# -- GraphDef ------------------------------------------------------------------------------------------
def _shape_proto(t) -> TensorShapeProto:
    sizes = getattr(t, "sizes", None)
    if sizes is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else d) for d in sizes])


def _attr_string(attrs: dict) -> str:
    shown = {k: (f"Tensor{tuple(v.shape)}" if isinstance(v, Tensor) else v) for k, v in attrs.items()
             if k != "Subgraph"}
    return str(shown).replace("'", " ")  # PyTorch's exporter does the same: quotes confuse the Graphs tab


def _value_attrs(v, node=None) -> dict:
    attrs = {}
    if isinstance(v.type, T.TensorType):
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[_shape_proto(v.type)]))
        if v.type.dtype is not None and v.type.dtype.name in _DT:
            attrs["dtype"] = AttrValue(type=_DT[v.type.dtype.name])
    else:
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto()]))
        attrs["type"] = AttrValue(s=str(v.type).encode())
    if node is not None:
        attrs["attr"] = AttrValue(s=_attr_string(node.attributes).encode())
        if node.source is not None:
            attrs["_source"] = AttrValue(s=f"{node.source[0]}:{node.source[1]}".encode())
    return attrs


class _Builder:
    """Walks a graph (and fusion subgraphs) and emits one NodeDef per produced value."""

    def __init__(self, model):
        self.model = model
        self.base = getattr(model, "original_name", None) or type(model).__name__
        self.names: dict[int, str] = {}  # id(Value) -> scoped node name
        self.nodes: list[NodeDef] = []
        self.module_paths: dict[int, tuple] = {}
        self.groups = 0
        self.used: set[str] = set()  # node names taken, so op-named fused nodes stay unique

    def scope_name(self, scope: str) -> str:
        """``__module.layer1.0`` -> ``Net/Sequential[layer1]/BasicBlock[0]``."""
        if not scope:
            return self.base
        path = scope.split(".")[1:] if scope.startswith("__module") else scope.split(".")
        parts, prefix = [self.base], []
        for p in path:
            prefix.append(p)
            try:
                t = type(self.model.get_submodule(".".join(prefix))).__name__
            except AttributeError:
                t = "Module"
            parts.append(f"{t}[{p}]")
        return "/".join(parts)

    def emit(self, name: str, op: str, inputs: list, attrs: dict, device: str = "") -> None:
        self.used.add(name)
        self.nodes.append(NodeDef(name=name, op=op, input=inputs, attr=attrs, device=device))

    def fused_name(self, group: str, node, value) -> str:
        """``<group>/gates`` for a value named in the source, else ``<group>/<op>`` (``_1``, ``_2``... when taken)."""
        base = value.debug_name
        if not base or base.replace(".", "").isdigit():
            base = node.kind.split("::")[-1]
        name, k = f"{group}/{base}", 0
        while name in self.used:
            k += 1
            name = f"{group}/{base}_{k}"
        return name

    def input_names(self, node) -> list:
        return [self.names[id(v)] for v in node.inputs if id(v) in self.names]

    def add_graph(self, g, n_outputs: int) -> None:
        """Emit ``g``; only its first ``n_outputs`` outputs are the model's (a differentiable plan appends
        the values its backward saves)."""
        ins = list(g.inputs)
        for v in ins:
            if isinstance(v.type, T.ModuleType):
                self.module_paths[id(v)] = ()
                continue
            name = f"input/{v.debug_name}"
            self.names[id(v)] = name
            self.emit(name, "IO Node", [], _value_attrs(v))
        self.add_nodes(g.nodes(), prefix=None)
        for i, v in enumerate(g.outputs[:n_outputs]):
            src = self.names.get(id(v))
            self.emit(f"output/output.{i + 1}", "IO Node", [src] if src else [], _value_attrs(v))

    def add_nodes(self, nodes, prefix: str | None) -> None:
        for n in nodes:
            if n.kind == "prim::GetAttr" and id(n.inputs[0]) in self.module_paths:
                path = self.module_paths[id(n.inputs[0])] + (n["name"],)
                out = n.output()
                if isinstance(out.type, T.ModuleType):
                    self.module_paths[id(out)] = path
                    continue
                scope = self.scope_name("__module." + ".".join(path[:-1]) if len(path) > 1 else "")
                name = f"{scope}/{path[-1]}"
                self.names[id(out)] = name
                self.emit(name, n.kind, [], _value_attrs(out, n))
                continue
            if n.kind == "prim::FusionGroup":
                self.add_fusion_group(n, prefix)
                continue
            inputs = self.input_names(n)
            for o in n.outputs:
                if prefix is None:
                    name, attrs, device = f"{self.scope_name(n.scope)}/{o.debug_name}", _value_attrs(o, n), _DEVICE
                else:
                    name, attrs = self.fused_name(prefix, n, o), _value_attrs(o, n)
                    cluster = prefix.rsplit("/", 1)[-1]
                    attrs["_XlaCluster"] = AttrValue(s=cluster.encode())
                    device = f"{_DEVICE}/{cluster}"
                self.names[id(o)] = name
                self.emit(name, n.kind, inputs, attrs, device)

    def add_fusion_group(self, n, prefix: str | None) -> None:
        sub = n["Subgraph"]
        members = [m for m in sub.nodes() if m.kind != "prim::Constant"]
        scopes = [m.scope for m in members]
        common = _common_scope(scopes)
        outer = prefix if prefix is not None else self.scope_name(common)
        group = f"{outer}/FusionGroup_{self.groups}"
        self.groups += 1
        for inner, v in zip(sub.inputs, n.inputs):
            if id(v) in self.names:
                self.names[id(inner)] = self.names[id(v)]
        self.add_nodes(sub.nodes(), prefix=group)
        for o, inner in zip(n.outputs, sub.outputs):
            self.names[id(o)] = self.names.get(id(inner), f"{group}/{inner.debug_name}")


def _common_scope(scopes: list) -> str:
    """The deepest module scope shared by all fused ops (``""`` if they span the top level)."""
    if not scopes or any(not s for s in scopes):
        return ""
    split = [s.split(".") for s in scopes]
    common = []
    for parts in zip(*split):
        if all(p == parts[0] for p in parts):
            common.append(parts[0])
        else:
            break
    return ".".join(common) if len(common) > 1 else ""


def graph(model, args, verbose: bool = False, use_strict_trace: bool = True):
    """(GraphDef, RunMetadata) for ``model`` run on ``args``, traced in eval mode."""
    was_training = model.training
    model.train(False)
    try:
        g, flat = trace_for_graph(model, args)
        shown = _fused(model, g, flat) or g
    finally:
        model.train(was_training)
    if verbose:
        print(shown)
    b = _Builder(model)
    b.add_graph(shown, len(g.outputs))
    stepstats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device=_DEVICE)]))
    return GraphDef(node=b.nodes, versions=VersionDef(producer=22)), stepstats
