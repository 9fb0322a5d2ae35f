"""The graph builder ``g`` that lowerings write ONNX nodes with, and the walk that lowers a toolkit IR graph.

A lowering (``@relu.symbolic`` beside the op, or a prim kind's in ``_prim.py``) never imports onnx: it gets
its arguments as ONNX values (``Value``, a name) or Python constants and calls ``g.op``::

    @relu.symbolic
    def _(g, self):
        return g.op("Relu", self)

The builder also lowers whole blocks (``lower_block``), which is what ``export`` does for the graph and what
``prim::If``/``prim::Loop`` lowerings do for their blocks in a child builder (``subgraph``): a child shares the
parent's names and sees the parent's values, as an ONNX subgraph sees its outer scope.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._core import dtypes as _dt
from ..jit.ir import kinds as K
from ..jit.ir import types as T
from ..tensor import Tensor
from . import _source, _types
from .errors import OnnxExporterError, SymbolicValueError, UnsupportedLowering, UnsupportedOperatorError


class Value(str):
    """An ONNX value of the graph being built, by its name (a ``str``, so it prints and joins as one)."""

    __slots__ = ()


class OptionalValue(Value):
    """An ONNX optional value (``optional(tensor)``): a loop-carried ``Tensor?`` that starts as None.
    ``prim::unchecked_cast`` reads its tensor (``OptionalGetElement``), ``is None`` asks ``OptionalHasElement``."""

    __slots__ = ()


class _Module:
    """A module reached from the graph's ``self`` (a ``prim::GetAttr`` chain), with its state_dict prefix."""

    __slots__ = ("module", "prefix")

    def __init__(self, module, prefix: str):
        self.module, self.prefix = module, prefix


class _Names:
    """Unique names across a model and its subgraphs (ONNX requires each value to be defined once)."""

    def __init__(self):
        self.used: set[str] = set()
        self.counts: dict[str, int] = {}

    def take(self, name: str) -> str:
        if name not in self.used:
            self.used.add(name)
            return name
        k = self.counts.get(name, 0)
        while f"{name}_{k}" in self.used:
            k += 1
        self.counts[name] = k + 1
        self.used.add(f"{name}_{k}")
        return f"{name}_{k}"


class _ModelState:
    """What the builders of one model share: names, initializers, options."""

    def __init__(self, opset: int, export_params: bool, training: bool):
        self.names = _Names()
        self.opset = opset
        self.export_params = export_params
        self.training = training
        self.initializers: list = []  # TensorProtos
        self.param_inputs: list = []  # ValueInfoProtos of parameters given as inputs (export_params=False)
        self.params: dict[int, Value] = {}  # id(tensor) -> its value
        self.root = None  # the exported module (its submodules place nodes in errors), None for a function


# Element types of ONNX ops whose result's dtype is not their first input's (for ``g.dtype`` of new values).
_INT64_OUT = {"Shape", "Size", "ArgMax", "ArgMin", "NonZero"}
_BOOL_OUT = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN",
             "IsInf"}


