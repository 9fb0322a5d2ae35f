"""Tracing: run a function once and record every op it calls at the dispatcher into a Graph.

The tracer is a dispatch observer (``dispatch.STATE.observers``): it sees each
op with its bound arguments, so it records exactly what eager mode ran. Tensors
become graph values by identity; Python numbers and lists become
``prim::Constant`` and ``prim::ListConstruct``; a traced module's parameters and
buffers are read with ``prim::GetAttr`` on ``self``. Python control flow is not
recorded: loops are unrolled, and branches keep the path the example took.

As TorchScript's tracer does, a value used again by a recorded op is named after
the variable holding it in the calling code (``%gates``; a reassigned variable's
earlier values become ``%x.1``, ``%x.3``), so traced graphs read like the source.
"""

from __future__ import annotations

import os
import sys
import warnings

from ... import dispatch
from ..._core.from_data import CREATION_HOOKS
from ...futures import Future
from ...nn.modules.module import Module
from ...ops import registry as R
from ...tensor import CONVERSION_HOOKS, Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ..passes.dce import remove_dead_traced_nodes
from . import _sizes
from ._callers import (
    TOOLKIT_DIR,
    attribute_value_name,
    caller_variables,
    is_library_frame,
    param_names,
    user_frame,
    variable_name,
)
from ._frames import CallFrames, Frame, prune_frames, settle_call_results  # noqa: F401  (Frame: the frames' type)
from ._sizes import SizeInt, SizeReads

_TENSOR_FILE = os.path.join(TOOLKIT_DIR, "tensor.py")
_BINDING_FILE = os.path.join(TOOLKIT_DIR, "dispatch", "binding.py")  # where arguments are bound


class TracerWarning(Warning):
    """The trace may not generalize to other inputs (a Python value was read from a tensor, randomness, ...)."""


class TracingCheckError(Exception):
    """``check_trace`` found that the trace does not reproduce the function."""


def _warn(message: str, loc=None) -> None:
    loc = loc or user_frame()
    if loc is None:
        warnings.warn(message, TracerWarning, stacklevel=2)
    else:
        warnings.warn_explicit(message, TracerWarning, loc[0], loc[1])


_NUMBER_MSG = ("Converting a tensor to a Python {what} might cause the trace to be incorrect. We can't record the "
               "data flow of Python values, so this value will be treated as a constant in the future. This means "
               "that the trace might not generalize to other inputs!")

_CREATION_MSG = ("torch.{name} results are registered as constants in the trace. You can safely ignore this warning "
                 "if you use this function to create tensors out of constant variables that would be the same every "
                 "time you call this function. In any other case, this might cause the trace to be incorrect.")


