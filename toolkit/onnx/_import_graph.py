"""Building a toolkit IR graph from an ONNX graph: the values (tensors, import-time constants, shapes followed at
import time), the registry ops inserted for them, and the module whose parameters the initializers become.

``_import.py`` holds the table of ONNX op types; each entry asks an ``_Importer`` for its inputs
(``tensor``, ``const``, ``ints``, ``axes``) and inserts registry ops with ``aten(name, *args)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from .. import factories
from ..jit.ir import types as T
from ..jit.ir.graph import Graph, Value
from ..jit.ir.kinds import CONSTANT, GET_ATTR, LIST_CONSTRUCT, LIST_UNPACK, TUPLE_CONSTRUCT
from ..jit.serialization.loaded_modules import LoadedModule, LoadedScriptModule
from ..nn.parameter import Parameter
from ..ops import registry as R
from ._types import toolkit_dtype


class OnnxImportError(RuntimeError):
    """The ONNX model uses op types or forms the importer cannot express with toolkit's ops."""


class _Ints:
    """A shape (or one of its sizes) followed at import time: each item an int or an IR ``int`` value."""

    __slots__ = ("items", "scalar")

    def __init__(self, items: list, scalar: bool = False):
        self.items, self.scalar = list(items), scalar

    def static(self) -> bool:
        return all(isinstance(i, int) for i in self.items)


class _Const:
    """An import-time constant; ``path`` names the parameter it is when it is a float initializer."""

    __slots__ = ("array", "path")

    def __init__(self, array: np.ndarray, path: str | None = None):
        self.array, self.path = array, path


class _Node:
    """One ONNX node as the table's entries read it: op type, input and output names, attributes as Python."""

    def __init__(self, proto, attrs: dict):
        self.proto = proto
        self.op_type = proto.op_type
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = attrs

    def attr(self, name: str, default=None):
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def input(self, i: int) -> str:
        return self.inputs[i] if i < len(self.inputs) else ""


def _identifier(name: str, fallback: str = "v") -> str:
    s = re.sub(r"\W+", "_", name).strip("_")
    return s if s and not s[0].isdigit() else f"{fallback}_{s}"


