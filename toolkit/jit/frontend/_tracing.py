"""``toolkit.jit.trace`` and ``trace_module``, and the check that a trace reproduces the function."""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ...nn.modules.module import Module
from ...tensor import Tensor
from ..ir.graph import Graph, Node
from ..ir.printer import node_to_string
from ..ir.verify import verify
from ..runtime.interpreter import Interpreter
from ..script_module import ScriptFunction, ScriptModule
from ._callers import param_names
from .call_graphs import LazyCallGraphs
from .trace import TracerWarning, TracingCheckError, _as_args, record


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs: bool = True):
    """Run ``func`` once on ``example_inputs`` and return what it did as a graph that runs without it.

    Example::

        >>> def foo(x, y):
        ...     return 2 * x + y
        >>> traced = toolkit.jit.trace(foo, (toolkit.rand(3), toolkit.rand(3)))
        >>> print(traced.graph)
    """
    if inspect.ismethod(func) and isinstance(func.__self__, Module) and func.__name__ == "forward":
        func = func.__self__
    if isinstance(func, Module):
        return trace_module(func, {"forward": example_inputs}, check_trace=check_trace,
                            check_inputs=None if check_inputs is None else [{"forward": c} for c in check_inputs],
                            check_tolerance=check_tolerance, strict=strict)
    if example_inputs is None:
        raise ValueError("trace: example_inputs is required")
    args = _as_args(example_inputs)
    graph, tracer, _ = record(func, args, strict=strict)
    verify(graph)
    name = getattr(func, "__name__", "forward")
    fn = ScriptFunction(graph, name)
    if check_trace:
        for inputs in check_inputs or [args]:
            _check(lambda *a: record(func, a, strict=strict, snapshot=True), fn._interpreter, graph, _as_args(inputs), [],
                   check_tolerance)
    return fn


def trace_module(mod: Module, inputs: dict, optimize=None, check_trace: bool = True, check_inputs=None,
                 check_tolerance: float = 1e-5, strict: bool = True, **_ignored) -> ScriptModule:
    """Trace each method named in ``inputs`` into one ``ScriptModule`` sharing ``mod``'s parameters.

    ``inputs`` maps a method name to its example inputs (``{"forward": x, "encode": (x, y)}``); every
    method but ``forward`` becomes a callable attribute of the result with its own ``.graph`` and ``.code``.
    A ``.graph`` calls the submodules (``prim::CallMethod``); ``.inlined_graph`` is the flat graph that runs.
    """
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name in inputs:
        if not isinstance(name, str) or not callable(getattr(mod, name)):  # getattr raises PyTorch's AttributeError
            raise AttributeError(f"trace_module: {name!r} is not a method of {type(mod).__name__}")
    traced = {}
    for name, example in inputs.items():
        run = _method_tracer(mod, name, strict)
        args = _as_args(example)
        graph, tracer, _ = run(*args, snapshot=False)
        verify(graph)
        traced[name] = (run, args, graph, LazyCallGraphs(tracer, graph))
    forward = traced.get("forward")
    sm = ScriptModule(mod, None if forward is None else forward[2], None if forward is None else forward[3])
    for name, (_, _, graph, calls) in traced.items():
        if name != "forward":
            sm._add_method(name, graph, calls)
    if check_trace:
        for c in check_inputs or [{k: v[1] for k, v in traced.items()}]:
            for name, example in c.items():
                run, _, graph, _ = traced[name]
                interpreter = sm._interpreter if name == "forward" else getattr(sm, name)._interpreter
                _check(run, interpreter, graph, _as_args(example), [mod], check_tolerance)
    return sm


def _method_tracer(mod: Module, name: str, strict: bool):
    """``run(*args, snapshot=...)``: trace ``mod.<name>`` (``forward`` through the module call, with its hooks)."""
    method = getattr(mod, name)
    target = mod if name == "forward" else method

    def run(*a, snapshot=True):
        return record(mod, a, module=mod, method=target, strict=strict, names=param_names(method, len(a)),
                      snapshot=snapshot)

    return run


def _same_node(a: Node, b: Node) -> bool:
    if a.kind != b.kind or len(a.inputs) != len(b.inputs) or len(a.outputs) != len(b.outputs):
        return False
    for k in set(a.attributes) | set(b.attributes):
        x, y = a.attributes.get(k), b.attributes.get(k)
        if isinstance(x, Tensor) or isinstance(y, Tensor):
            if not (isinstance(x, Tensor) and isinstance(y, Tensor) and x.shape == y.shape
                    and np.array_equal(x._data, y._data)):
                return False
        elif x != y or type(x) is not type(y):
            return False
    return True


def _describe(n: Node) -> str:
    return f"{node_to_string(n, source_locations=False).strip()} at {n.source_location}"


def _close(a, b, tol: float) -> bool:
    """A run's value ``a`` against the check trace's snapshot ``b`` (numpy arrays)."""
    if isinstance(a, Tensor) and getattr(b, "_is_device_array", False):  # cuda: compare on the host
        return _close(a.cpu(), b.get(), tol)
    if isinstance(a, Tensor) and isinstance(b, np.ndarray):
        x, y = a._data, b
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc":
            return bool(np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True))
        return bool(np.array_equal(x, y))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    return a is b or a == b


def _check(retrace, interpreter: Interpreter, graph: Graph, args: tuple, prefix: list, tol: float) -> None:
    """Trace again and run the graph on ``args``: name the first node whose structure or values diverge."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        graph2, tracer2, _ = retrace(*args)
    nodes1 = [n for n in graph.nodes() if n.op is not None]
    nodes2 = [n for n in graph2.nodes() if n.op is not None]
    for a, b in zip(nodes1, nodes2):
        if not _same_node(a, b):
            raise TracingCheckError(
                "Graphs differed across invocations! The first diverging node is\n"
                f"  {_describe(a)}\nwhich the check run recorded as\n  {_describe(b)}\n"
                "The trace depends on Python control flow or values read from tensors.")
    if len(nodes1) != len(nodes2):
        extra = nodes1[len(nodes2)] if len(nodes1) > len(nodes2) else nodes2[len(nodes1)]
        raise TracingCheckError(
            f"Graphs differed across invocations! The traced graph has {len(nodes1)} ops and the check run "
            f"{len(nodes2)}; the first unmatched node is\n  {_describe(extra)}")
    expected = {id(n): r for n, r in zip(nodes1, (r for _, r in tracer2.records))}
    first = []

    def on_node(n, values):
        if not first and id(n) in expected and not _close(values, expected[id(n)], tol):
            first.append(n)

    interpreter.run(list(prefix) + list(args), on_node)
    if first:
        warnings.warn(
            "Output of the traced function does not match the Python function; the first diverging node is\n"
            f"  {_describe(first[0])}\n(nondeterministic ops, such as random ones, diverge on every run)",
            TracerWarning, stacklevel=3)
