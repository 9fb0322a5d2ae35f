"""What a compiled plan may assume about its values: which tensors' dtypes are certain, and which nodes
may call their CPU kernel on arrays directly.

The profiling run saw one path through the graph. A dtype it saw is certain
only where every way to reach the value gives that dtype: a node's result is
certain when its inputs are (an op's result dtype is a function of its inputs'
dtypes); a conditional's result when both branches give the same certain dtype
(a branch never taken was never seen, so is not certain); a loop-carried value
when its initial and its carried-back values are. The analysis starts from
everything observed and removes what a rule refutes until nothing changes, so
what is left holds on every path, not only the profiled one.
"""

from __future__ import annotations

from ... import dispatch
from ...ops import registry as R
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ..kinds import effects as _effects

# non-tensor argument types whose run-time value cannot change a result's dtype
_STATIC_ARG_TYPES = (T.IntType, T.FloatType, T.BoolType, T.StrType, T.NoneType)
_DIRECT_KINDS = (R.ELEMENTWISE, R.COMPARISON, R.LINALG, R.VIEW, R.REDUCTION, R.FACTORY, R.CONVERSION, R.SHAPE,
                 R.INDEXING, R.NN)


def observed_type(v: Value, observed: dict) -> T.TensorType | None:
    t = v.type if isinstance(v.type, T.TensorType) else None
    if t is None or t.dtype is None:
        t = observed.get(v)
    return t if t is not None and t.dtype is not None else None


def is_none(v: Value) -> bool:
    """A value that is always None: a ``None`` constant (possibly cast to an Optional), one typed NoneType, or
    an uninitialized placeholder."""
    while v.node is not None and v.node.kind == K.UNCHECKED_CAST:
        v = v.node.inputs[0]
    if v.node is not None and v.node.kind == K.UNINITIALIZED:
        return True  # a placeholder on paths that never read it (a value set only inside a loop)
    return isinstance(v.type, T.NoneType) or (v.node is not None and v.node.kind == K.CONSTANT
                                               and v.node.attributes.get("value") is None
                                               and not isinstance(v.type, T.TensorType))


def certain_dtypes(graph: Graph, observed: dict) -> dict:
    """``{value: dtype}`` for every tensor value (CPU) whose dtype holds on every path (see the module doc)."""
    known: dict = {}
    for v in graph.all_values():
        t = observed_type(v, observed)
        if t is not None and t.device is not None and getattr(t.device, "type", t.device) == "cpu":
            known[v] = t.dtype
    mutated = _mutated_containers(graph)
    set_attrs = {n.attributes.get("name") for n in graph.all_nodes() if n.kind == K.SET_ATTR}
    changed = True
    while changed:
        changed = False
        for n in graph.all_nodes():
            for out, sources in _sources(n, mutated, set_attrs):
                if out in known and not _agrees(known, out, sources):
                    del known[out]
                    changed = True
    return known


def _agrees(known: dict, out: Value, sources) -> bool:
    if sources is None:
        return False
    d = known[out]
    for s in sources:
        if is_none(s) or not _holds_tensor(s):
            continue
        if s not in known or known[s] != d:
            return False
    return True


def _holds_tensor(v: Value) -> bool:
    t = v.type
    if isinstance(t, T.OptionalType):
        t = t.elem
    if isinstance(t, T.ListType):
        t = t.elem
    return isinstance(t, (T.TensorType, T.AnyType))


def _sources(n: Node, mutated: set, set_attrs: set):
    """(output, the values its dtype follows from, or None when nothing vouches for it) per output."""
    kind = n.kind
    if kind == K.CONSTANT:
        return ()
    if kind == K.IF:
        return [(o, [b.outputs[k] for b in n.blocks]) for k, o in enumerate(n.outputs)]
    if kind == K.LOOP:
        b = n.blocks[0]
        pairs = []
        for k, o in enumerate(n.outputs):
            srcs = [n.inputs[k + 2], b.outputs[k + 1]]
            pairs.append((o, srcs))
            pairs.append((b.inputs[k + 1], srcs))
        return pairs
    if kind == K.UNCHECKED_CAST:
        return [(n.outputs[0], [n.inputs[0]])]
    if K.facts(kind).container_read:
        src = n.inputs[0]
        return [(o, None if src in mutated else _elements(src)) for o in n.outputs]
    if kind == K.GET_ATTR:  # parameters and buffers: the plan's signature holds their dtypes
        return [(o, None if n.attributes.get("name") in set_attrs else ()) for o in n.outputs]
    if kind == K.FUSION_GROUP:
        return [(o, list(n.inputs)) for o in n.outputs]
    if n.op is not None:
        ok = all(_static_arg(v) for v in n.inputs)
        return [(o, list(n.inputs) if ok else None) for o in n.outputs]
    return [(o, None) for o in n.outputs]


