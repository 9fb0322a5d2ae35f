"""Lowerings of the JIT's own node kinds (``prim::Constant``, containers, attributes, sizes) to ONNX.

Each is attached to its kind, declared once in ``toolkit.jit.ir.kinds``, with ``set_onnx_lowering``:
``lower(g, node, inputs) -> one entry per output``. Most kinds here fold away while exporting: constants,
lists and tuples of constants, and attributes of the module stay Python values that the ops' lowerings
read as arguments; only what is computed when the model runs (a size of a dynamic input) becomes nodes.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from ..jit.ir import kinds as K
from ..jit.ir import types as T
from ..ops.view import onnx_ints
from ..tensor import Tensor
from ._builder import GraphBuilder, OptionalValue, _Module


def _lowers(*kinds: str):
    def deco(fn):
        for k in kinds:
            K.set_onnx_lowering(k, fn)
        return fn
    return deco


def _is_tensor_list(t) -> bool:
    return isinstance(t, T.ListType) and isinstance(t.elem, (T.TensorType, T.OptionalType))


@_lowers(K.CONSTANT)
def _constant(g: GraphBuilder, node, inputs):
    # Tensors stay Python values too: an op's lowering gets them as constants of their own dtype.
    return [node.attributes.get("value")]


@_lowers(K.LIST_CONSTRUCT)
def _list_construct(g: GraphBuilder, node, inputs):
    if _is_tensor_list(node.output().type) or not any(g.is_value(x) for x in inputs):
        return [list(inputs)]
    return [onnx_ints(g, inputs)]  # a list of ints some of which are computed (sizes of dynamic inputs)


@_lowers(K.TUPLE_CONSTRUCT)
def _tuple_construct(g: GraphBuilder, node, inputs):
    return [tuple(inputs)]


@_lowers(K.LIST_UNPACK, K.TUPLE_UNPACK)
def _unpack(g: GraphBuilder, node, inputs):
    (seq,) = inputs
    if g.is_value(seq):  # an int64 tensor of sizes
        return [g.op("Gather", seq, g.constant(i), axis=0) for i in range(len(node.outputs))]
    return list(seq)


@_lowers(K.TUPLE_INDEX, K.GETITEM)
def _getitem(g: GraphBuilder, node, inputs):
    seq, index = inputs
    if g.is_value(seq):
        return [g.op("Gather", seq, g.as_value(index), axis=0)]
    if g.is_value(index):
        raise g.unsupported("indexing a list or tuple with an index computed at run time")
    return [seq[index]]


@_lowers(K.GET_ATTR)
def _get_attr(g: GraphBuilder, node, inputs):
    (owner,) = inputs
    name = node["name"]
    if not isinstance(owner, _Module):
        raise g.unsupported(f"the attribute {name!r} of a value that is not the exported module")
    value = getattr(owner.module, name)
    if isinstance(value, Tensor):
        return [g.parameter(value, owner.prefix + name)]
    if hasattr(value, "named_parameters"):
        return [_Module(value, f"{owner.prefix}{name}.")]
    return [value]


@_lowers(K.MODULE_CONSTANT)
def _module_constant(g: GraphBuilder, node, inputs):
    # a module scripted code reads from a global: its parameters become initializers like the model's own
    module = getattr(node["value"], "module", node["value"])  # held as a ModuleRef
    name = node.output().debug_name if node.output().has_debug_name() else type(module).__name__.lower()
    return [_Module(module, f"{name}.")]


@_lowers(K.UNCHECKED_CAST, "aten::contiguous")
def _identity(g: GraphBuilder, node, inputs):
    if isinstance(inputs[0], OptionalValue):  # a ``Tensor?`` narrowed to its tensor
        return [g.op("OptionalGetElement", inputs[0])]
    return [inputs[0]]


@_lowers("aten::size")
def _size(g: GraphBuilder, node, inputs):
    # Always read at run time: a dimension may be dynamic (``dynamic_axes``) even where the IR knows it.
    shape = g.op("Shape", inputs[0])
    if len(inputs) == 1:
        return [shape]
    dim = inputs[1]
    if not g.is_value(dim) and dim < 0 and g.rank(inputs[0]) is not None:
        dim += g.rank(inputs[0])
    return [g.op("Gather", shape, g.as_value(dim), axis=0)]


@_lowers("aten::dim")
def _dim(g: GraphBuilder, node, inputs):
    r = g.rank(inputs[0])
    return [r if r is not None else g.op("Size", g.op("Shape", inputs[0]))]


@_lowers("aten::numel")
def _numel(g: GraphBuilder, node, inputs):
    return [g.op("Size", inputs[0])]


@_lowers("aten::len")
def _len(g: GraphBuilder, node, inputs):
    (x,) = inputs
    if not g.is_value(x):
        return [len(x)]
    return [g.op("Gather", g.op("Shape", x), g.constant(0), axis=0)]


@_lowers("aten::Int", "aten::Float")
def _number(g: GraphBuilder, node, inputs):
    (x,) = inputs
    to = int if node.kind == "aten::Int" else float
    if not g.is_value(x):
        return [to(np.asarray(x).item() if isinstance(x, (np.ndarray, np.generic)) else x)]
    return [g.op("Cast", x, to=_dt.int64 if to is int else _dt.float32)]



@_lowers(K.NUM_TO_TENSOR)
def _num_to_tensor(g: GraphBuilder, node, inputs):
    # a traced size: already the 0-dim int64 tensor ``aten::size`` gathered, or a number known when exporting
    (x,) = inputs
    return [x if g.is_value(x) else np.asarray(x)]