class Tracer(CallFrames, SizeReads):
    """The dispatch observer that builds the graph; one per trace.

    With ``name_values`` (as ``record`` traces) values take their variables' names; other tracers, such as
    the one recording a backward pass, whose calling code is not the user's, keep them numbered. With
    ``record_sizes`` (as ``record`` traces) sizes read in Python are graph values (``_sizes``).
    """

    records_graph = True  # compiled functions called while tracing run op by op, so the trace inlines them

    def __init__(self, module=None, snapshot: bool = False, name_values: bool = False, record_sizes: bool = False):
        self.graph = Graph()
        self.record_sizes = record_sizes
        # with ``name_values``: the values already given their variable's name, or found to have none
        self._looked_up: set[Value] | None = set() if name_values else None
        self.snapshot = snapshot  # keep a copy of every op's results (for check_trace)
        self.module = module
        self._values: dict[int, tuple[Tensor, Value]] = {}
        self._depth = 0
        self.scopes: list[str] = []
        self.records: list[tuple[Node, list]] = []  # with ``snapshot``: each op node and copies of its results
        self.frames: list = []  # the module calls running now (None for a call not recorded as one)
        self.root_frame: Frame | None = None
        self._recorded: set = set()
        self._param_maps: dict[int, tuple] = {}
        self._module_paths: dict[int, tuple] = {}
        self._pending: list = []  # conversions made while the dispatcher binds arguments
        self._futures: dict[int, tuple] = {}  # id(Future) -> (the future, its prim::fork value), for ``wait``

    # -- values ----------------------------------------------------------------------------
    def bind_tensor(self, t: Tensor, v: Value) -> None:
        self._values[id(t)] = (t, v)  # the tensor is kept alive so its id is not reused

    def lookup(self, t: Tensor) -> Value | None:
        e = self._values.get(id(t))
        if e is None or e[0] is not t:
            f = self._frame()
            e = f.locals.get(id(t)) if f is not None else None
        return e[1] if e is not None and e[0] is t else None

    def tensor_value(self, t: Tensor) -> Value:
        v = self.lookup(t)
        if v is not None:
            return v
        frame = self._frame()
        owner = frame
        while owner is not None:
            p = self._param_map(owner.module).get(id(t))
            if p is not None and p[2] is t:
                break
            owner = owner.parent
        if owner is not None:
            path, name, _ = p
            n = self._insert(K.GET_ATTR, [self._module_in(owner, path)])
            n["name"] = name
            v = n.output()
            v.type = T.TensorType.of(t)
            v.set_debug_name(attribute_value_name(name))
            frame.locals[id(t)] = (t, v)
            return v
        if t.requires_grad:
            raise RuntimeError(
                "Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter or "
                f"input, or detaching the gradient\nTensor:\n{t}")
        v = self.graph.insert_constant(t)
        self._stamp(v.node)
        self.bind_tensor(t, v)
        return v

    def arg_value(self, a, arg_type: str = "", variables: list | None = None) -> Value:
        """The graph value of one bound argument: tensors by identity, Python values as constants.

        A tensor met before whose value has no name yet takes the caller's variable name; ``variables``
        (empty, or holding the caller's variables) lets the arguments of one call share one frame search.
        """
        if isinstance(a, Tensor):
            v = self.lookup(a)
            if v is None:
                return self.tensor_value(a)
            if self._looked_up is not None and not v.has_debug_name() and v not in self._looked_up:
                self._name_value(a, v, [] if variables is None else variables)
            return v
        if isinstance(a, (list, tuple)) and (arg_type.startswith("Tensor") or any(isinstance(e, Tensor) for e in a)):
            elems = [self.arg_value(e, variables=variables) for e in a]
            n = self._insert(K.LIST_CONSTRUCT, elems)
            has_none = any(e is None for e in a)
            n.output().type = T.ListType(T.OptionalType(T.TENSOR) if has_none else T.TENSOR)
            return n.output()
        if isinstance(a, (list, tuple)):
            elems = [self.arg_value(e) for e in a]
            n = self._insert(K.LIST_CONSTRUCT, elems)
            n.output().type = T.ListType(elems[0].type if elems else T.INT)
            return n.output()
        if type(a) is SizeInt:
            return self.int_value(a, variables)
        v = self.graph.insert_constant(a)
        self._stamp(v.node)
        return v

    def _name_value(self, t: Tensor, v: Value, variables: list) -> None:
        """Name ``v`` after the caller's variable holding ``t``, as PyTorch's tracer does when a value it
        has met is used again: looked for once per value, whatever the outcome."""
        self._looked_up.add(v)
        if not variables:
            variables.append(caller_variables())
        name = variable_name(t, variables[0])
        if name:
            v.take_debug_name(name)

    # -- nodes -----------------------------------------------------------------------------
    def _mark(self, n: Node) -> Node:
        n.source = user_frame()
        n.scope = self.scopes[-1] if self.scopes else ""
        return n

    def _stamp(self, n: Node) -> Node:
        """Source line and scope, and the node joins the running frame."""
        self._mark(n)
        f = self._frame()
        if f is not None and n not in self._recorded:
            self._sync(n)
            f.items.append(n)
            self._recorded.add(n)
        return n

    def _insert(self, kind: str, inputs, n_outputs: int = 1) -> Node:
        return self._stamp(self.graph.insert(kind, inputs, n_outputs))

    def on_call(self, op: R.OpDef, bound: list, run):
        """The dispatcher's hook: record ``op`` unless it runs inside another recorded op."""
        if self._pending:
            self._flush_pending(bound)
        if self._depth or not op.returns_tensor:
            if self._size_ints:
                self.plain_ints(bound)
            return run()
        variables: list = []  # the caller's variables, found at the first argument that needs a name
        inputs = [self.arg_value(a, arg.type, variables) for a, arg in zip(bound, op.args)]
        if self._size_ints:
            self.plain_ints(bound)
        self._depth += 1
        try:
            out = run()
        finally:
            self._depth -= 1
        n = self._stamp(self.graph.create(op.qualified_name, inputs, 0, op))
        self.graph.insert_node(n)
        if _is_random(op, bound) and (self.module is None or self.module.training):
            _warn(f"Trace had a random op ({op.qualified_name}) in training mode: each run of the traced graph "
                  "draws new values, so its results will differ from the traced run and from each other.")
        if op.returns_list:
            lst = n.add_output(T.ListType(T.TENSOR))
            un = self._insert(K.LIST_UNPACK, [lst], 0)
            for t in out:
                self.bind_tensor(t, un.add_output(T.TensorType.of(t)))
            results = [out]
        elif op.n_outputs == 1:
            self.bind_tensor(out, n.add_output(T.TensorType.of(out)))
            results = [out]
        else:
            for t in out:
                self.bind_tensor(t, n.add_output(T.TensorType.of(t)))
            results = list(out)
        if self.snapshot:
            self.records.append((n, [_copy_data(r) for r in results]))
        return out

    def on_conversion(self, t: Tensor, what: str) -> None:
        if self._depth or self.lookup(t) is None:
            return
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename == _TENSOR_FILE:
            f = f.f_back
        if f is not None and f.f_code.co_filename == _BINDING_FILE:
            # Binding tries overloads in turn: the conversion counts only if the chosen one took a number.
            self._pending.append((t, what, user_frame()))
            return
        _warn(_NUMBER_MSG.format(what="boolean" if what == "bool" else "number"))

    def _flush_pending(self, bound: list) -> None:
        kept = set()
        for a in bound:
            if isinstance(a, Tensor):
                kept.add(id(a))
            elif isinstance(a, (list, tuple)):
                kept.update(id(e) for e in a if isinstance(e, Tensor))
        for t, what, loc in self._pending:
            if id(t) not in kept:
                _warn(_NUMBER_MSG.format(what="boolean" if what == "bool" else "number"), loc)
        self._pending.clear()

    # -- fork and wait -----------------------------------------------------------------------
    records_forks = True

    def record_fork(self, func, args: tuple):
        """``toolkit.jit.fork(func, *args)`` while tracing: ``func`` traced into the ``Subgraph`` of a ``prim::fork``
        node, as PyTorch's tracer records it; returns the completed future (its graph value kept for ``wait``), or
        None when the call cannot be recorded that way (non-tensor arguments, a module outside the traced one),
        and then the caller runs it inline as before."""
        if not all(isinstance(a, Tensor) for a in args):
            return None
        module_value = None
        if isinstance(func, Module):
            module_value = self._submodule_value(func)
            if module_value is None:
                return None
        inputs = [self.tensor_value(a) for a in args]
        self._depth += 1
        try:
            sub, _, result = record(func, args, module=func if module_value is not None else None,
                                    method=func if module_value is not None else None)
        finally:
            self._depth -= 1
        n = self._insert(K.FORK, ([module_value] if module_value is not None else []) + inputs)
        n["Subgraph"] = sub
        n.output().type = T.FutureType(sub.outputs[0].type)
        fut = Future()
        fut.set_result(result)
        self._futures[id(fut)] = (fut, n.output())
        return fut

    def record_wait(self, fut):
        """``toolkit.jit.wait(fut)`` while tracing: an ``aten::wait`` of a future this trace forked, its result bound
        to the value (tensors, or a tuple of them unpacked); any other future is waited for untraced."""
        value = fut.wait()
        entry = self._futures.get(id(fut))
        if entry is None or entry[0] is not fut:
            return value
        n = self._insert("aten::wait", [entry[1]])
        out = n.output()
        out.type = entry[1].type.elem
        if isinstance(value, Tensor):
            self.bind_tensor(value, out)
        elif isinstance(value, (tuple, list)) and all(isinstance(t, Tensor) for t in value):
            un = self._insert(K.TUPLE_UNPACK if isinstance(value, tuple) else K.LIST_UNPACK, [out], 0)
            for t in value:
                self.bind_tensor(t, un.add_output(T.TensorType.of(t)))
        return value

    def _submodule_value(self, m):
        """The graph value of module ``m`` read from the running module call (or the traced root), or None."""
        f = self._frame()
        while f is not None:
            for name, sub in f.module.named_modules():
                if sub is m:
                    return self._module_in(f, tuple(name.split(".")) if name else ())
            f = f.parent
        return None

    # -- inputs and outputs ----------------------------------------------------------------
    def add_input(self, obj, name: str | None) -> Value:
        if isinstance(obj, Tensor):
            v = self.graph.add_input(name, T.TensorType.of(obj))
            self.bind_tensor(obj, v)
            return v
        if isinstance(obj, (tuple, list)) and all(isinstance(e, Tensor) for e in obj):
            elem_types = [T.TensorType.of(e) for e in obj]
            typ = T.TupleType(elem_types) if isinstance(obj, tuple) else T.ListType(T.TENSOR)
            v = self.graph.add_input(name, typ)
            un = self._insert(K.TUPLE_UNPACK if isinstance(obj, tuple) else K.LIST_UNPACK, [v], 0)
            for e, et in zip(obj, elem_types):
                self.bind_tensor(e, un.add_output(et))
            return v
        if isinstance(obj, dict) and obj and all(isinstance(k, str) and isinstance(e, Tensor) for k, e in obj.items()):
            v = self.graph.add_input(name, T.DictType(T.STR, T.TENSOR))
            for k, e in obj.items():  # one lookup per key, as TorchScript's tracer records dict inputs
                n = self._insert("aten::__getitem__", [v, self.arg_value(k)])
                self.bind_tensor(e, n.output())
                n.output().type = T.TensorType.of(e)
            return v
        raise TypeError("trace: example inputs must be tensors, tuples/lists of tensors or dicts of str to tensors, "
                        f"not {type(obj).__name__}")

    def output_value(self, obj, strict: bool) -> Value:
        if isinstance(obj, Tensor):
            return self.tensor_value(obj)
        if isinstance(obj, tuple):
            elems = [self.output_value(e, strict) for e in obj]
            n = self._insert(K.TUPLE_CONSTRUCT, elems)
            n.output().type = T.TupleType([e.type for e in elems])
            return n.output()
        if isinstance(obj, list):
            if strict:
                raise RuntimeError(
                    "Encountering a list at the output of the tracer might cause the trace to be incorrect, this "
                    "is only valid if the container structure does not change based on the module's inputs. "
                    "Consider using a constant container instead (e.g. for `list`, use a `tuple` instead. for "
                    "`dict`, use a `NamedTuple` instead). If you absolutely need this and know the side effects, "
                    "pass strict=False to trace() to allow this behavior.")
            elems = [self.output_value(e, strict) for e in obj]
            n = self._insert(K.LIST_CONSTRUCT, elems)
            n.output().type = T.ListType(T.TENSOR)
            return n.output()
        if isinstance(obj, dict):
            if strict:
                raise RuntimeError(
                    "Encountering a dict at the output of the tracer might cause the trace to be incorrect, this "
                    "is only valid if the container structure does not change based on the module's inputs. "
                    "Consider using a constant container instead (e.g. for `list`, use a `tuple` instead. for "
                    "`dict`, use a `NamedTuple` instead). If you absolutely need this and know the side effects, "
                    "pass strict=False to trace() to allow this behavior.")
            items = []
            for k, e in obj.items():
                if not isinstance(k, str):
                    raise RuntimeError(f"trace: dict outputs need str keys, got {type(k).__name__}")
                items += [self.arg_value(k), self.output_value(e, strict)]
            n = self._insert(K.DICT_CONSTRUCT, items)
            n.output().type = T.DictType(T.STR, T.TENSOR)
            return n.output()
        raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from "
                           f"traced functions, got {type(obj).__name__}")

    def on_creation(self, name: str) -> None:
        """``tensor``/``as_tensor``/``from_numpy`` called from user code: the result becomes a graph constant."""
        caller = sys._getframe(2)
        if self._depth or is_library_frame(caller):
            return
        _warn(_CREATION_MSG.format(name=name))

    def drop_dead_nodes(self) -> None:
        """PyTorch's end of tracing: nodes nothing needs go (``passes.dce.remove_dead_traced_nodes``), and
        the frames and ``check_trace`` records forget them."""
        keep = settle_call_results(self.root_frame, set(self.graph.outputs)) if self.root_frame else set()
        dead = remove_dead_traced_nodes(self.graph, keep)
        if not dead:
            return
        self.records = [(n, r) for n, r in self.records if n not in dead]
        if self.root_frame is not None:
            prune_frames(self.root_frame, dead)

    # -- activation ------------------------------------------------------------------------
    def __enter__(self) -> Tracer:
        dispatch.STATE.observers.append(self)
        CONVERSION_HOOKS.append(self.on_conversion)
        CREATION_HOOKS.append(self.on_creation)
        if self.record_sizes:
            _sizes.start(self)
        return self

    def __exit__(self, *exc) -> None:
        self._sync()
        dispatch.STATE.observers.remove(self)
        CONVERSION_HOOKS.remove(self.on_conversion)
        CREATION_HOOKS.remove(self.on_creation)
        if self.record_sizes:
            _sizes.stop(self)


