"""A traced module's calls to its submodules as ``prim::CallMethod`` nodes, each callee a graph of its own.

The tracer records one flat graph (what runs) and, alongside it, a frame per
submodule call (``trace.Frame``). Here each call that took tensors in and gave
tensors (or a tuple of them) out, and touched nothing of its caller's but its
arguments, becomes::

    %conv1 : __torch__...Conv2d = prim::GetAttr[name="conv1"](%self)
    %5 : Tensor = prim::CallMethod[name="forward"](%conv1, %x)

with the callee's graph (``self`` first, its parameters read from it) held by
the node under ``"callee"``. Any other call stays inlined in its caller, as in
the flat graph. Inlining every call (``passes.inline_calls``) gives the flat
graph back, node for node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value, values_defined, values_read
from ..ir.verify import verify
from ..passes._clone import clone_node
from ..passes.inline_calls import CALLEE, drop_unused_module_attrs
from ._frames import Frame
from .trace import Tracer


@dataclass
class CallGraphs:
    """The root's graph with calls, and each traced submodule's methods (``forward``, ``forward1``, ...)."""

    graph: Graph
    methods: dict = field(default_factory=dict)  # id(module) -> (module, {method name: Graph})

    def methods_of(self, module) -> dict:
        e = self.methods.get(id(module))
        return e[1] if e is not None and e[0] is module else {}


class LazyCallGraphs:
    """The call graphs of a trace, built the first time something asks (tracing itself pays nothing for them)."""

    def __init__(self, tracer: Tracer, flat: Graph):
        self._source: tuple | None = (tracer.root_frame, flat)
        self._result: CallGraphs | None = None

    def get(self) -> CallGraphs | None:
        if self._source is not None:
            root, flat = self._source
            self._source = None
            self._result = _call_graphs(root, flat)
        return self._result


def call_graphs(tracer: Tracer, flat: Graph) -> CallGraphs | None:
    """The call structure of a module trace, or None when the frames do not cover the flat graph."""
    return _call_graphs(tracer.root_frame, flat)


def _call_graphs(root: Frame | None, flat: Graph) -> CallGraphs | None:
    if root is None:
        return None
    if set(flat.block.nodes) != set(_walk_nodes(root)):
        return None
    _decide(root, flat)
    result = CallGraphs(flat)
    builder = _Builder(result, flat)
    try:
        result.graph = builder.build(root)
        for g in builder.graphs:
            verify(g)
    except Exception:  # a trace the call form cannot express is still a valid flat trace
        return None
    return result


def _walk_nodes(f: Frame):
    for item in f.items:
        if isinstance(item, Node):
            yield item
        else:
            yield from _walk_nodes(item)


def _walk_frames(f: Frame):
    for item in f.items:
        if isinstance(item, Frame):
            yield item
            yield from _walk_frames(item)


def _top(n: Node) -> Node:
    while n.owning_block is not None and n.owning_block.owning_node is not None:
        n = n.owning_block.owning_node
    return n


def _decide(root: Frame, flat: Graph) -> None:
    """Mark each frame that can be a call: it reads only its arguments and module, and leaks only its outputs."""
    returned = set(flat.outputs)
    for f in _walk_frames(root):
        f.call = False
        if not f.ok:
            continue
        nodes = list(_walk_nodes(f))
        members = set(nodes)
        defined: set = set()
        for n in nodes:
            values_defined(n, defined)
        allowed = defined | set(f.args) | {f.self_value}
        if any(v not in allowed for n in nodes for v in values_read(n)):
            continue
        if any(v not in allowed for v in f.outputs):
            continue
        outs = set(f.outputs)
        leaks = any(o not in outs and (o in returned or any(_top(u.user) not in members for u in o.uses))
                    for n in nodes for o in n.outputs)
        f.call = not leaks


class _Builder:
    def __init__(self, result: CallGraphs, flat: Graph):
        self.result = result
        self.flat = flat
        self.counts: dict[int, int] = {}
        self.graphs: list[Graph] = []

    def build(self, f: Frame) -> Graph:
        g = Graph()
        env: dict = {}
        modules: dict = {}
        if f.parent is None:
            for v in self.flat.inputs:
                env[v] = g.add_input(v._name, v.type)
            modules[(id(f), ())] = env[f.self_value]
        else:
            self_in = g.add_input("self", T.ModuleType(type(f.module)))
            modules[(id(f), ())] = self_in
            if f.self_value is not None:
                env[f.self_value] = self_in
            for v, name in zip(f.args, f.arg_names):
                inp = g.add_input(name, v.type)
                env.setdefault(v, inp)
        self.emit(f, g, env, modules)
        if f.parent is None:
            for v in self.flat.outputs:
                g.register_output(env[v])
        elif f.tuple_output:
            outs = [env[v] for v in f.outputs]
            n = g.insert(K.TUPLE_CONSTRUCT, outs)
            n.output().type = T.TupleType([v.type for v in f.outputs])  # the types the trace saw
            g.register_output(n.output())
        elif f.outputs:
            g.register_output(env[f.outputs[0]])
        else:  # nothing reads the call's results: it returns None, as PyTorch's trace does
            g.register_output(g.insert_constant(None))
        drop_unused_module_attrs(g)
        self.graphs.append(g)
        return g

    def emit(self, f: Frame, g: Graph, env: dict, modules: dict) -> None:
        for item in f.items:
            if isinstance(item, Node):
                clone_node(g, item, env)
            elif item.call:
                self.call(item, g, env, modules)
            else:
                self.emit(item, g, env, modules)

    def module(self, f: Frame, path: tuple, g: Graph, env: dict, modules: dict, scope: str = "") -> Value:
        """The value in ``g`` of ``f``'s module at ``path``: the flat graph's read if already copied, else a new one."""
        flat = f.attrs.get(path) if path else f.self_value
        if flat is not None and flat in env:
            return env[flat]
        key = (id(f), path)
        v = modules.get(key)
        if v is None:
            if not path:
                v = self.module(f.parent, f.relpath, g, env, modules, scope)
            else:
                base = self.module(f, path[:-1], g, env, modules, scope)
                n = g.insert(K.GET_ATTR, [base])
                n["name"] = path[-1]
                n.scope = scope
                v = n.output()
                v.type = T.ModuleType(type(f.module.get_submodule(".".join(path))))
                v.set_debug_name(path[-1] if path[-1].isidentifier() else f"_{path[-1]}")
            modules[key] = v
        return v

    def call(self, c: Frame, g: Graph, env: dict, modules: dict) -> None:
        callee = self.build(c)
        k = self.counts.get(id(c.module), 0)
        self.counts[id(c.module)] = k + 1
        name = "forward" if k == 0 else f"forward{k}"
        methods = self.result.methods.setdefault(id(c.module), (c.module, {}))[1]
        methods.setdefault(name, callee)
        self_v = self.module(c, (), g, env, modules, c.scope)  # scoped as the flat trace scopes submodule reads
        n = g.insert(K.CALL_METHOD, [self_v] + [env[a] for a in c.args])
        n["name"] = name
        n[CALLEE] = callee
        n.source = c.source
        if c.tuple_output:
            n.output().type = T.TupleType([T.TENSOR] * len(c.outputs))
            un = g.insert(K.TUPLE_UNPACK, [n.output()], 0)
            for v in c.outputs:
                env[v] = un.add_output(v.type)
        elif c.outputs:
            n.output().type = T.TENSOR
            env[c.outputs[0]] = n.output()
        else:
            n.output().type = T.NONE

