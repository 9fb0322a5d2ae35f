"""Type propagation: each ``aten::`` node's output types from its input types, by the op's meta rule.

The registry's meta rules take anything with ``.shape``/``.dtype``/``.device``,
so ``TensorType`` goes straight in: the IR's types come from the same
definition that eager execution checks against.
"""

from __future__ import annotations

from ..._core.meta import TensorMeta
from . import kinds as K
from . import types as T
from .graph import Graph, Node, Value

_UNKNOWN = object()


def _static_value(v: Value):
    """What a meta rule receives for an input: the type for tensors, the value for constants."""
    if isinstance(v.type, T.TensorType):
        return v.type
    n = v.node
    if n is None:
        return _UNKNOWN
    if n.kind == K.CONSTANT:
        return n.attributes.get("value")
    if n.kind == K.LIST_CONSTRUCT:
        elems = [_static_value(e) for e in n.inputs]
        if any(e is _UNKNOWN for e in elems):
            return _UNKNOWN
        return elems if isinstance(v.type.elem, (T.TensorType, T.OptionalType)) else tuple(elems)
    return _UNKNOWN


def infer_node(n: Node) -> list | None:
    """Output types of an aten node from its inputs' types, or None when its inputs are not known well enough."""
    args = [_static_value(v) for v in n.inputs]
    if any(a is _UNKNOWN for a in args):
        return None
    for a in args:
        if isinstance(a, T.TensorType) and not a.is_complete():
            return None
    metas = n.op.infer(*args)
    if isinstance(metas, TensorMeta):
        metas = [metas]
    return [T.TensorType.from_meta(m) for m in metas]


def propagate_types(graph: Graph) -> None:
    """Recompute the types of every aten node's outputs in program order (strides and requires_grad unknown)."""
    for n in graph.all_nodes():
        if n.op is None:
            continue
        types = infer_node(n)
        if types is None or len(types) != len(n.outputs):
            for o in n.outputs:
                if isinstance(o.type, T.TensorType):
                    o.type = T.TENSOR
            continue
        for o, t in zip(n.outputs, types):
            o.type = t
