"""What tracing returns: ``ScriptFunction`` and ``ScriptModule``, which run their graph, not the Python code.

Both run through the interpreter, so autograd records as in eager mode; a
``ScriptModule`` shares its parameters and buffers with the module it was traced
from (the same Tensor objects), so training it trains the original. A traced
module's ``.graph`` calls its submodules (``prim::CallMethod``), each of them a
ScriptModule with its own ``.graph`` and ``.code``; what runs is the flat
``.inlined_graph``, so calls cost nothing extra.
"""

from __future__ import annotations

from ..nn.modules.module import Module
from .code import graph_to_code
from .executor import GraphFor, ProfilingExecutor
from .interpreter import Interpreter
from .ir import Graph
from .passes.inline_calls import inline_calls


class ScriptFunction:
    """A traced function: call it like the original; ``.graph`` and ``.code`` show what it runs."""

    def __init__(self, graph: Graph, name: str):
        self.graph = graph
        self.name = name
        self.__name__ = name
        self._interpreter = Interpreter(graph)
        self._executor = ProfilingExecutor(graph, name)

    def __call__(self, *args):
        return self._executor.run(list(args))[0]

    @property
    def code(self) -> str:
        return graph_to_code(self.graph, self.name)

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    def graph_for(self, *args) -> GraphFor:
        """The optimized graph that runs for these inputs (fusion groups included), warming up as needed."""
        return self._executor.graph_for(list(args))

    def __repr__(self) -> str:
        return f"<toolkit.jit.ScriptFunction {self.name}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from ..notebook.reprs import mimebundle

        return mimebundle(self, include, exclude)


def _share_state(d: dict, original: Module) -> None:
    d["_original"] = original
    d["_parameters"] = original._parameters  # shared: the same Parameter objects
    d["_buffers"] = original._buffers
    d["_non_persistent_buffers_set"] = original._non_persistent_buffers_set
    d["training"] = original.training
    d["original_name"] = type(original).__name__


def _wrap_children(original: Module, calls, memo: dict) -> dict:
    """The submodules as traced submodules (one per module object, so shared modules stay shared)."""
    out = {}
    for k, c in original._modules.items():
        if c is None or isinstance(c, ScriptModule):  # None, or compiled already: kept as it is
            out[k] = c
            continue
        w = memo.get(id(c))
        if w is None:
            w = memo[id(c)] = TracedSubmodule(c, calls)
            w.__dict__["_modules"] = _wrap_children(c, calls, memo)
        out[k] = w
    return out


class ScriptModule(Module):
    """A traced module: ``forward`` runs the traced graph with the original module as ``self``.

    ``graph`` is the flat graph that runs; ``calls`` (a ``LazyCallGraphs``), when given, adds the
    graph with submodule calls and makes the submodules traced modules of their own.
    """

    def __init__(self, original: Module, graph: Graph, calls=None):
        super().__init__()
        d = self.__dict__
        _share_state(d, original)
        d["_modules"] = original._modules if calls is None else _wrap_children(original, calls, {})
        d["graph"] = graph
        d["_calls"] = calls
        d["_interpreter"] = Interpreter(graph)
        d["_executor"] = ProfilingExecutor(graph, "forward")

    def forward(self, *args):
        return self._executor.run([self._original, *args])[0]

    def graph_for(self, *args) -> GraphFor:
        """The optimized graph that runs ``forward`` for these inputs (fusion groups included)."""
        return self._executor.graph_for([self._original, *args])

    def train(self, mode: bool = True) -> ScriptModule:
        super().train(mode)
        self._original.training = mode
        return self

    @property
    def graph(self) -> Graph:
        """``forward`` as traced: submodule calls as ``prim::CallMethod`` nodes."""
        d = self.__dict__
        built = d["_calls"].get() if d.get("_calls") is not None else None
        return built.graph if built is not None else d["graph"]

    @property
    def code(self) -> str:
        return graph_to_code(self.graph, "forward")

    @property
    def inlined_graph(self) -> Graph:
        """``graph`` with every call inlined: the flat graph that runs."""
        return self.__dict__["graph"]

    def _get_name(self) -> str:
        return self.original_name

    def extra_repr(self) -> str:
        return "original_name=" + self.original_name


class MethodNotDefined(RuntimeError, AttributeError):
    """A traced submodule's method that was never traced (a RuntimeError, as in PyTorch; ``getattr`` defaults work)."""


class TracedSubmodule(ScriptModule):
    """A submodule of a traced module: its traced methods' graphs and code, sharing the submodule's state.

    As in PyTorch it cannot be called on its own (its caller's graph runs it); ``forward``
    is its first traced call, ``forward1``, ``forward2``, ... the calls after it.
    """

    def __init__(self, original: Module, calls):
        Module.__init__(self)
        d = self.__dict__
        _share_state(d, original)
        d["_calls"] = calls

    @property
    def _methods(self) -> dict:
        built = self.__dict__["_calls"].get()
        return built.methods_of(self._original) if built is not None else {}

    def forward(self, *args):
        raise RuntimeError("Trace submodules cannot be called.")

    def graph_for(self, *args) -> GraphFor:
        raise RuntimeError("Trace submodules cannot be called.")

    def _method(self, name: str) -> Graph:
        g = self._methods.get(name)
        if g is None:
            raise MethodNotDefined(f"Method '{name}' is not defined.")
        return g

    @property
    def graph(self) -> Graph:
        return self._method("forward")

    @property
    def inlined_graph(self) -> Graph:
        return inline_calls(self.graph.copy())

    def __getattr__(self, name: str):
        methods = self._methods if "_calls" in self.__dict__ else None
        if methods and name in methods:
            return TracedMethod(methods[name], name)
        if name in ("graph", "inlined_graph", "code"):  # the property found no traced forward
            self._method("forward")
        return super().__getattr__(name)


class TracedMethod:
    """One traced call of a submodule other than its first (``forward1``, ...): its graph and code."""

    def __init__(self, graph: Graph, name: str):
        self.graph = graph
        self.name = name

    @property
    def code(self) -> str:
        return graph_to_code(self.graph, self.name)

    @property
    def inlined_graph(self) -> Graph:
        return inline_calls(self.graph.copy())

    def __repr__(self) -> str:
        return f"<toolkit.jit.TracedMethod {self.name}>"