class GraphBuilder:
    """``g``: adds ONNX nodes for lowerings and knows the types of the values it holds.

    Values' types come from the toolkit IR (the traced or propagated types of the node outputs they stand for)
    and, for values a lowering makes, from the ONNX op (``Cast``'s ``to``, a comparison's bool, else its first
    input's dtype); shapes are known for IR values and constants.
    """

    def __init__(self, state: _ModelState, parent: GraphBuilder | None = None, name: str = "main_graph"):
        self._state = state
        self.parent = parent
        self.name = name
        self.nodes: list = []  # NodeProtos
        self.inputs: list = []  # ValueInfoProtos
        self.outputs: list = []
        self.env: dict = {} if parent is None else dict(parent.env)  # IR Value -> ONNX Value / Python value
        self._types: dict[str, tuple] = {} if parent is None else dict(parent._types)  # name -> (dtype, shape)
        self._scope = ""
        self._node: object = None  # the IR node being lowered (for errors)

    # -- what lowerings use -------------------------------------------------------------------------
    @property
    def opset(self) -> int:
        """The target opset of the default domain."""
        return self._state.opset

    @property
    def training(self) -> bool:
        """Whether the model is exported for training (``TrainingMode.TRAINING``)."""
        return self._state.training

    @staticmethod
    def is_value(x) -> bool:
        """Whether ``x`` is an ONNX value (computed when the model runs) rather than a Python constant."""
        return isinstance(x, Value)

    def op(self, op_type: str, *inputs, outputs: int = 1, domain: str = "", **attrs):
        """Add one ONNX node; return its output value (a tuple of them when ``outputs`` > 1).

        A None input becomes an omitted optional input; trailing ones are dropped. Python constants among the
        inputs become constants of their default dtype.
        """
        import onnx.helper  # optional dependency: only export needs it

        names = [("" if x is None else self.as_value(x)) for x in inputs]
        while names and names[-1] == "":
            names.pop()
        base = f"{self._scope}/{op_type}" if self._scope else f"/{op_type}"
        outs = [Value(self._state.names.take(f"{base}_output_{i}")) for i in range(outputs)]
        attrs = {k: _attr(v) for k, v in attrs.items() if v is not None}
        node = onnx.helper.make_node(op_type, names, list(outs), name=self._state.names.take(base),
                                     domain=domain or None, **attrs)
        self.nodes.append(node)
        dtype = self._result_dtype(op_type, names, attrs)
        for o in outs:
            self._types[o] = (dtype, None)
        return outs[0] if outputs == 1 else tuple(outs)

    def constant(self, value, dtype=None) -> Value:
        """A constant value: a Python number (a 0-dim tensor), a (nested) list, a numpy array or a Tensor.

        ``dtype`` (a toolkit dtype) defaults to PyTorch's for the value: bool, int64 or the default float dtype.
        """
        if isinstance(value, Tensor):
            dtype = dtype or value.dtype
            value = value.detach().numpy()
        dtype = _types.constant_dtype(value, dtype)
        array = np.asarray(value).astype(_types.numpy_dtype(dtype))  # -1 as uint8 is 255, as PyTorch wraps it
        out = self.op("Constant", value=_tensor_proto(array, dtype, "value"))
        self._types[out] = (dtype, tuple(array.shape))
        return out

    def as_value(self, x, dtype=None) -> Value:
        """``x`` if it is a value, else the constant ``x`` (of ``dtype`` if given)."""
        if isinstance(x, Value):
            return x
        if x is None:
            raise SymbolicValueError("None is not a value")
        return self.constant(x, dtype)

    def dtype(self, v):
        """The toolkit dtype of a value, or None when not known."""
        if not isinstance(v, Value):
            return _types.constant_dtype(v) if v is not None else None
        return self._types.get(v, (None, None))[0]

    def shape(self, v) -> tuple | None:
        """The shape of a value (None for a dynamic dimension), or None when not even the rank is known."""
        if not isinstance(v, Value):
            return tuple(np.shape(v))
        return self._types.get(v, (None, None))[1]

    def rank(self, v) -> int | None:
        """The number of dimensions of a value, or None when not known."""
        s = self.shape(v)
        return None if s is None else len(s)

    def unsupported(self, why: str) -> Exception:
        """The error a lowering raises for a call ONNX cannot express (``raise g.unsupported("...")``)."""
        return UnsupportedLowering(why)

    def set_type(self, v: Value, dtype=None, shape: Sequence | None = None) -> None:
        """Record what is known of a value's type (lowerings that know better than the builder's guess)."""
        old_dtype, old_shape = self._types.get(v, (None, None))
        self._types[v] = (dtype or old_dtype, old_shape if shape is None else tuple(shape))

    # -- subgraphs (``prim::If``/``prim::Loop``) -------------------------------------------------------
    def subgraph(self, name: str) -> GraphBuilder:
        """A child builder for an ONNX subgraph (a branch or loop body): it sees this graph's values."""
        child = GraphBuilder(self._state, self, name)
        child._scope = self._scope
        return child

    def add_input(self, name: str, dtype=None, shape: Sequence | None = None, dims: Sequence | None = None) -> Value:
        """A graph input named ``name`` (made unique) of ``dtype`` and ``shape`` (None dims dynamic, or names
        given in ``dims``); an unknown dtype gives an input without a type (a loop body's, say)."""
        import onnx.helper  # optional dependency: only export needs it

        v = Value(self._state.names.take(name))
        if dtype is None:
            self.inputs.append(onnx.helper.make_empty_tensor_value_info(v))
        else:
            self.inputs.append(_value_info(v, dtype, shape, dims))
        self._types[v] = (dtype, None if shape is None else tuple(shape))
        return v

    def add_output(self, value, name: str | None = None, dims: Sequence | None = None) -> Value:
        """Make ``value`` (a value or a constant) an output of this graph, named ``name`` where given.

        The value's producing node is renamed when it belongs to this graph and is not yet an output or
        input; otherwise an ``Identity`` gives the output its own name.
        """
        v = self.as_value(value)
        dtype, shape = self._types.get(v, (None, None))
        taken = {o.name for o in self.outputs} | {i.name for i in self.inputs}
        producer = self._producer(v) if v not in taken else None
        if name is not None and producer is not None and name not in self._state.names.used:
            self._rename(v, producer, name)
            v = Value(name)
            self._state.names.used.add(name)
        elif producer is None or name is not None:
            v = Value(self.op("Identity", v))
            if name is not None:
                self._rename(v, self.nodes[-1], self._state.names.take(name))
                v = Value(self.nodes[-1].output[0])
        self._types[v] = (dtype, shape)
        self.outputs.append(_value_info(v, dtype, shape, dims))
        return v

    def make_graph(self, initializers: Sequence = ()):
        """The ``GraphProto`` of the nodes, inputs and outputs added so far."""
        import onnx.helper  # optional dependency: only export needs it

        return onnx.helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, list(initializers))

    def lower_block(self, block, values: Sequence = ()) -> list:
        """Lower a toolkit IR block's nodes into this builder, its parameters bound to ``values``; returns what
        its outputs are (ONNX values or Python constants)."""
        for p, v in zip(block.inputs, values):
            self.env[p] = v
        for node in block.nodes:
            self.lower_node(node)
        return [self.env[v] for v in block.outputs]

    # -- lowering one IR node ---------------------------------------------------------------------------
    def lower_node(self, node) -> None:
        """Add the ONNX nodes of one IR node and bind its outputs."""
        self._node = node
        self._scope = _scope_path(node.scope)
        inputs = [self._lookup(v) for v in node.inputs]
        try:
            if node.op is not None:
                results = self._lower_op(node, inputs)
            else:
                kind = K.lookup(node.kind)
                lower = None if kind is None else kind.onnx_lowering
                if lower is None:
                    raise UnsupportedOperatorError(node.kind, self.opset, source=self._where(node))
                results = lower(self, node, inputs)
        except UnsupportedLowering as e:
            raise UnsupportedOperatorError(node.kind, self.opset, str(e), self._where(node)) from None
        except (UnsupportedOperatorError, OnnxExporterError):
            raise
        except Exception as e:
            raise OnnxExporterError(f"lowering {node.kind} (called at {self._where(node)}) failed: "
                                    f"{type(e).__name__}: {e}") from e
        if node.op is not None and len(node.outputs) == 1:
            results = (results,)  # an op's lowering returns its one value; a prim kind's, one per output
        if not isinstance(results, (tuple, list)) or len(results) != len(node.outputs):
            raise OnnxExporterError(f"the lowering of {node.kind} gave {results!r} for "
                                    f"{len(node.outputs)} outputs (called at {self._where(node)})")
        for o, r in zip(node.outputs, results):
            self.env[o] = r
            if isinstance(r, Value):
                self._type_from_ir(r, o.type)

    def _lower_op(self, node, inputs: list):
        d = node.op
        lower = d.onnx_lowering
        if lower is None and d.inplace_of is not None:
            lower = d.inplace_of.onnx_lowering
        if lower is None:
            raise UnsupportedOperatorError(d.qualified_name, self.opset, source=self._where(node))
        args = list(inputs) + [a.default for a in d.args[len(inputs):]]
        # the IR's dtypes, or the builder's where the IR has none (a scripted loop body's values)
        tensor_dtypes = [getattr(v.type, "dtype", None) or (self.dtype(x) if isinstance(x, Value) else None)
                         for v, x in zip(node.inputs, inputs) if isinstance(v.type, T.TensorType)]
        for i, a in enumerate(d.args[:len(args)]):
            if a.is_tensor_list:
                if isinstance(args[i], (list, tuple)):
                    args[i] = [None if x is None else self._tensor_arg(x, tensor_dtypes) for x in args[i]]
            elif a.is_tensor and args[i] is not None:
                args[i] = self._tensor_arg(args[i], tensor_dtypes)
        result = lower(self, *args)
        if d.inplace_of is not None and node.inputs and isinstance(result, Value):
            self.env[node.inputs[0]] = result  # later uses of the written tensor read the new value
        return result

    def _tensor_arg(self, x, tensor_dtypes) -> Value:
        if isinstance(x, (Value, Tensor, np.ndarray)):
            return self.as_value(x)
        if isinstance(x, (bool, int, float)):
            return self.constant(x, _types.wrapped_number_dtype(x, tensor_dtypes))
        raise SymbolicValueError(f"cannot pass {type(x).__name__} {x!r} as a tensor")

    def _where(self, node) -> str:
        return _source.describe(node, self._state.root)

    def _lookup(self, v):
        if v in self.env:
            return self.env[v]
        raise OnnxExporterError(f"the value %{v.debug_name} is used before it is defined")

    def _type_from_ir(self, v: Value, t) -> None:
        if not isinstance(t, T.TensorType):
            return
        dtype, shape = self._types.get(v, (None, None))
        sizes = t.sizes if shape is None else shape
        self._types[v] = (t.dtype or dtype, sizes)

    # -- parameters ----------------------------------------------------------------------------------------
    def parameter(self, tensor: Tensor, name: str) -> Value:
        """The value of a parameter or buffer: an initializer (or a graph input without ``export_params``)."""
        state = self._state
        found = state.params.get(id(tensor))
        if found is not None:
            return found
        root = self
        while root.parent is not None:
            root = root.parent
        v = Value(state.names.take(name))
        array = tensor.detach().numpy()
        if state.export_params:
            state.initializers.append(_tensor_proto(array, tensor.dtype, v))
        else:
            state.param_inputs.append(_value_info(v, tensor.dtype, tuple(array.shape)))
        state.params[id(tensor)] = v
        root._types[v] = self._types[v] = (tensor.dtype, tuple(array.shape))
        return v

    # -- internals -----------------------------------------------------------------------------------------
    def _result_dtype(self, op_type: str, inputs: list, attrs: dict):
        if op_type == "Cast":
            return _types.toolkit_dtype(attrs["to"])
        if op_type == "CastLike" and len(inputs) > 1:
            return self._types.get(inputs[1], (None, None))[0]
        if op_type in _INT64_OUT:
            return _types.toolkit_dtype(_types.INT64)
        if op_type in _BOOL_OUT:
            return _types.toolkit_dtype(_types.BOOL)
        if op_type == "Where" and len(inputs) > 1:
            return self._types.get(inputs[1], (None, None))[0]
        if op_type in ("Constant", "ConstantOfShape", "If", "Loop") or not inputs or not inputs[0]:
            return None
        return self._types.get(inputs[0], (None, None))[0]

    def _producer(self, v: Value):
        for n in reversed(self.nodes):
            if v in n.output:
                return n
        return None

    def _rename(self, old: str, producer, new: str) -> None:
        for i, o in enumerate(producer.output):
            if o == old:
                producer.output[i] = new
        for n in self.nodes:
            for i, x in enumerate(n.input):
                if x == old:
                    n.input[i] = new
        for k, v in self.env.items():
            if isinstance(v, Value) and v == old:
                self.env[k] = Value(new)
        self._types[Value(new)] = self._types.get(Value(old), (None, None))


