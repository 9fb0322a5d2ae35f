"""Lowerings of control flow: ``prim::If`` to ONNX ``If``, ``prim::Loop`` to ONNX ``Loop``, and the scalar
built-ins their conditions and counters compute (``aten::lt.int``, ``aten::add.int``, ``aten::Bool``...).

A block becomes a subgraph built by a child builder (``GraphBuilder.subgraph``), which reads the values of the
enclosing graphs by name, as ONNX lets a subgraph read its outer scope. What is known when exporting folds
away: an ``if`` on a constant lowers only the branch taken, a branch that raises leaves the other one, an ``if``
without results (a check that raises, a print) writes nothing, and scalar arithmetic on constants stays Python.
A loop-carried value that starts as ``None`` (``hidden = None`` before ``for x_t in xs``) is an ONNX optional.

Scalars computed at run time are 0-d tensors: ``int`` as int64, ``float`` as float32 (the dtype PyTorch's
exporter gives Python floats), ``bool`` as bool.
"""

from __future__ import annotations

from .._core import dtypes as _dt
from ..jit.ir import kinds as K
from ..jit.ir import types as T
from ..jit.kinds import builtins as _builtins  # noqa: F401  (declares the built-in kinds lowered here)
from . import _types
from ._builder import GraphBuilder, OptionalValue, Value

_INT64_MAX = 2 ** 63 - 1  # the trip count scripted ``while`` loops carry


def _register(lower, *kinds: str) -> None:
    for k in kinds:
        K.set_onnx_lowering(k, lower)


# -- prim::If ---------------------------------------------------------------------------------------------------
def _raises(block) -> bool:
    """Whether running ``block`` always ends in an exception (a ``prim::RaiseException`` at its top level)."""
    return any(n.kind == K.RAISE_EXCEPTION for n in block.nodes)


def _writes(block) -> bool:
    for n in block.nodes:
        if K.facts(n.kind).mutating or (n.op is not None and n.op.inplace_of is not None):
            return True
        if any(_writes(b) for b in n.blocks):
            return True
    return False


def _add_output(child: GraphBuilder, v) -> Value:
    """Make ``v`` an output of the subgraph ``child`` typed by its dtype and rank alone: its sizes in the IR are
    the example's, which a dynamic axis or a loop iteration changes (ONNX Runtime holds outputs to their
    declared shapes)."""
    v = child.as_value(v)
    rank = child.rank(v)
    if rank is not None:
        child.set_type(v, None, (None,) * rank)
    return child.add_output(v)


def _as_bool(g: GraphBuilder, cond) -> Value:
    """A bool condition value (ONNX ``If``/``Loop`` take only bool)."""
    cond = g.as_value(cond, _dt.bool)
    return cond if g.dtype(cond) == _dt.bool else g.op("Cast", cond, to=_types.BOOL)


def _if(g: GraphBuilder, node, inputs):
    cond = inputs[0]
    then_block, else_block = node.blocks
    if not node.outputs:
        if _writes(then_block) or _writes(else_block):
            raise g.unsupported("an `if` writing tensors in place has no ONNX counterpart")
        return []  # a check that raises, or a print: ONNX models do neither
    taken = None
    if not g.is_value(cond):
        taken = then_block if cond else else_block
    elif _raises(then_block) != _raises(else_block):
        taken = else_block if _raises(then_block) else then_block
    if taken is not None:
        return g.lower_block(taken)
    then_g, else_g = g.subgraph(f"{g.name}_then_branch"), g.subgraph(f"{g.name}_else_branch")
    then_outs, else_outs = then_g.lower_block(then_block), else_g.lower_block(else_block)
    results: list = [None] * len(node.outputs)
    dynamic = []
    for k, (a, b) in enumerate(zip(then_outs, else_outs)):
        if not g.is_value(a) and not g.is_value(b) and type(a) is type(b) and a == b:
            results[k] = a  # the same constant either way
        else:
            dynamic.append(k)
    if not dynamic:
        return results
    for k in dynamic:
        for child, outs in ((then_g, then_outs), (else_g, else_outs)):
            if outs[k] is None or (not g.is_value(outs[k]) and isinstance(outs[k], (list, tuple, str))):
                raise g.unsupported(f"the branches' result {k} ({node.outputs[k].type}) is not a tensor or "
                                    "number in both branches")
            _add_output(child, outs[k])
    values = g.op("If", _as_bool(g, cond), outputs=len(dynamic), then_branch=then_g.make_graph(),
                  else_branch=else_g.make_graph())
    values = values if isinstance(values, tuple) else (values,)
    for k, v in zip(dynamic, values):
        _set_type(g, v, (then_g, then_outs[k]), (else_g, else_outs[k]))
        results[k] = v
    return results


_register(_if, K.IF)


def _set_type(g: GraphBuilder, v: Value, *sources) -> None:
    """Type ``v`` from the values it may be (``(builder, value)`` pairs): their dtype, and their rank with every
    size unknown where all agree on it (a model's outputs must have a rank; a size may change as the loop runs)."""
    dtypes = {b.dtype(x) for b, x in sources} - {None}
    ranks = {b.rank(x) for b, x in sources} - {None}
    g.set_type(v, next(iter(dtypes)) if len(dtypes) == 1 else None, (None,) * ranks.pop() if len(ranks) == 1 else None)


