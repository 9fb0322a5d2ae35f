"""The profiling executor: run a graph specialized to the inputs it sees, fused where it pays.

The first call with a new input signature (dtypes, shapes, devices,
requires_grad, grad mode) runs the plain graph and records the type of every
value it produced. The next call builds that signature's plan: a copy of the
graph whose types are the recorded ones, checked against the registry's meta
rules, cleaned by the standard passes and fused; later calls with the same
signature run the plan. Other signatures get plans of their own, up to
``MAX_SPECIALIZATIONS``; past that the plain graph runs. Inside a plan each
fused kernel guards its inputs, so a value whose shape changes in a way the
signature cannot see (a data-dependent shape) runs unfused, never wrong.

``graph_for(*inputs)`` runs the warm-up itself, so the fusion groups show on
the first look.

Each call performs the function's side effects (writes to buffers and inputs,
random draws, ``print``) exactly once, whichever path serves it: a call either
profiles or runs a plan; building a differentiable plan runs the graph once
more only where that leaves nothing behind (``autodiff.build``); fused groups
race their kernel against their ops only when the ops neither write nor draw
(fusion never groups such ops); and a compiled plan re-runs a failing line
for the interpreter's error only when its node neither writes nor draws. What
writes or draws is read from the registry (``kinds.effects``), never from names.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings

from ... import dispatch
from ..._core import dtypes as _dt
from ..._core import names as _names
from ...autograd.grad_mode import LOCAL as _GRAD_MODE
from ...nn.modules.module import Module
from ...tensor import Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph
from ..ir.propagate import infer_node
from ..ir.verify import verify
from ..passes import DEFAULT_PIPELINE, fuse, run_passes, unroll_loops
from ..passes.fuse import fusion_groups
from .group_runner import group_runner
from .interpreter import Interpreter

PROFILING_RUNS = 1
MAX_SPECIALIZATIONS = 8
UNROLL_BUDGET = 256  # nodes a specialization may add by unrolling constant-count loops


class _Settings:
    """Process-wide switches; the environment variable ``TOOLKIT_JIT_FUSION=0`` turns fusion off at start-up."""

    def __init__(self):
        self.fusion_enabled = os.environ.get("TOOLKIT_JIT_FUSION", "1").strip().lower() not in ("0", "false", "off")
        self.compile_plans = os.environ.get("TOOLKIT_JIT_COMPILE_PLANS", "1").strip().lower() not in (
            "0", "false", "off")
        self.generation = 0  # bumped by every switch change: plans made under other settings are rebuilt


SETTINGS = _Settings()
_STATE = dispatch.STATE


def set_fusion_enabled(enabled: bool) -> bool:
    """Turn fusion of elementwise chains on or off for every compiled function; returns the previous setting."""
    previous = SETTINGS.fusion_enabled
    SETTINGS.fusion_enabled = bool(enabled)
    if previous != SETTINGS.fusion_enabled:
        SETTINGS.generation += 1
    return previous


def fusion_enabled() -> bool:
    return SETTINGS.fusion_enabled


def _signature_of(x):
    if isinstance(x, Tensor):
        a, extra = x._data, x._extra
        return (a.dtype, a.shape, x._storage.device, x._requires_grad, extra.get("names") if extra else None)
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_signature_of(e) for e in x))
    if isinstance(x, dict):
        return (dict, tuple((k, _signature_of(e)) for k, e in x.items()))
    if isinstance(x, (bool, int, float, str)) or x is None:
        return (type(x), x)
    if isinstance(x, Module):
        return _module_signature(x)
    return (type(x),)


def input_signature(inputs) -> tuple:
    """What a plan is specialized to: each input's dtype, shape, device, requires_grad and names, and the grad
    mode.

    A module input contributes which of its parameters require grad, since
    that decides which gradients the plan's backward computes.
    """
    # STATE's flag is a summary over threads (True while other threads run); this thread's mode decides.
    grad = dispatch.STATE.grad_enabled and _GRAD_MODE.grad_enabled
    return (grad, SETTINGS.generation, _dt.get_default_dtype(), tuple(_signature_of(x) for x in inputs))


def _module_signature(m) -> tuple:
    """A module's parameters' and buffers' dtypes, grad flags and names: a plan reads them as typed values."""
    return (type(m), tuple((p._requires_grad, p._data.dtype, _names.names_of(p)) for p in m.parameters()),
            tuple((b._data.dtype, _names.names_of(b)) for b in m.buffers()))