def _is_random(op: R.OpDef, bound: list) -> bool:
    """Random calls: RANDOM ops and their in-place forms (``dropout_``), and samplers taking a generator
    (``bernoulli_``); not a call with ``train=False`` (eval-mode dropout is the identity)."""
    if "train" in op.arg_names and not bound[op.arg_names.index("train")]:
        return False
    if op.kind is R.INPLACE and op.name.endswith("_"):
        base = R.overloads(op.name[:-1])
        if base and base[0].kind is R.RANDOM:
            return True
    return op.kind is R.RANDOM or any(a.type.startswith("Generator") for a in op.args)


def _copy_data(r):
    if isinstance(r, Tensor):
        return r._data.copy()
    return [_copy_data(e) for e in r]


def _scope_hooks(tracer: Tracer, module) -> list:
    """Forward hooks that keep ``tracer.scopes`` at the running submodule's path (``__module.layer1.0``)
    and open a frame for each submodule call."""
    handles = []
    for name, m in module.named_modules():
        if not name:
            continue
        scope = f"__module.{name}"

        def pre(m, args, scope=scope):
            tracer.scopes.append(scope)
            tracer.enter_call(m, args)

        def post(m, _args, out):
            tracer.exit_call(m, out)
            if tracer.scopes:
                tracer.scopes.pop()

        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    return handles


def _as_args(example_inputs) -> tuple:
    if isinstance(example_inputs, Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, list):
        return tuple(example_inputs)
    if not isinstance(example_inputs, tuple):
        raise TypeError(f"trace: example_inputs must be a Tensor or a tuple of them, not {type(example_inputs).__name__}")
    return example_inputs


def record(fn, args: tuple, module=None, method=None, strict: bool = True, names: list | None = None,
           snapshot: bool = False):
    """Trace ``fn(*args)`` (or ``method`` of ``module``); returns (graph, tracer, eager outputs)."""
    tracer = Tracer(module, snapshot, name_values=True, record_sizes=True)
    g = tracer.graph
    target = method if method is not None else fn
    if module is not None:
        self_value = g.add_input("self", T.ModuleType(type(module)))
        tracer.set_self(self_value, module)
    names = names or param_names(target, len(args))
    for a, name in zip(args, names):
        tracer.add_input(a, name)
    handles = _scope_hooks(tracer, module) if module is not None else []
    try:
        with tracer:
            out = target(*args)
            g.register_output(tracer.output_value(out, strict))
    finally:
        for h in handles:
            h.remove()
    tracer.drop_dead_nodes()
    return g, tracer, out