# -- prim::Loop -------------------------------------------------------------------------------------------------
def _optional_type(dtype):
    import onnx.helper  # optional dependency: only export needs it

    return onnx.helper.make_optional_type_proto(onnx.helper.make_tensor_type_proto(
        _types.onnx_type(dtype or _dt.float32), None))


def _iterated_lists(g: GraphBuilder, node) -> dict:
    """The tensor lists a loop body indexes with its counter (``for x_t in x.split(1)``) made by ``split`` or
    ``unbind`` before the loop, as ONNX sequences (``SplitToSequence``): their length is the input's, which a
    dynamic axis changes, so the list of the example's parts cannot stand for them. IR value -> sequence."""
    (block,) = node.blocks
    counter = block.inputs[0]
    found: dict = {}
    for n in block.nodes:
        if n.kind != K.GETITEM or n.inputs[1] is not counter or n.inputs[0] in found:
            continue
        src = n.inputs[0].node
        if src is None or src.op is None or src.owning_block is block:
            continue
        args = [g.env[v] for v in src.inputs]
        if src.kind == "aten::unbind" and not g.is_value(args[1]):
            found[n.inputs[0]] = g.op("SplitToSequence", args[0], axis=args[1], keepdims=0)
        elif src.kind == "aten::split" and src.op.overload == "Tensor" and not g.is_value(args[2]):
            found[n.inputs[0]] = g.op("SplitToSequence", args[0], g.as_value(args[1], _dt.int64), axis=args[2])
    return found


def _drop_unused(g: GraphBuilder, values: list, keep: set) -> None:
    """Remove the nodes that made ``values`` (and their parts) once nothing reads them: ONNX Runtime runs
    every node, and a split into the example's number of parts fails at another length. ``keep``: values the
    model may still read (bound to IR values)."""
    targets = {v for v in values if g.is_value(v)}
    while targets:
        read = set(keep)
        stack = [g.nodes]
        while stack:
            for n in stack.pop():
                read.update(n.input)
                stack.extend(a.g.node for a in n.attribute if a.HasField("g"))
        dead = [n for n in g.nodes if set(n.output) & targets and not set(n.output) & read]
        if not dead:
            return
        targets = {i for n in dead for i in n.input} - keep
        for n in dead:
            g.nodes.remove(n)


def _bound_values(g: GraphBuilder, skip) -> set:
    out: set = set()
    for k, v in g.env.items():
        if k is skip:
            continue
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            if g.is_value(x):
                out.add(x)
    return out


def _loop(g: GraphBuilder, node, inputs):
    import onnx.helper  # optional dependency: only export needs it

    trip, cond, carried = inputs[0], inputs[1], list(inputs[2:])
    (block,) = node.blocks
    sequences = _iterated_lists(g, node)
    counter_source = node.inputs[0].node
    if counter_source is not None and counter_source.kind == K.LEN and counter_source.inputs[0] in sequences:
        trip = g.op("SequenceLength", sequences[counter_source.inputs[0]])
    counter = block.inputs[0]
    for lst in sequences:  # read only through the sequence: the list of the example's parts is not needed
        if all(u.user is counter_source or (u.user.owning_block is block and u.user.kind == K.GETITEM
                                            and u.user.inputs[1] is counter) for u in lst.uses):
            _drop_unused(g, g.env[lst], _bound_values(g, lst))
    if not g.is_value(cond) and not cond:
        return carried  # runs no iteration
    optional = [c is None and isinstance(p.type, T.OptionalType) for c, p in zip(carried, block.inputs[1:])]
    for c, p in zip(carried, block.inputs[1:]):
        if isinstance(c, (list, tuple)) or (c is None and not isinstance(p.type, T.OptionalType)):
            raise g.unsupported(f"the loop-carried %{p.debug_name} ({p.type}) is not a tensor, number or "
                                "optional tensor")
    body = g.subgraph(f"{g.name}_loop_body")
    params = [body.add_input("iteration", _dt.int64, ()), body.add_input("cond_in", _dt.bool, ())]
    for c, p, opt in zip(carried, block.inputs[1:], optional):
        v = body.add_input(p.debug_name.replace(".", "_"), None if opt else g.dtype(c))
        params.append(OptionalValue(v) if opt else v)
    outs = _lower_body(body, block, [params[0], *params[2:]], sequences, g)
    _add_output(body, _as_bool(body, outs[0]))
    initial = []
    for k, (c, out, opt) in enumerate(zip(carried, outs[1:], optional)):
        if not opt:
            _add_output(body, out)
            initial.append(c)
            continue
        # ``None`` before the loop, a tensor after an iteration: an ONNX optional of the tensor's dtype
        dtype = body.dtype(out) if out is not None else None
        opt_type = _optional_type(dtype)
        body.inputs[2 + k] = onnx.helper.make_value_info(params[2 + k], opt_type)
        if out is None:
            out = body.op("Optional", type=opt_type.optional_type.elem_type)
        elif not isinstance(out, OptionalValue):
            out = body.op("Optional", out)
        name = body.add_output(out)
        body.outputs[-1] = onnx.helper.make_value_info(name, opt_type)
        initial.append(OptionalValue(g.op("Optional", type=opt_type.optional_type.elem_type)))
    trip = None if not g.is_value(trip) and (trip is None or trip >= _INT64_MAX) else g.as_value(trip, _dt.int64)
    values = g.op("Loop", trip, _as_bool(g, cond), *initial, outputs=len(carried), body=body.make_graph())
    values = values if isinstance(values, tuple) else (values,)
    results = []
    for v, c, out, opt in zip(values, carried, outs[1:], optional):
        if opt:
            results.append(OptionalValue(v))
            continue
        _set_type(g, v, (g, c), (body, out))
        results.append(v)
    return results