def _observed_type(value):
    if isinstance(value, Tensor):
        return T.TensorType.of(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(e, Tensor) for e in value):
        return [T.TensorType.of(e) for e in value]
    return None


def _merge(a: T.TensorType, b: T.TensorType) -> T.TensorType:
    """What two observations of one value (loop iterations) have in common: differing facts become unknown."""
    def same(x, y):
        return x if x == y else None

    sizes = a.sizes if a.sizes == b.sizes else (
        tuple(same(x, y) for x, y in zip(a.sizes, b.sizes)) if a.sizes is not None and b.sizes is not None
        and len(a.sizes) == len(b.sizes) else None)
    return T.TensorType(same(a.dtype, b.dtype), sizes, same(a.strides, b.strides), same(a.device, b.device),
                        same(a.requires_grad, b.requires_grad), same(a.names, b.names))


def _has_names(x) -> bool:
    """Whether a call's input (nested containers and a module's parameters and buffers included) has names."""
    if isinstance(x, Tensor):
        return _names.names_of(x) is not None
    if isinstance(x, (list, tuple)):
        return any(_has_names(e) for e in x)
    if isinstance(x, dict):
        return any(_has_names(e) for e in x.values())
    if isinstance(x, Module):
        return any(_has_names(t) for t in (*x.parameters(), *x.buffers()))
    return False


def _output_names(x):
    """What a named profiling run's output ``x`` was named: its names for a tensor, the same tree for nested
    lists, tuples and dicts, None elsewhere."""
    if isinstance(x, Tensor):
        return _names.names_of(x)
    if isinstance(x, (list, tuple)):
        return [_output_names(e) for e in x]
    if isinstance(x, dict):
        return {k: _output_names(e) for k, e in x.items()}
    return None


def _name_outputs(x, names) -> None:
    """Put the names ``_output_names`` recorded back on a plan's output ``x``."""
    if isinstance(x, Tensor):
        _names.set_names(x, names)
    elif isinstance(x, (list, tuple)):
        for e, n in zip(x, names):
            _name_outputs(e, n)
    elif isinstance(x, dict):
        for k, e in x.items():
            _name_outputs(e, names.get(k))


class _Observations:
    """Every tensor value's type as a profiling run saw it, nested blocks included; a value bound
    several times (inside a loop) keeps what all its bindings share."""

    def __init__(self):
        self.types: dict = {}

    def __call__(self, values, objects) -> None:
        types = self.types
        for v, x in zip(values, objects):
            if isinstance(x, Tensor):
                t = T.TensorType.of(x)
                seen = types.get(v)
                types[v] = t if seen is None else (seen if seen == t else _merge(seen, t))

    def onto(self, original: Graph, copy: Graph) -> dict:
        """The observed types keyed by the values of ``copy`` (a ``Graph.copy()`` of ``original``)."""
        out = {}
        for v, w in zip(original.all_values(), copy.all_values()):
            t = self.types.get(v)
            if t is not None:
                out[w] = t
        return out


class ExecutionPlan:
    """One signature's optimized graph and the interpreter that runs it."""

    def __init__(self, graph: Graph, fused: bool, direct: bool = False, observed: dict | None = None,
                 grad_mode: bool = False):
        self.graph = graph
        self.fused = fused
        self.interpreter = Interpreter(graph)
        # ``direct``: nothing in this plan records gradients, so it may run as one Python function calling kernels
        self.compiled = None
        if direct and observed is not None and SETTINGS.compile_plans:
            from ..codegen.python_plan import (
                compile_plan,  # lazy: loads toolkit.backends.cuda, toolkit.backends.cuda.array only when used
            )

            self.compiled = compile_plan(graph, observed, grad_mode)
        self.runs = 0

    def run(self, inputs: list) -> list:
        self.runs += 1
        compiled = self.compiled
        if compiled is not None and not (_STATE.observers or _STATE.inference_mode):
            return compiled.run(inputs)
        return self.interpreter.run(inputs)  # a profiler or tracer sees every op; inference mode marks results

    def fusion_groups(self) -> list:
        return fusion_groups(self.graph)


