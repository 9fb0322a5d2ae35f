"""Runs a graph node by node with the registry's ops, through the normal dispatch path.

Autograd records as in eager mode (each ``aten::`` node is one ``dispatch.execute``
call), each value is dropped after its last use, and an error raised by a node
gets "while executing <node> at file:line" appended so it points at the user's code.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from .. import dispatch
from .ir import Block, Graph, Node, Value, values_read


class Interpreter:
    """Executes one graph; the plan (what to free after each node) is made once."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self._plan = _plan(graph)
        self._block_plans: dict = {}

    def run(self, inputs, on_node: Callable | None = None, observe: Callable | None = None) -> list:
        """The graph's outputs for these inputs.

        ``on_node(node, values)`` sees every top-level node's results;
        ``observe(values, objects)`` sees every value as it is bound, nested blocks
        included (a loop's block inputs at each iteration): the profiling run's view.
        """
        g = self.graph
        if len(inputs) != len(g.inputs):
            raise RuntimeError(f"the graph takes {len(g.inputs)} inputs, but {len(inputs)} were given")
        env: dict = dict(zip(g.inputs, inputs))
        env[_PLANS] = self._block_plans
        if observe is not None:
            env[_OBSERVE] = observe
            observe(g.inputs, list(inputs))
        node = None
        try:
            for node, step, dead in self._plan:
                step(node, env)
                if on_node is not None:
                    on_node(node, [env[o] for o in node.outputs])
                if observe is not None:
                    observe(node.outputs, [env[o] for o in node.outputs])
                for v in dead:
                    del env[v]
        except Exception as e:
            raise _annotate(e, node) from None
        return [env[v] for v in g.outputs]


def _plan(graph: Graph) -> list:
    """Pairs (node, values that die after it) for the top block.

    Only values defined in the top block are freed here; a value defined inside a
    nested block lives in the environment until the run ends.
    """
    nodes = graph.block.nodes
    top = set(graph.inputs)
    for n in nodes:
        top.update(n.outputs)
    last: dict[Value, int] = {}
    for i, n in enumerate(nodes):
        for v in values_read(n):
            if v in top:
                last[v] = i
        for o in n.outputs:
            last.setdefault(o, i)
    keep = set(graph.outputs)
    dead: list[list] = [[] for _ in nodes]
    for v, i in last.items():
        if v not in keep:
            dead[i].append(v)
    return [(n, _step_for(n), tuple(d)) for n, d in zip(nodes, dead)]


def _step_for(n: Node) -> Callable:
    """The function that runs node ``n``: for registry ops, a closure prepared once so a run
    pays only for gathering inputs and one dispatch (the interpreter's cost per node stays
    at eager dispatch's)."""
    if n.kind == "prim::FusionGroup":
        return group_runner(n)
    handler = _EXEC.get(n.kind)
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


_PLANS = object()  # the env key under which a run keeps its interpreter's nested-block plans
_OBSERVE = object()  # the env key of a profiling run's observer (see Interpreter.run)


def _block_plan(b: Block, env: dict) -> list:
    """A nested block's (node, step) pairs, prepared once per interpreter as the top level's are."""
    plans = env.get(_PLANS)
    if plans is None:
        plans = env[_PLANS] = {}
    plan = plans.get(id(b))
    if plan is None or plan[0] is not b:
        plan = plans[id(b)] = (b, [(n, _step_for(n)) for n in b.nodes])
    return plan[1]


def _run_block(b: Block, env: dict) -> list:
    n = None
    observe = env.get(_OBSERVE)
    try:
        for n, step in _block_plan(b, env):
            step(n, env)
            if observe is not None:
                observe(n.outputs, [env[o] for o in n.outputs])
    except Exception as e:
        raise _annotate(e, n) from None
    return [env[v] for v in b.outputs]


def _exec_node(n: Node, env: dict) -> None:
    try:
        _EXEC.get(n.kind, _exec_op)(n, env)
    except Exception as e:
        raise _annotate(e, n) from None


def _annotate(e: Exception, n: Node) -> Exception:
    """The same exception with the node and its source line appended (once: the innermost node wins)."""
    if getattr(e, "_jit_annotated", False):
        return e
    from .printer import node_to_string

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


def _constant(n: Node, env: dict) -> None:
    env[n.outputs[0]] = n.attributes.get("value")


def _list(n: Node, env: dict) -> None:
    env[n.outputs[0]] = [env[v] for v in n.inputs]


def _tuple(n: Node, env: dict) -> None:
    env[n.outputs[0]] = tuple(env[v] for v in n.inputs)


def _dict(n: Node, env: dict) -> None:
    vals = [env[v] for v in n.inputs]
    env[n.outputs[0]] = dict(zip(vals[0::2], vals[1::2]))


def _getitem(n: Node, env: dict) -> None:
    env[n.outputs[0]] = env[n.inputs[0]][env[n.inputs[1]]]


def _unpack(n: Node, env: dict) -> None:
    seq = env[n.inputs[0]]
    if len(seq) != len(n.outputs):
        raise RuntimeError(f"{n.kind}: expected {len(n.outputs)} elements, got {len(seq)}")
    for v, x in zip(n.outputs, seq):
        env[v] = x


def _getattr(n: Node, env: dict) -> None:
    env[n.outputs[0]] = getattr(env[n.inputs[0]], n["name"])


def _if(n: Node, env: dict) -> None:
    b = n.blocks[0] if env[n.inputs[0]] else n.blocks[1]
    for v, x in zip(n.outputs, _run_block(b, env)):
        env[v] = x


def _loop(n: Node, env: dict) -> None:
    trip, cond = env[n.inputs[0]], env[n.inputs[1]]
    carried = [env[v] for v in n.inputs[2:]]
    b = n.blocks[0]
    observe = env.get(_OBSERVE)
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


def group_runner(n: Node):
    """The runner (and so the compiled kernel) of a FusionGroup node, made on first use."""
    from .group_runner import group_runner as make

    return make(n)


def _fusion_group(n: Node, env: dict) -> None:
    group_runner(n)(n, env)


_CALLEES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _call_method(n: Node, env: dict) -> None:
    """A submodule call (``prim::CallMethod``): run its callee graph with the module as ``self``."""
    callee = n.attributes.get("callee")
    if not isinstance(callee, Graph):
        raise RuntimeError(f"the interpreter cannot run prim::CallMethod[name={n.attributes.get('name')!r}]: "
                           "the node has no callee graph")
    it = _CALLEES.get(n)
    if it is None or it.graph is not callee:
        it = _CALLEES[n] = Interpreter(callee)
    for v, x in zip(n.outputs, it.run([env[v] for v in n.inputs])):
        env[v] = x


_EXEC = {
    "prim::CallMethod": _call_method,
    "prim::FusionGroup": _fusion_group,
    "prim::Constant": _constant,
    "prim::ListConstruct": _list,
    "prim::TupleConstruct": _tuple,
    "prim::DictConstruct": _dict,
    "aten::__getitem__": _getitem,
    "prim::ListUnpack": _unpack,
    "prim::TupleUnpack": _unpack,
    "prim::GetAttr": _getattr,
    "prim::If": _if,
    "prim::Loop": _loop,
}
