"""Calling a compiled graph: arguments bound and checked against its types, then run by its executor.

A ``CompiledFunction`` is what ``toolkit.jit.script`` makes of a function; compiled
methods (``api.CompiledMethod``) are called the same way. Inside a trace, a call
is recorded as the graph's own nodes, so its loops and branches stay in the trace.
Nothing here compiles: the function compiler inlines a ``CompiledFunction`` it
meets by compiling its Python function, and reads it from here.
"""

from __future__ import annotations

import inspect

from .... import dispatch
from ....nn.modules.module import Module
from ....tensor import Tensor
from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Graph, _copy_block_into
from ...script_module import ScriptFunction
from ..trace import Tracer
from .refs import ModuleRef
from .typing_rules import check_argument


class CompiledFunction(ScriptFunction):
    """A scripted function: runs its graph (loops and branches kept) through the profiling executor."""

    def __init__(self, graph: Graph, name: str, py_fn, types: list):
        super().__init__(graph, name)
        self._py_fn = py_fn
        self._signature = inspect.signature(py_fn)
        self._types = types
        self.__wrapped__ = py_fn
        self.__doc__ = py_fn.__doc__
        self.__qualname__ = py_fn.__qualname__

    def _bind(self, args, kwargs) -> list:
        return bind_arguments(self.name, self._signature, self._types, args, kwargs)

    def __call__(self, *args, **kwargs):
        return run_graph(self.graph, self._executor, self._bind(args, kwargs))

    @property
    def python_fn(self):
        return self._py_fn

    def __repr__(self) -> str:
        return f"<toolkit.jit.ScriptFunction {self.name}>"


def run_graph(graph: Graph, executor, inputs: list):
    """Run a compiled graph; inside a trace, record the call as the graph's nodes."""
    tracer = active_tracer()
    if tracer is not None:
        return trace_call(tracer, graph, inputs, lambda: executor.run(inputs)[0])
    return executor.run(inputs)[0]


def bind_arguments(name: str, signature, types, args, kwargs) -> list:
    """The call's arguments in order, defaults filled in, each checked against its compiled type."""
    try:
        b = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None
    b.apply_defaults()
    vals = list(b.arguments.values())
    for (arg, t), v in zip(zip(b.arguments, types), vals):
        check_argument(arg, t, v)
    return vals


# -- mixing with tracing ------------------------------------------------------------------------------
def active_tracer():
    """The tracer recording right now at the top level (not inside an op it records), or None."""
    for o in dispatch.STATE.observers:
        if isinstance(o, Tracer) and o._depth == 0:
            return o
    return None


def trace_call(tracer, graph: Graph, inputs: list, run):
    """Record a compiled call in a trace as its graph (control flow kept), then run it untraced."""
    env = {}
    for gv, x in zip(graph.inputs, inputs):
        if isinstance(x, Module):
            env[gv] = _tracer_module_value(tracer, x)
        else:
            env[gv] = tracer.arg_value(x)
    _copy_block_into(graph.block, tracer.graph.block, env, tracer.graph)
    tracer._depth += 1
    try:
        out = run()
    finally:
        tracer._depth -= 1
    v = env[graph.outputs[0]]
    if isinstance(out, Tensor):
        tracer.bind_tensor(out, v)
    elif isinstance(out, (tuple, list)) and all(isinstance(t, Tensor) for t in out):
        kind = K.TUPLE_UNPACK if isinstance(out, tuple) else K.LIST_UNPACK
        n = tracer._insert(kind, [v], 0)
        for t in out:
            tracer.bind_tensor(t, n.add_output(T.TensorType.of(t)))
    return out


def _tracer_module_value(tracer, m):
    root = tracer.module
    if root is not None:
        for name, sub in root.named_modules():
            if sub is m:
                return tracer._module_value(tuple(name.split(".")) if name else ())
    n = tracer._insert(K.MODULE_CONSTANT, [])
    n["value"] = ModuleRef(m)
    n.output().type = T.ModuleType(type(m))
    return n.output()