class _Entry:
    __slots__ = ("profiles", "plan", "named", "output_names")

    def __init__(self, named: bool = False):
        self.profiles = 0
        self.plan: ExecutionPlan | None = None
        # A signature with named inputs: its plan runs with names off (fused kernels know nothing of them), and
        # its outputs then get the names the profiling run gave them (names depend on the signature alone).
        self.named = named
        self.output_names: list | None = None

    def run_named(self, inputs: list) -> list:
        with _names.names_off():
            outputs = self.plan.run(inputs)
        _name_outputs(outputs, self.output_names)
        return outputs


class ProfilingExecutor:
    """Runs ``graph`` through per-signature specialized plans (see the module docstring)."""

    def __init__(self, graph: Graph, name: str = "forward"):
        self.graph = graph
        self.name = name
        self.fallback = Interpreter(graph)
        self._entries: dict[tuple, _Entry] = {}
        self._observed: dict[tuple, list] = {}
        self._lock = threading.Lock()
        self._warned = False

    # -- running ----------------------------------------------------------------------------
    def run(self, inputs: list) -> list:
        if dispatch.STATE.observers and any(getattr(o, "records_graph", False) for o in dispatch.STATE.observers):
            return self.fallback.run(inputs)  # being traced: run op by op so the tracer sees (and inlines) them
        key = input_signature(inputs)
        entry = self._entries.get(key)
        if entry is not None and entry.plan is not None:
            return entry.plan.run(inputs) if not entry.named else entry.run_named(inputs)
        if entry is None:
            if len(self._entries) >= MAX_SPECIALIZATIONS:
                self._warn_too_many()
                return self.fallback.run(inputs)
            entry = self._entries.setdefault(key, _Entry(_names.NAME_STATE.in_use and _has_names(inputs)))
        if entry.profiles < PROFILING_RUNS:
            outputs = self._profile(key, inputs)  # named inputs: each op names its outputs (and checks names)
            entry.profiles += 1  # counted once it ran: a run that raised observed nothing to specialize on
            if entry.named and entry.output_names is None:
                entry.output_names = _output_names(outputs)
            return outputs
        with _names.names_off() if entry.named else contextlib.nullcontext():
            entry.plan = self._specialize(key, inputs)
        return entry.plan.run(inputs) if not entry.named else entry.run_named(inputs)

    def _profile(self, key: tuple, inputs: list) -> list:
        observed = _Observations()
        outputs = self.fallback.run(inputs, observe=observed)
        self._observed[key] = observed
        return outputs

    def _warn_too_many(self) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"{self.name}: called with more than {MAX_SPECIALIZATIONS} input signatures; further "
                          "signatures run the unspecialized graph", RuntimeWarning, stacklevel=4)

    # -- specialization ---------------------------------------------------------------------
    def _specialize(self, key: tuple, inputs: list) -> ExecutionPlan:
        with self._lock:
            observed = self._observed.pop(key)
            g = self.graph.copy()
            value_types = observed.onto(self.graph, g)
            for v, t in value_types.items():
                if isinstance(v.type, T.TensorType):
                    v.type = t
            unroll_loops(g, max_nodes=UNROLL_BUDGET)  # short constant loops become straight code that fuses
            _check_with_meta(g)
            run_passes(g, list(DEFAULT_PIPELINE))
            fused = SETTINGS.fusion_enabled
            plan = None
            records_grad = key[0] and _has_grad_leaves(g)  # the grad mode of the signature (this thread's)
            if records_grad:
                from . import autodiff  # lazy: loads toolkit.jit.runtime.autodiff only when used

                plan = autodiff.build(g, inputs)
            if plan is not None:
                run_passes(plan.backward_graph, list(DEFAULT_PIPELINE))
                for graph in (plan.graph, plan.backward_graph):
                    if fused:
                        fuse.fuse(graph)
                        run_passes(graph, ["dce"])
                    verify(graph)
                plan.fused = fused
                return plan
            if fused:
                fuse.fuse(g)
                run_passes(g, ["dce"])
            verify(g)
            return ExecutionPlan(g, fused, direct=not records_grad, observed=value_types, grad_mode=key[0])

    def plan_for(self, inputs: list) -> ExecutionPlan:
        """The plan these inputs run, made now (with its profiling run) if there is none yet."""
        key = input_signature(inputs)
        entry = self._entries.get(key)
        while entry is None or entry.plan is None:
            self.run(inputs)
            entry = self._entries.get(key)
            if entry is None:  # too many signatures: the plain graph serves
                return ExecutionPlan(self.graph, False)
        return entry.plan

    def graph_for(self, inputs: list) -> GraphFor:
        plan = self.plan_for(inputs)
        kernels = []
        for i, n in enumerate(plan.fusion_groups()):
            runner = group_runner(n)
            runner.kernel.name = f"{K.FUSION_GROUP}_{i}"
            kernels.append(runner.kernel)
        compiled = getattr(plan, "compiled", None)
        return GraphFor(plan.graph, kernels, compiled.source if compiled is not None else None)

    @property
    def plans(self) -> dict:
        return {k: e.plan for k, e in self._entries.items() if e.plan is not None}

    def reset(self) -> None:
        """Forget every specialization (the next calls profile again)."""
        self._entries.clear()
        self._observed.clear()