def _static_arg(v: Value) -> bool:
    t = v.type
    if isinstance(t, (T.TensorType, *_STATIC_ARG_TYPES)) or (v.node is not None and v.node.kind == K.CONSTANT):
        return True
    if isinstance(t, T.OptionalType):
        return isinstance(t.elem, (T.TensorType, *_STATIC_ARG_TYPES))
    return isinstance(t, T.ListType) and isinstance(t.elem, (T.IntType, T.FloatType, T.BoolType))


def _elements(container: Value):
    """The values a container's tensors come from: its producer's inputs (an op's or a literal's)."""
    p = container.node
    if p is None:
        return ()  # a graph input: the signature holds its tensors' dtypes
    if p.kind in (K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT) or p.op is not None:
        return list(p.inputs)
    return None


def _mutated_containers(graph: Graph) -> set:
    return {n.inputs[0] for n in graph.all_nodes() if n.inputs and n.op is None and _effects.is_mutating(n)}


class DirectCall:
    """How a node calls its CPU kernel on arrays: the kernel, and per input how to pass it."""

    __slots__ = ("op", "kernel", "args", "result_dtype", "scalar_dtype")

    def __init__(self, op, args, result_dtype, scalar_dtype):
        self.op = op
        self.kernel = op.kernels["cpu"]
        self.args = args  # per input: "array", "scalar", "ints" (a list passed as a tuple) or "value"
        self.result_dtype = result_dtype  # the dtype dispatch casts a pointwise result to (None: no cast)
        self.scalar_dtype = scalar_dtype  # the compute dtype Python scalars are converted to (pointwise ops)


def direct_call(n: Node, known: dict) -> DirectCall | None:
    """The node's direct call, where dispatch would decide nothing a plan does not already know.

    Dispatch binds (the node's inputs are bound), promotes (here: every tensor
    input already has the computed dtype, so nothing is cast), checks devices
    (all CPU) and records gradients (a compiled plan records none).
    """
    op = n.op
    if op is None or n.kind == K.FUSION_GROUP or op.kind not in _DIRECT_KINDS or op.composite is not None:
        return None
    if "cpu" not in op.kernels or op.kind is R.INPLACE or len(n.inputs) != len(op.args):
        return None
    if any(o not in known for o in n.outputs if isinstance(o.type, T.TensorType)) or (
            op.returns_list and n.outputs[0] not in known and not _list_known(n, known)):
        return None
    if op.requires_grad_arg is not None and constant_value(n.inputs[op.requires_grad_arg]) not in (False, None):
        return None
    if op.device_arg is not None:
        dev = n.inputs[op.device_arg]
        if not is_none(dev) and str(constant_value(dev, "?")) != "cpu":
            return None
    args, dims, scalars = [], [], []
    for v, a in zip(n.inputs, op.args):
        if a.is_tensor_list:
            return None
        if a.is_tensor:
            if is_none(v):
                args.append("value")
            elif isinstance(v.type, T.TensorType) or isinstance(v.type, T.OptionalType):
                if v not in known or known[v].is_complex:  # a complex tensor may be a lazy conjugate, which
                    return None                              # dispatch resolves and a raw array call would not
                dims.append(known[v])
                args.append("array")
            elif isinstance(v.type, (T.IntType, T.FloatType, T.BoolType)):
                scalars.append({T.IntType: 0, T.FloatType: 0.0, T.BoolType: False}[type(v.type)])
                args.append("scalar")
            else:
                return None
        elif a.is_number_list:
            args.append("ints")
        else:
            args.append("value")
    result_dtype = scalar_dtype = None
    promotes = op.pointwise or (op.promote_args is not op.tensor_args and op.promotion != R.PROMOTE_NONE)
    if promotes:
        if not dims or any(d != dims[0] for d in dims):
            return None
        compute, result_dtype = dispatch.promotion_for(op, dims, [], scalars)
        if compute != dims[0]:
            return None  # dispatch would cast the inputs first
        scalar_dtype = compute
    elif "scalar" in args:
        return None
    call = DirectCall(op, args, result_dtype, scalar_dtype)
    if op.specializer is not None:
        known_args = [T.TensorType(known[v], None, None, "cpu") if how == "array"
                      else constant_value(v, None) for v, how in zip(n.inputs, args)]
        kernel = op.specializer(*known_args)
        if kernel is not None:
            call.kernel = kernel
    return call


def _list_known(n: Node, known: dict) -> bool:
    """A list-returning op (``split``): its tensors' dtype follows from its input's."""
    return all(v in known for v, a in zip(n.inputs, n.op.args) if a.is_tensor and not is_none(v))


_MISSING = object()


def constant_value(v: Value, default=_MISSING):
    """A constant's value; ``default`` (True unless given) for a value computed at run time."""
    if v.node is not None and v.node.kind == K.CONSTANT:
        return v.node.attributes.get("value")
    return True if default is _MISSING else default