def _scope_path(scope: str) -> str:
    """``__module.conv1.0`` -> ``/conv1.0``: the node names PyTorch's exporter gives (``/conv1/Conv``)."""
    if not scope:
        return ""
    parts = [p.removeprefix("__module").lstrip(".") for p in scope.split("/")]
    return "".join(f"/{p}" for p in parts if p)


def _attr(v):
    """An attribute value as onnx.helper takes it (tuples become lists, numpy scalars Python numbers, a toolkit
    dtype its element type, so a lowering writes ``g.op("Cast", x, to=toolkit.float32)``)."""
    if isinstance(v, _dt.dtype):
        return _types.onnx_type(v)
    if isinstance(v, tuple):
        return [_attr(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return _tensor_proto(v, _types.constant_dtype(v), "value")
    return v


def _tensor_proto(array: np.ndarray, dtype, name: str):
    import onnx.numpy_helper  # optional dependency: only export needs it

    code = _types.onnx_type(dtype)
    if code == _types.BFLOAT16:
        import onnx.helper  # optional dependency: only export needs it
        return onnx.helper.make_tensor(name, code, array.shape, np.asarray(array, np.float32).ravel().tolist())
    # reshaped: ascontiguousarray gives a 0-d array one dimension, and a scalar must stay 0-d
    data = np.ascontiguousarray(array, dtype=_types.numpy_dtype(dtype)).reshape(np.shape(array))
    return onnx.numpy_helper.from_array(data, name)


def _value_info(name: str, dtype, shape: Sequence | None, dims: Sequence | None = None):
    """A tensor ValueInfo: ``shape`` None for an unknown rank, None dims unknown; ``dims`` names dims."""
    import onnx.helper  # optional dependency: only export needs it

    if dtype is None:
        return onnx.helper.make_empty_tensor_value_info(name)
    if shape is not None:
        shape = [d if dims is None or dims[i] is None else dims[i] for i, d in enumerate(shape)]
    return onnx.helper.make_tensor_value_info(name, _types.onnx_type(dtype), shape)