class _Importer:
    """Builds the graph and the module for one model (see the module docstring)."""

    def __init__(self, model, table: dict[str, Callable]):
        import onnx  # optional dependency: only ONNX import reads models

        self.onnx = onnx
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # a model shape inference cannot read still imports; ranks are then asked of types
            pass
        self.model = model
        self.table = table
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
        self.root = LoadedModule(_identifier(model.graph.name or "OnnxModel", "Onnx"))
        self.graph = Graph()
        self.self_value = self.graph.add_input("self", T.ModuleType(LoadedModule))
        self.env: dict[str, object] = {}
        self.shapes: dict[str, tuple | None] = {}
        self._attr_values: dict[str, Value] = {}  # initializers read as tensors, by ONNX name
        self._modules: dict[str, Value] = {}  # submodules read, by path
        for vi in [*model.graph.input, *model.graph.value_info, *model.graph.output]:
            self.shapes[vi.name] = self._shape_of(vi.type)

    # -- reading the model ------------------------------------------------------------------------------
    def _shape_of(self, tp) -> tuple | None:
        if not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
            return None
        return tuple(d.dim_value if d.HasField("dim_value") else None for d in tp.tensor_type.shape.dim)

    def build(self) -> LoadedScriptModule:
        g = self.model.graph
        nodes = [_Node(n, {a.name: self.onnx.helper.get_attribute_value(a) for a in n.attribute}) for n in g.node]
        missing = sorted({n.op_type for n in nodes if n.op_type not in self.table and n.op_type != "Constant"})
        if missing:
            raise OnnxImportError(f"cannot import the ONNX model: no toolkit op for the ONNX op type(s) "
                                  f"{', '.join(missing)} (opset {self.opset})")
        inits = {t.name for t in g.initializer}
        for t in g.initializer:
            self._add_initializer(t.name, self.onnx.numpy_helper.to_array(t))
        for vi in g.input:
            if vi.name in inits:
                continue
            tt = vi.type.tensor_type
            typ = T.TensorType(toolkit_dtype(tt.elem_type) if tt.elem_type else None, self.shapes.get(vi.name))
            self.env[vi.name] = self.graph.add_input(_identifier(vi.name, "input"), typ)
        for n in nodes:
            self._run(n)
        outs = [self.tensor(o.name, "the graph's outputs") for o in g.output]
        out = outs[0] if len(outs) == 1 else self._insert(TUPLE_CONSTRUCT, outs, T.TupleType([o.type for o in outs]))
        self.graph.register_output(out)
        self.graph.verify()
        return LoadedScriptModule(self.root, self.graph)

    def _add_initializer(self, name: str, array: np.ndarray) -> None:
        if array.dtype.kind != "f":
            self.env[name] = _Const(array)
            return
        parts = name.split(".")
        if not all(re.fullmatch(r"\w+", p) for p in parts) or not self._free(parts):
            parts = [_identifier(name, "param")]
            while not self._free(parts):
                parts = [parts[0] + "_"]
        m = self.root
        for p in parts[:-1]:
            if p not in m._modules:
                m._modules[p] = LoadedModule("Module")
            m = m._modules[p]
        m._parameters[parts[-1]] = Parameter(factories.tensor(np.ascontiguousarray(array)))
        self.env[name] = _Const(array, ".".join(parts))

    def _free(self, parts: list) -> bool:
        """Whether a parameter may be stored at ``parts`` (a path of submodules, then the parameter's name)."""
        m = self.root
        for p in parts[:-1]:
            if p in m._parameters or p.startswith("__") or hasattr(LoadedModule, p):
                return False
            m = m._modules.get(p)
            if m is None:
                return True
        last = parts[-1]
        return not (last in m._parameters or last in m._modules or last.startswith("__") or hasattr(LoadedModule, last))

    def _run(self, n: _Node) -> None:
        known = [x for x in n.inputs if x]
        if all(isinstance(self.env.get(x), _Const) and self.env[x].path is None for x in known):
            results = self._fold(n)
        else:
            try:
                results = self.table[n.op_type](self, n)
            except OnnxImportError as e:
                raise OnnxImportError(f"ONNX node {n.proto.name or n.outputs[0]!r} ({n.op_type}): {e}") from None
        results = results if isinstance(results, (tuple, list)) else (results,)
        for name, r in zip(n.outputs, results):
            if not name:
                continue
            self.env[name] = r
            if isinstance(r, Value) and not r.has_debug_name():
                r.set_debug_name(_identifier(name))
        for name in n.outputs[len(results):]:
            if name:
                raise OnnxImportError(f"ONNX node {n.proto.name!r} ({n.op_type}): its output {name!r} has no "
                                      "toolkit counterpart")

    def _fold(self, n: _Node) -> list:
        """A node whose inputs are all constants, evaluated now by onnx's reference implementation."""
        from onnx.reference import ReferenceEvaluator  # optional dependency, as above

        h = self.onnx.helper
        feeds = {x: self.env[x].array for x in n.inputs if x}
        inputs = [h.make_tensor_value_info(x, h.np_dtype_to_tensor_dtype(a.dtype), a.shape) for x, a in feeds.items()]
        outputs = [h.make_value_info(o, self.onnx.TypeProto()) for o in n.outputs if o]
        model = h.make_model(h.make_graph([n.proto], "fold", inputs, outputs), opset_imports=self.model.opset_import)
        got = ReferenceEvaluator(model).run(None, feeds)
        return [_Const(np.asarray(a)) for a in got]

    # -- values ------------------------------------------------------------------------------------------
    def get(self, name: str):
        if name not in self.env:
            raise OnnxImportError(f"the value {name!r} is used before it is defined")
        return self.env[name]

    def const(self, name: str) -> np.ndarray | None:
        """The import-time value of an input (None when it is computed at run time or omitted)."""
        v = self.env.get(name) if name else None
        if isinstance(v, _Const):
            return v.array
        if isinstance(v, _Ints) and v.static():
            return np.array(v.items[0] if v.scalar else v.items, dtype=np.int64)
        return None

    def tensor(self, name: str, user: str = "") -> Value | None:
        """An input as an IR tensor value (None when omitted): parameters are read, constants inserted."""
        if not name:
            return None
        v = self.get(name)
        if isinstance(v, Value):
            return v
        if name in self._attr_values:
            return self._attr_values[name]
        if isinstance(v, _Ints) and not v.static():
            raise OnnxImportError(f"a shape computed at run time is used as a tensor by {user or 'a node'}")
        arr = self.const(name)
        if isinstance(v, _Const) and v.path is not None:
            owner, _, leaf = v.path.rpartition(".")
            out = self._insert(GET_ATTR, [self._submodule(owner)], T.TENSOR, name=leaf)
        else:
            out = self._insert(CONSTANT, [], T.TensorType.of(factories.tensor(arr)), value=factories.tensor(arr))
        self._attr_values[name] = out
        return out

    def _submodule(self, path: str) -> Value:
        """``self.<path>`` read once (``prim::GetAttr`` per level), for the parameters under it."""
        if not path:
            return self.self_value
        if path not in self._modules:
            owner, _, leaf = path.rpartition(".")
            typ = T.ModuleType(type(self.root.get_submodule(path)))
            self._modules[path] = self._insert(GET_ATTR, [self._submodule(owner)], typ, name=leaf)
        return self._modules[path]

    def ints(self, name: str) -> _Ints:
        """A shape-like input (a 1-D int64 tensor) as a list of sizes known now or at run time."""
        v = self.get(name)
        if isinstance(v, _Ints):
            return v
        arr = self.const(name)
        if arr is None:
            raise OnnxImportError(f"the shape {name!r} is computed from tensor data at run time")
        return _Ints([int(i) for i in np.ravel(arr)], scalar=arr.ndim == 0)

    def int_list(self, ints: _Ints) -> list | Value:
        """A list of sizes as an op's ``int[]`` argument: a Python list, or a ``prim::ListConstruct``."""
        if ints.static():
            return list(ints.items)
        items = [i if isinstance(i, Value) else self.graph.insert_constant(i) for i in ints.items]
        return self._insert(LIST_CONSTRUCT, items, T.ListType(T.INT))

    def shape(self, name: str) -> tuple | None:
        v = self.env.get(name)
        if isinstance(v, Value) and isinstance(v.type, T.TensorType) and v.type.sizes is not None:
            return v.type.sizes
        if isinstance(v, _Const):
            return v.array.shape
        return self.shapes.get(name)

    def rank(self, name: str) -> int:
        s = self.shape(name)
        if s is None:
            raise OnnxImportError(f"the rank of {name!r} is not known (shape inference found none)")
        return len(s)

    def axes(self, n: _Node, index: int, attr: str = "axes") -> list | None:
        """An axes list given as an attribute (older opsets) or as a constant input (newer ones)."""
        if attr in n.attrs:
            return [int(a) for a in n.attrs[attr]]
        if n.input(index):
            arr = self.const(n.input(index))
            if arr is None:
                raise OnnxImportError(f"{attr} must be constants")
            return [int(a) for a in np.ravel(arr)]
        return None

    # -- building nodes ----------------------------------------------------------------------------------
    def _insert(self, kind: str, inputs: list, type: T.JitType, **attrs) -> Value:
        n = self.graph.insert(kind, inputs)
        n.attributes.update(attrs)
        n.output().type = type
        return n.output()

    def _argument(self, v) -> Value:
        if isinstance(v, Value):
            return v
        if isinstance(v, (list, tuple)) and any(isinstance(e, Value) for e in v):
            items = [self._argument(e) for e in v]
            elem = T.TENSOR if isinstance(items[0].type, T.TensorType) else items[0].type
            return self._insert(LIST_CONSTRUCT, items, T.ListType(elem))
        return self.graph.insert_constant(list(v) if isinstance(v, tuple) else v)

    def aten(self, name: str, *args, **kwargs):
        """Insert the registry op ``name`` (``"softmax.int"``) with its arguments in schema order: omitted ones
        take their defaults. Returns its output value, a tuple of them, or a list's elements unpacked."""
        op = R.get(name)
        inputs = []
        for i, a in enumerate(op.args):
            if i < len(args):
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            elif a.has_default:
                v = a.default
            else:
                raise TypeError(f"aten::{name}: missing argument {a.name!r}")
            inputs.append(self._argument(v))
        node = self.graph.insert(op.qualified_name, inputs, op.n_outputs, op=op)
        if op.returns_list:
            node.output().type = T.ListType(T.TENSOR)
            return node.output()
        return node.output() if op.n_outputs == 1 else tuple(node.outputs)

    def unpack(self, lst: Value, n: int) -> tuple:
        node = self.graph.insert(LIST_UNPACK, [lst], n)
        return tuple(node.outputs)

    def size(self, x: Value, d: int) -> Value:
        n = self.graph.insert("aten::size", [x, self.graph.insert_constant(d)])
        n.output().type = T.INT
        return n.output()
