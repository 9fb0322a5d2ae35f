"""How each node kind runs: the table the interpreter and compiled plans share.

A handler ``handler(node, env)`` reads the node's input values from ``env`` (a
dict from ``Value`` to its runtime value) and binds its outputs there. The
interpreter (``runtime.interpreter``) walks a graph calling them, and code
generation (``codegen.python_plan``) calls the same handlers for the nodes it
does not turn into Python source, so both run a kind alike. Each handler is
attached to its kind in the registry of kinds (``ir.kinds``); ``EXEC`` is
the registry's table of them. This module sits below both: it imports only the
IR, and the runtime attaches the handlers that need it (``prim::CallMethod``,
``prim::FusionGroup``, ``prim::fork``) at import.
"""

from __future__ import annotations

from collections.abc import Callable

from ... import dispatch
from ..ir import kinds as K
from ..ir.graph import Block, Node
from ..ir.printer import node_to_string


def step_for(n: Node) -> Callable:
    """The function that runs node ``n``: for registry ops, a closure prepared once so a run
    pays only for gathering inputs and one dispatch (the interpreter's cost per node stays
    at eager dispatch's)."""
    make = STEP_MAKERS.get(n.kind)
    if make is not None:
        return make(n)
    handler = EXEC.get(n.kind)
    if handler is not None:
        return handler
    op = n.op
    if op is None:
        return _exec_op  # raises the clear "cannot run" error when reached
    ins = tuple(n.inputs)
    list_args = tuple(i for i, a in enumerate(op.args[: len(ins)]) if a.is_number_list)
    outs = tuple(n.outputs)
    single = outs[0] if len(outs) == 1 else None
    execute = dispatch.execute

    def step(node: Node, env: dict) -> None:
        args = [env[v] for v in ins]
        for i in list_args:
            if isinstance(args[i], list):
                args[i] = tuple(args[i])
        out = execute(op, args)
        if single is not None:
            env[single] = out
        else:
            for v, r in zip(outs, out):
                env[v] = r

    return step


PLANS = object()  # the env key under which a run keeps its interpreter's nested-block plans
OBSERVE = object()  # the env key of a profiling run's observer (see Interpreter.run)


def _block_plan(b: Block, env: dict) -> list:
    """A nested block's (node, step) pairs, prepared once per interpreter as the top level's are."""
    plans = env.get(PLANS)
    if plans is None:
        plans = env[PLANS] = {}
    plan = plans.get(id(b))
    if plan is None or plan[0] is not b:
        plan = plans[id(b)] = (b, [(n, step_for(n)) for n in b.nodes])
    return plan[1]


def _run_block(b: Block, env: dict) -> list:
    n = None
    observe = env.get(OBSERVE)
    try:
        for n, step in _block_plan(b, env):
            step(n, env)
            if observe is not None:
                observe(n.outputs, [env[o] for o in n.outputs])
    except Exception as e:
        raise annotate(e, n) from None
    return [env[v] for v in b.outputs]


def _exec_node(n: Node, env: dict) -> None:
    try:
        EXEC.get(n.kind, _exec_op)(n, env)
    except Exception as e:
        raise annotate(e, n) from None


def annotate(e: Exception, n: Node) -> Exception:
    """The same exception with the node and its source line appended (once: the innermost node wins)."""
    if getattr(e, "_jit_annotated", False):
        return e
    msg = f"{e}\nwhile executing {node_to_string(n, source_locations=False).strip()} at {n.source_location}"
    try:
        new = type(e)(msg)
    except Exception:
        e.add_note(msg)
        new = e
    new._jit_annotated = True
    new.__traceback__ = e.__traceback__
    return new


def _exec_op(n: Node, env: dict) -> None:
    op = n.op
    if op is None:
        raise RuntimeError(f"the interpreter cannot run {n.kind}")
    args = [env[v] for v in n.inputs]
    for i, a in enumerate(op.args):
        if isinstance(args[i], list) and a.is_number_list:
            args[i] = tuple(args[i])
    out = dispatch.execute(op, args)
    outs = n.outputs
    if len(outs) == 1:
        env[outs[0]] = out
    else:
        for v, r in zip(outs, out):
            env[v] = r


@K.handles(K.CONSTANT)
def _constant(n: Node, env: dict) -> None:
    env[n.outputs[0]] = n.attributes.get("value")


@K.handles(K.LIST_CONSTRUCT)
def _list(n: Node, env: dict) -> None:
    env[n.outputs[0]] = [env[v] for v in n.inputs]


@K.handles(K.TUPLE_CONSTRUCT)
def _tuple(n: Node, env: dict) -> None:
    env[n.outputs[0]] = tuple(env[v] for v in n.inputs)


@K.handles(K.DICT_CONSTRUCT)
def _dict(n: Node, env: dict) -> None:
    vals = [env[v] for v in n.inputs]
    env[n.outputs[0]] = dict(zip(vals[0::2], vals[1::2]))


@K.handles(K.GETITEM)
def _getitem(n: Node, env: dict) -> None:
    env[n.outputs[0]] = env[n.inputs[0]][env[n.inputs[1]]]


@K.handles(K.LIST_UNPACK, K.TUPLE_UNPACK)
def _unpack(n: Node, env: dict) -> None:
    seq = env[n.inputs[0]]
    if len(seq) != len(n.outputs):
        raise RuntimeError(f"{n.kind}: expected {len(n.outputs)} elements, got {len(seq)}")
    for v, x in zip(n.outputs, seq):
        env[v] = x


@K.handles(K.GET_ATTR)
def _getattr(n: Node, env: dict) -> None:
    env[n.outputs[0]] = getattr(env[n.inputs[0]], n["name"])


@K.handles(K.IF)
def _if(n: Node, env: dict) -> None:
    b = n.blocks[0] if env[n.inputs[0]] else n.blocks[1]
    for v, x in zip(n.outputs, _run_block(b, env)):
        env[v] = x


@K.handles(K.LOOP)
def _loop(n: Node, env: dict) -> None:
    trip, cond = env[n.inputs[0]], env[n.inputs[1]]
    carried = [env[v] for v in n.inputs[2:]]
    b = n.blocks[0]
    observe = env.get(OBSERVE)
    i = 0
    while cond and (trip is None or i < trip):
        env[b.inputs[0]] = i
        for v, x in zip(b.inputs[1:], carried):
            env[v] = x
        if observe is not None:
            observe(b.inputs, [i, *carried])
        res = _run_block(b, env)
        cond, carried = res[0], res[1:]
        i += 1
    for v, x in zip(n.outputs, carried):
        env[v] = x


# kind -> handler(node, env): the registry's handlers (``Kind.handler``), set with ``@K.handles`` above; scripted
# builtins (``kinds.builtins``) and the runtime's kinds add theirs at import.
EXEC = K.HANDLERS
# kind -> make(node) -> the node's step, for kinds whose step is an object prepared per node (a FusionGroup's
# runner, which compiled plans also call on arrays): the registry's ``Kind.step_maker``s, set by the runtime.
STEP_MAKERS = K.STEP_MAKERS
