"""Runs a graph node by node with the registry's ops, through the normal dispatch path.

Autograd records as in eager mode (each ``aten::`` node is one ``dispatch.execute``
call), each value is dropped after its last use, and an error raised by a node
gets "while executing <node> at file:line" appended so it points at the user's code.
"""

from __future__ import annotations

import operator
import time
import weakref
from collections.abc import Callable

from .. import dispatch
from .ir import Block, Graph, Node, Value

_LIST_ARG_PREFIXES = ("int[", "SymInt[", "float[")


class Interpreter:
    """Executes one graph; the plan (what to free after each node) is made once."""

    def __init__(self, graph: Graph, direct: bool = False):
        self.graph = graph
        self._plan = _plan(graph, direct)
        self._block_plans: dict = {}

    def run(self, inputs, on_node: Callable | None = None) -> list:
        """The graph's outputs for these inputs; ``on_node(node, values)`` sees every top-level node's results."""
        g = self.graph
        if len(inputs) != len(g.inputs):
            raise RuntimeError(f"the graph takes {len(g.inputs)} inputs, but {len(inputs)} were given")
        env: dict = dict(zip(g.inputs, inputs))
        env[_PLANS] = self._block_plans
        node = None
        try:
            for node, step, dead in self._plan:
                step(node, env)
                if on_node is not None:
                    on_node(node, [env[o] for o in node.outputs])
                for v in dead:
                    del env[v]
        except Exception as e:
            raise _annotate(e, node) from None
        return [env[v] for v in g.outputs]


def _plan(graph: Graph, direct: bool = False) -> list:
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
        for v in _used_values(n):
            if v in top:
                last[v] = i
        for o in n.outputs:
            last.setdefault(o, i)
    keep = set(graph.outputs)
    dead: list[list] = [[] for _ in nodes]
    for v, i in last.items():
        if v not in keep:
            dead[i].append(v)
    return [(n, (direct and _direct_step(n)) or _step_for(n), tuple(d)) for n, d in zip(nodes, dead)]


def _direct_step(n: Node) -> Callable | None:
    """For a plan that never records gradients: a matrix product or a view calls its CPU kernel directly.

    Its types are specialized (complete, CPU, matching dtypes), so dispatch's
    binding, promotion and device checks have nothing left to decide (a view
    still shares its source's storage and records its view chain); with an
    observer (a profiler, a tracer) or in inference mode the call goes through
    dispatch as usual.
    """
    from ..ops import registry as R
    from . import types as T

    op = n.op
    if op is None or op.kind not in (R.LINALG, R.VIEW) or op.n_outputs != 1 or len(n.outputs) != 1 \
            or op.returns_list or op.composite is not None:
        return None
    kernel = op.kernels.get("cpu")
    if kernel is None:
        return None
    for v, a in zip(n.inputs, op.args):
        t = v.type
        if a.type.startswith("Tensor"):
            if not (isinstance(t, T.TensorType) and t.is_complete() and getattr(t.device, "type", t.device) == "cpu"):
                return None
        elif a.type.startswith(_LIST_ARG_PREFIXES) or a.type.startswith("Tensor"):
            return None
    from ..tensor import Tensor, _wrap

    ins = tuple(n.inputs)
    out = n.outputs[0]
    execute = dispatch.execute
    state = dispatch.STATE
    view = op.kind is R.VIEW
    wrap_view = dispatch._wrap_one
    cpu = dispatch.CPU

    def step(node: Node, env: dict) -> None:
        args = [env[v] for v in ins]
        if state.observers or state.inference_mode:
            env[out] = execute(op, args)
            return
        res = kernel(*[a._data if isinstance(a, Tensor) else a for a in args])
        env[out] = wrap_view(res, args[0], op, args, cpu) if view else _wrap(res)

    return step


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
    list_args = tuple(i for i, a in enumerate(op.args[: len(ins)]) if a.type.startswith(_LIST_ARG_PREFIXES))
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


def _used_values(n: Node):
    """Values a node reads, including those its nested blocks read from outside."""
    yield from n.inputs
    for b in n.blocks:
        for m in b.nodes:
            yield from _used_values(m)
        yield from b.outputs


_PLANS = object()  # the env key under which a run keeps its interpreter's nested-block plans


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
    try:
        for n, step in _block_plan(b, env):
            step(n, env)
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
        if isinstance(args[i], list) and a.type.startswith(_LIST_ARG_PREFIXES):
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
    i = 0
    while cond and (trip is None or i < trip):
        env[b.inputs[0]] = i
        for v, x in zip(b.inputs[1:], carried):
            env[v] = x
        res = _run_block(b, env)
        cond, carried = res[0], res[1:]
        i += 1
    for v, x in zip(n.outputs, carried):
        env[v] = x


