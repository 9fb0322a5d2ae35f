"""What tracing returns: ``ScriptFunction`` and ``ScriptModule``, which run their graph, not the Python code.

Both run through the interpreter, so autograd records as in eager mode; a
``ScriptModule`` shares its parameters, buffers and submodules with the module
it was traced from (the same Tensor objects), so training it trains the original.
"""

from __future__ import annotations

from ..nn.modules.module import Module
from .code import graph_to_code
from .executor import GraphFor, ProfilingExecutor
from .interpreter import Interpreter
from .ir import Graph


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


class ScriptModule(Module):
    """A traced module: ``forward`` runs the traced graph with the original module as ``self``."""

    def __init__(self, original: Module, graph: Graph):
        super().__init__()
        d = self.__dict__
        d["_original"] = original
        d["_parameters"] = original._parameters  # shared: the same Parameter objects
        d["_buffers"] = original._buffers
        d["_non_persistent_buffers_set"] = original._non_persistent_buffers_set
        d["_modules"] = original._modules
        d["training"] = original.training
        d["graph"] = graph
        d["_interpreter"] = Interpreter(graph)
        d["_executor"] = ProfilingExecutor(graph, "forward")
        d["original_name"] = type(original).__name__

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
    def code(self) -> str:
        return graph_to_code(self.graph, "forward")

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    def _get_name(self) -> str:
        return self.original_name

    def extra_repr(self) -> str:
        return "original_name=" + self.original_name