_register(_loop, K.LOOP)


def _lower_body(body: GraphBuilder, block, params: list, sequences: dict, g: GraphBuilder) -> list:
    """``body.lower_block`` reading the iterated lists' elements from their sequences."""
    for p, v in zip(block.inputs, params):
        body.env[p] = v
    for n in block.nodes:
        seq = sequences.get(n.inputs[0]) if n.kind == K.GETITEM else None
        if seq is None or n.inputs[1] is not block.inputs[0]:
            body.lower_node(n)
            continue
        element = body.op("SequenceAt", seq, params[0])
        src = n.inputs[0].node
        rank = g.rank(g.env[src.inputs[0]])
        body.set_type(element, g.dtype(g.env[src.inputs[0]]),
                      None if rank is None else (None,) * (rank - (src.kind == "aten::unbind")))
        body.env[n.output()] = element
    return [body.env[v] for v in block.outputs]


# -- scalar built-ins of conditions and counters ------------------------------------------------------------------
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
           "ge": "GreaterOrEqual", "eq": "Equal", "ne": "Equal", "__and__": "And", "__or__": "Or",
           "__xor__": "Xor", "remainder": "Mod", "floordiv": "Div"}


def _scalar(g: GraphBuilder, x, like=None) -> Value:
    """``x`` as a 0-d value: a constant takes the dtype of ``like`` (the other operand) where it has one."""
    if g.is_value(x):
        return x
    dtype = g.dtype(like) if like is not None and g.is_value(like) else None
    return g.constant(x, dtype)


def _fold(node, inputs):
    return K.get(node.kind).function(*inputs)


def _binary(g: GraphBuilder, node, inputs):
    a, b = inputs
    if not g.is_value(a) and not g.is_value(b):
        return [_fold(node, inputs)]
    name = node.kind.split("::", 1)[1].split(".", 1)[0]
    a, b = _scalar(g, a, b), _scalar(g, b, a)
    if g.dtype(a) != g.dtype(b) and None not in (g.dtype(a), g.dtype(b)):
        b = g.op("Cast", b, to=_types.onnx_type(g.dtype(a)))
    if name == "floordiv" and g.dtype(a) is not None and g.dtype(a).is_floating_point:
        return [g.op("Floor", g.op("Div", a, b))]
    out = g.op(_BINARY[name], a, b, **({"fmod": 0} if name == "remainder" else {}))
    return [g.op("Not", out) if name == "ne" else out]


for _name in _BINARY:
    for _suffix in ("int", "float", "bool", "Scalar"):
        if K.lookup(f"aten::{_name}.{_suffix}") is not None:
            K.set_onnx_lowering(f"aten::{_name}.{_suffix}", _binary)


def _neg(g: GraphBuilder, node, inputs):
    (x,) = inputs
    return [g.op("Neg", x) if g.is_value(x) else _fold(node, inputs)]


_register(_neg, "aten::neg.int", "aten::neg.float", "aten::neg.Scalar")


def _not(g: GraphBuilder, node, inputs):
    (x,) = inputs
    return [g.op("Not", _as_bool(g, x)) if g.is_value(x) else _fold(node, inputs)]


_register(_not, "aten::__not__")


def _bool(g: GraphBuilder, node, inputs):
    (x,) = inputs
    return [_as_bool(g, x) if g.is_value(x) else _fold(node, inputs)]


_register(_bool, "aten::Bool")


def _is(g: GraphBuilder, node, inputs):
    a, b = inputs
    if isinstance(b, OptionalValue) and a is None:
        a, b = b, a
    if isinstance(a, OptionalValue) and b is None:
        missing = g.op("Not", g.op("OptionalHasElement", a))
        return [missing if node.kind == "aten::__is__" else g.op("Not", missing)]
    if g.is_value(a) or g.is_value(b):  # a value computed at run time is never None
        if a is not None and b is not None:
            raise g.unsupported("`is` between two values computed at run time")
        return [node.kind == "aten::__isnot__"]
    return [_fold(node, inputs)]


_register(_is, "aten::__is__", "aten::__isnot__")