def _has_grad_leaves(g: Graph) -> bool:
    """Whether an input, or a value read from one (a parameter), was seen requiring grad."""
    def wants(v) -> bool:
        return isinstance(v.type, T.TensorType) and bool(v.type.requires_grad)

    if any(wants(v) for v in g.inputs):
        return True
    return any(wants(o) for n in g.nodes() if n.op is None for o in n.outputs)


def _check_with_meta(g: Graph) -> None:
    """Where the registry's meta rule infers a node's types, they must equal the observed ones (else meta wins).

    Nodes nobody observed (copies made by unrolling) get their types from the meta rules alone.
    """
    for n in g.all_nodes():
        if n.op is None:
            continue
        try:
            inferred = infer_node(n)
        except Exception:
            inferred = None
        if not inferred or len(inferred) != len(n.outputs):
            continue
        for o, t in zip(n.outputs, inferred):
            seen = o.type
            if isinstance(seen, T.TensorType) and seen.is_complete():
                if (seen.dtype, seen.sizes, seen.device) != (t.dtype, t.sizes, t.device):
                    names = seen.names if t.sizes is not None and len(t.sizes) == len(seen.sizes) else None
                    o.type = T.TensorType(t.dtype, t.sizes, None, t.device, seen.requires_grad, names)
            else:
                o.type = t


class GraphFor:
    """What ``graph_for`` returns: the optimized graph that runs for the given inputs, and its kernels.

    Prints as the graph (fusion groups included, in the seed's form); ``kernels``
    holds each fusion group's ``FusedKernel`` (``.source()``, ``.source_path()``),
    ``python_source`` the Python function a plan without gradients runs as (or
    None), and every other attribute is the graph's.
    """

    def __init__(self, graph: Graph, kernels: list, python_source: str | None = None):
        self.graph = graph
        self.kernels = kernels
        self.python_source = python_source

    def __getattr__(self, name):
        return getattr(self.graph, name)

    def __str__(self) -> str:
        return str(self.graph)

    def __repr__(self) -> str:
        return str(self.graph)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from ...notebook.reprs import mimebundle  # optional: notebook views, loaded on demand

        return mimebundle(self, include, exclude)