class _GroupRunner:
    """Runs one ``prim::FusionGroup`` node: its fused kernel, or its subgraph where the kernel cannot serve.

    The kernel has no autograd, so a call that must record gradients, or inputs
    that fail the kernel's guard (other shapes or dtypes than it was generated
    for), run the subgraph node by node instead: slower, never wrong.

    Each input layout (strides) seen gets a prepared step (the kernel's launch
    or the subgraph, whichever won the race), so a call pays for gathering its
    inputs, the guard and one dict look-up. The guard checks only inputs that
    are not graph inputs: a plan is specialized to its graph inputs' shapes and
    dtypes, so only values computed inside (data-dependent shapes) can differ.
    """

    __slots__ = ("node", "kernel", "_sub", "_wrap", "_steps", "_inputs", "_outputs", "_guarded")

    def __init__(self, node: Node):
        from ..tensor import _wrap
        from .codegen import FusedKernel
        from .codegen.cuda_fused_kernel import CudaFusedKernel, group_device

        self.node = node
        self._sub = None
        self._wrap = _wrap
        if group_device(node) == "cuda":  # a numba.cuda kernel; its outputs wrap as tensors on the group's device
            self.kernel = CudaFusedKernel(node)
            device = node.outputs[0].type.device
            self._wrap = lambda a: _wrap(a, None, device)
        else:
            self.kernel = FusedKernel(node)
        self._steps: dict = {}  # input strides -> step(args, arrays) -> output tensors (the race's winner)
        self._inputs = tuple(node.inputs)
        self._outputs = tuple(node.outputs)
        graph_inputs = set(node.graph.inputs)
        shapes, dtypes = self.kernel.in_shapes, self.kernel.in_dtypes
        self._guarded = tuple((k, tuple(shapes[k]), dtypes[k])
                              for k, v in enumerate(self._inputs) if v not in graph_inputs)

    def subgraph_interpreter(self) -> Interpreter:
        if self._sub is None:
            self._sub = Interpreter(self.node["Subgraph"])
        return self._sub

    def __call__(self, n: Node, env: dict) -> None:
        for o in dispatch.STATE.observers:  # the profiler: one range per fused-kernel run
            if hasattr(o, "on_fusion_group"):
                return o.on_fusion_group(n, lambda: self._run(n, env))
        self._run(n, env)

    def _run(self, n: Node, env: dict) -> None:
        args = [env[v] for v in self._inputs]
        arrays = [a._data for a in args]
        if not (dispatch.STATE.grad_enabled and True in [a._requires_grad for a in args]):
            step = self._steps.get(tuple(map(_STRIDES, arrays)))
            if step is not None:
                for k, shape, dtype in self._guarded:
                    a = arrays[k]
                    if a.shape != shape or a.dtype != dtype:
                        step = None
                        break
                if step is not None:
                    for v, r in zip(self._outputs, step(args, arrays)):
                        env[v] = r
                    return
        self._run_checked(n, env, args, arrays)

    def _step(self, wins: bool, arrays: list):
        """The prepared step for the layout of ``arrays`` (which pass the kernel's guard)."""
        kernel = self.kernel
        if not wins:
            sub = self.subgraph_interpreter()

            def unfused(args: list, arrays: list) -> list:
                kernel.fallbacks += 1
                return sub.run(args)
            return unfused
        launch = kernel.launcher(arrays) if hasattr(kernel, "launcher") else kernel.run
        wrap = self._wrap

        def fused(args: list, arrays: list) -> list:
            return [wrap(o) for o in launch(arrays)]
        return fused

    def _run_checked(self, n: Node, env: dict, args: list, arrays: list) -> None:
        """The full path: grad mode, the whole guard, the race on a new layout; prepares the layout's step."""
        kernel = self.kernel
        needs_grad = dispatch.STATE.grad_enabled and any(a._requires_grad for a in args)
        if needs_grad or not kernel.matches(arrays):
            kernel.fallbacks += 1
            outs = self.subgraph_interpreter().run(args)
        else:
            key = tuple(map(_STRIDES, arrays))
            step = self._steps.get(key)
            if step is None:
                from .codegen import fused_kernel

                wins = self._race(args, arrays) if fused_kernel.RACE_UNFUSED and getattr(kernel, "race", True) else True
                step = self._steps[key] = self._step(wins, arrays)
            outs = step(args, arrays)
        for v, r in zip(n.outputs, outs):
            env[v] = r

    def _race(self, args: list, arrays: list) -> bool:
        """Time the kernel against the group's ops run one by one (best of two each), once per layout.

        Fusion must win in wall time: the generated loop calls scalar math
        functions, which lose to numpy's vectorized ones on large float32
        tensors (tanh: ~15 ns against ~0.4 ns an element). Where the ops one by
        one are faster they run instead, and the graph still shows the group.
        """
        kernel = self.kernel
        kernel.run(arrays)  # compiles or loads the loop first
        sub = self.subgraph_interpreter()
        fused = unfused = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            kernel.run(arrays)
            t1 = time.perf_counter()
            sub.run(args)
            t2 = time.perf_counter()
            fused, unfused = min(fused, t1 - t0), min(unfused, t2 - t1)
        kernel.decisions[tuple(a.strides for a in arrays)] = ("fused" if fused <= unfused else "unfused",
                                                            fused, unfused)
        return fused <= unfused


_STRIDES = operator.attrgetter("strides")
_GROUP_RUNNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def group_runner(n: Node) -> _GroupRunner:
    """The runner (and so the compiled kernel) of a FusionGroup node, made on first use."""
    r = _GROUP_RUNNERS.get(n)
    if r is None:
        r = _GROUP_RUNNERS[n] = _GroupRunner(n)
    return r


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
