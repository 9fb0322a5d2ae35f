"""What tracing returns: ``ScriptFunction`` and ``ScriptModule``, which run their graph, not the Python code.

Both run through the interpreter, so autograd records as in eager mode; a
``ScriptModule`` shares its parameters and buffers with the module it was traced
from (the same Tensor objects), so training it trains the original. A traced
module's ``.graph`` calls its submodules (``prim::CallMethod``), each of them a
ScriptModule with its own ``.graph`` and ``.code``; what runs is the flat
``.inlined_graph``, so calls cost nothing extra.
"""

from __future__ import annotations

import inspect
import io

from ..nn.modules.module import Module
from .ir.graph import Graph
from .passes.inline_calls import inline_calls
from .runtime.executor import GraphFor, ProfilingExecutor
from .runtime.interpreter import Interpreter
from .serialization.code import default_literal, graph_to_code


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
        return graph_to_code(self.graph, self.name, printable_defaults(self))

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    def graph_for(self, *args) -> GraphFor:
        """The optimized graph that runs for these inputs (fusion groups included), warming up as needed."""
        return self._executor.graph_for(list(args))

    def save(self, f, _extra_files: dict | None = None) -> None:
        """Save to a path or binary file object: ``toolkit.jit.save(self, f, _extra_files)``."""
        _save(self, f, _extra_files)

    def save_to_buffer(self, _extra_files: dict | None = None) -> bytes:
        """The archive ``save`` writes, as bytes (``toolkit.jit.load(io.BytesIO(data))`` reads it)."""
        return _save_to_buffer(self, _extra_files)

    def __repr__(self) -> str:
        return f"<toolkit.jit.ScriptFunction {self.name}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from ..notebook.reprs import mimebundle  # lazy: loads html, html.entities only when used

        return mimebundle(self, include, exclude)


def argument_defaults(obj) -> tuple:
    """The default values of the last parameters of a scripted or loaded ``forward`` (or function), as its
    signature gives them; none for a traced one (called with the example's arguments, all given)."""
    sig = obj.__dict__.get("_signature")
    if isinstance(obj, ScriptModule) and sig is None:
        compiled = {**obj.__dict__.get("_compiled_methods", {}), **obj.__dict__.get("_methods", {})}
        sig = getattr(compiled.get("forward"), "_signature", None)
    if not isinstance(sig, inspect.Signature):
        return tuple(getattr(sig, "defaults", ()))  # a loaded one's, or none
    params = list(sig.parameters.values())
    graph = obj.graph
    if graph is None or len(params) != len(graph.inputs) - (1 if isinstance(obj, ScriptModule) else 0):
        return ()
    return tuple(p.default for p in params if p.default is not inspect.Parameter.empty)


def extra_methods(obj) -> dict:
    """The compiled methods of a module beside ``forward``, as an archive keeps them: traced by ``trace_module``,
    or scripted (``@export``, ``@script_method``). Each has ``.graph`` (flat for scripted ones) or
    ``.inlined_graph``, and its signature."""
    if not isinstance(obj, ScriptModule):
        return {}
    d = obj.__dict__
    found = {**d.get("_compiled_methods", {}), **d.get("_methods", {}), **d.get("_traced_methods", {})}
    return {k: m for k, m in found.items() if k != "forward"}


def method_graph(method) -> Graph:
    """The flat graph a compiled method runs (its calls inlined)."""
    return method.inlined_graph if isinstance(method, TracedModuleMethod) else method.graph


def method_defaults(method) -> tuple:
    """The default values of a compiled method's last parameters (none for a traced one)."""
    sig = getattr(method, "_signature", None)
    if not isinstance(sig, inspect.Signature):
        return tuple(getattr(sig, "defaults", ()))
    params = list(sig.parameters.values())
    if len(params) != len(method_graph(method).inputs) - 1:
        return ()
    return tuple(p.default for p in params if p.default is not inspect.Parameter.empty)


def printable_defaults(obj) -> tuple:
    """``argument_defaults``, or none when one of them has no literal to print (``.code`` still shows the rest)."""
    defaults = argument_defaults(obj)
    try:
        for d in defaults:
            default_literal(d)
    except ValueError:
        return ()
    return defaults


def _save(obj, f, extra_files: dict | None) -> None:
    from .serialization.archive import save  # serialization builds on this module

    save(obj, f, extra_files)


def _save_to_buffer(obj, extra_files: dict | None) -> bytes:
    buf = io.BytesIO()
    _save(obj, buf, extra_files)
    return buf.getvalue()


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
        d["_interpreter"] = None if graph is None else Interpreter(graph)
        d["_executor"] = None if graph is None else ProfilingExecutor(graph, "forward")
        d["_traced_methods"] = {}

    def _add_method(self, name: str, graph: Graph, calls=None) -> None:
        """Another traced method (``trace_module`` with several entries), callable as ``self.<name>(...)``."""
        method = TracedModuleMethod(self._original, name, graph, calls)
        self.__dict__["_traced_methods"][name] = method
        self.__dict__[name] = method

    def _forward_executor(self) -> ProfilingExecutor:
        executor = self.__dict__["_executor"]
        if executor is None:  # traced without a forward entry: PyTorch's module has no forward either
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'forward' (it was not traced: "
                                 f"traced methods are {sorted(self.__dict__['_traced_methods'])})")
        return executor

    def forward(self, *args):
        return self._forward_executor().run([self._original, *args])[0]

    def graph_for(self, *args) -> GraphFor:
        """The optimized graph that runs ``forward`` for these inputs (fusion groups included)."""
        return self._forward_executor().graph_for([self._original, *args])

    def save(self, f, _extra_files: dict | None = None) -> None:
        """Save to a path or binary file object: ``toolkit.jit.save(self, f, _extra_files)``."""
        _save(self, f, _extra_files)

    def save_to_buffer(self, _extra_files: dict | None = None) -> bytes:
        """The archive ``save`` writes, as bytes (``toolkit.jit.load(io.BytesIO(data))`` reads it)."""
        return _save_to_buffer(self, _extra_files)

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
        return graph_to_code(self.graph, "forward", printable_defaults(self))

    @property
    def inlined_graph(self) -> Graph:
        """``graph`` with every call inlined: the flat graph that runs."""
        return self.__dict__["graph"]

    def _get_name(self) -> str:
        return self.original_name

    def extra_repr(self) -> str:
        return "original_name=" + self.original_name


class TracedModuleMethod:
    """A traced method of a module other than ``forward``: call it like the original; ``.graph`` and ``.code`` show it."""

    def __init__(self, original: Module, name: str, graph: Graph, calls=None):
        self._original = original
        self.name = name
        self._flat = graph
        self._calls = calls
        self._interpreter = Interpreter(graph)
        self._executor = ProfilingExecutor(graph, name)

    def __call__(self, *args):
        return self._executor.run([self._original, *args])[0]

    def graph_for(self, *args) -> GraphFor:
        """The optimized graph that runs this method for these inputs (fusion groups included)."""
        return self._executor.graph_for([self._original, *args])

    @property
    def graph(self) -> Graph:
        """The method as traced: submodule calls as ``prim::CallMethod`` nodes."""
        built = self._calls.get() if self._calls is not None else None
        return built.graph if built is not None else self._flat

    @property
    def inlined_graph(self) -> Graph:
        return self._flat

    @property
    def code(self) -> str:
        return graph_to_code(self.graph, self.name, method_defaults(self))

    def __repr__(self) -> str:
        return f"<toolkit.jit.ScriptMethod {self.name}>"


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
