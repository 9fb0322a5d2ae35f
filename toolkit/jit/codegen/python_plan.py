"""Plans that record no gradients, compiled into one Python function.

An interpreter pays per node for looking values up, wrapping every result in
a Tensor and dispatch's checks; in a loop of small ops that costs more than
the ops. A plan that records no gradients knows each value's dtype and device
(``plan_facts``), so most nodes become one line calling the registry's CPU
kernel on numpy arrays: values stay arrays between such lines, loops and
conditionals become Python's own, and a Tensor is made only where a value
leaves the plan or meets a node that needs one; such a node runs through the
interpreter's own step for it. A failing line is run again as the interpreter
runs it, so the error and its "while executing <node> at file:line" note are
the interpreter's; a line whose node writes a tensor or draws random numbers (the
registry's facts) is never run again, so its own error gets the note.
"""

from __future__ import annotations

import itertools
import linecache
import math

import numpy as np

from ... import dispatch
from ...ops import registry as R
from ...tensor import wrap
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value, values_defined, values_read
from ..kinds import builtins
from ..kinds.effects import is_mutating, is_random
from ..kinds.steps import EXEC, PLANS, annotate, step_for
from .cuda_fused_kernel import group_device
from .plan_facts import certain_dtypes, constant_value, direct_call, is_none

RAW, RAWLIST, OBJ = "raw", "rawlist", "obj"  # how a value is held: an array, a list of arrays, as the interpreter
_COUNTER = itertools.count()


def compile_plan(graph: Graph, observed: dict, grad_mode: bool) -> CompiledPlan | None:
    """The graph as one Python function, or None where running it so could skip recording a gradient."""
    if grad_mode:
        for n in graph.all_nodes():
            if K.facts(n.kind).opaque_under_grad or (n.op is not None and n.op.requires_grad_arg is not None
                                                and constant_value(n.inputs[n.op.requires_grad_arg]) not in (False, None)):
                return None
    return CompiledPlan(graph, observed)


class CompiledPlan:
    """Runs a graph through its generated function (``.source`` shows it).

    With ``arrays=True`` the function takes and returns arrays (``run_arrays``):
    a fusion group's subgraph run op by op, without a Tensor in between.
    """

    def __init__(self, graph: Graph, observed: dict, arrays: bool = False):
        self.graph = graph
        e = _Emitter(graph, certain_dtypes(graph, observed), arrays)
        self.source = e.build()
        self.filename = f"<toolkit plan {next(_COUNTER)}>"
        code = compile(self.source, self.filename, "exec")
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        namespace = e.globals
        exec(code, namespace)
        self._fn = namespace["_plan"]
        self._lines = e.line_nodes
        self._emitter = e
        self.direct_nodes = len(e.direct)

    def run(self, inputs: list) -> list:
        try:
            return self._fn(*inputs)
        except Exception as err:
            raise self._explain(err) from None

    run_arrays = run  # a plan made with ``arrays=True``: arrays in, arrays out

    @property
    def runs_everything_directly(self) -> bool:
        """Whether every node became a line of its own (none goes through the interpreter's step)."""
        return not self._emitter.generic

    def _explain(self, err: Exception) -> Exception:
        """The error as the interpreter raises it, naming the node and its source line."""
        if getattr(err, "_jit_annotated", False):
            return err
        tb, frame_tb = err.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code is self._fn.__code__:
                frame_tb = tb
            tb = tb.tb_next
        if frame_tb is None:
            return err
        entry = self._lines.get(frame_tb.tb_lineno)
        if entry is None:
            return err
        node, rerun = entry
        if rerun:
            env = {PLANS: {}}
            local = frame_tb.tb_frame.f_locals
            for v in node.inputs:
                env[v] = self._emitter.value_of(v, local)
            try:
                step_for(node)(node, env)
            except Exception as again:
                return annotate(again, node)
        return annotate(err, node)


def _wrap_list(arrays) -> tuple:
    return tuple(wrap(np.asarray(a)) for a in arrays)


def _wrap_view(a, inputs: tuple):
    """A view made in the plan, as a tensor: a view of an input shares the input's storage, as dispatch makes it."""
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    root = a.base if a.base is not None else a
    for t in inputs:
        st = t._storage
        if root is st.base:
            return wrap(a, st)
    return wrap(a)


def _wrap_view_list(arrays, inputs: tuple) -> tuple:
    return tuple(_wrap_view(a, inputs) for a in arrays)


class _Emitter:
    """Writes one graph's function: names, how each value is held, a line (or block) per node."""

    def __init__(self, graph: Graph, known: dict, arrays: bool = False):
        self.graph = graph
        self.known = known
        self.arrays = arrays  # inputs and outputs are arrays, not tensors
        self.generic = 0  # nodes run through the interpreter's step
        self.direct = {n: dc for n in graph.all_nodes() if (dc := direct_call(n, known)) is not None}
        self.names: dict = {}
        self.constants: dict = {}  # value -> its constant's Python value
        self.rep: dict = {}
        self.lines: list = []
        self.line_nodes: dict = {}
        self.plans: dict = {}
        self.views: set = set()  # arrays that may view an input's memory
        self.raw_names: dict = {}  # input tensor -> the local holding its array
        self.globals = {"_wrap": wrap, "_wrap_list": _wrap_list, "_wrap_view": _wrap_view,
                        "_wrap_view_list": _wrap_view_list, "_asarray": np.asarray,
                        "_ndarray": np.ndarray, "_scalar_as": dispatch.scalar_as, "_P": PLANS,
                        "_plans": self.plans, "__builtins__": __builtins__}
        self._ids = itertools.count()

    # -- names and globals -------------------------------------------------------------------
    def _global(self, obj, prefix: str) -> str:
        name = f"_{prefix}{next(self._ids)}"
        self.globals[name] = obj
        return name

    def _bind(self, v: Value) -> str:
        name = self.names[v] = f"v{next(self._ids)}"
        return name

    def expr(self, v: Value) -> str:
        return self.names[v]

    def value_of(self, v: Value, local: dict):
        """A value as the interpreter holds it, read from a failed run's frame."""
        if v in self.constants:
            return self.constants[v]
        x = local.get(self.names.get(v))
        rep = self.rep.get(v, OBJ)
        if rep == RAW and x is not None:
            return wrap(np.asarray(x))
        if rep == RAWLIST:
            return _wrap_list(x)
        return x

    def _literal(self, value) -> str:
        if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
            return repr(value)
        if isinstance(value, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
            return repr(value)
        return self._global(value, "c")

    # -- how values are held -----------------------------------------------------------------
    def _assign_reps(self) -> None:
        rep = self.rep
        if self.arrays:
            for v in self.graph.inputs:
                if isinstance(v.type, T.TensorType):
                    rep[v] = RAW
        for n, dc in self.direct.items():
            for o in n.outputs:
                if isinstance(o.type, T.TensorType):
                    rep[o] = RAW
                elif dc.op.returns_list:
                    rep[o] = RAWLIST
        for n in self.graph.all_nodes():
            if _group_on_arrays(n, self.known):
                for o in n.outputs:
                    rep[o] = RAW
        views = self.views
        for n, dc in self.direct.items():
            if dc.op.kind is R.VIEW:
                views.update(n.outputs)
        changed = True
        while changed:
            changed = False
            for n in self.graph.all_nodes():
                for out, sources in _merges(n):
                    if out not in views and any(s in views for s in sources):
                        views.add(out)
                        changed = True
                    if rep.get(out) is None and _tensorish(out) and any(rep.get(s) == RAW for s in sources):
                        rep[out] = RAW
                        changed = True
                if n.kind == K.LOOP:  # a loop's results are its carried values
                    for o, b in zip(n.outputs, n.blocks[0].inputs[1:]):
                        if rep.get(b) == RAW and rep.get(o) != RAW:
                            rep[o] = RAW
                            changed = True
                elif n.kind == K.UNCHECKED_CAST and rep.get(n.inputs[0]) != rep.get(n.outputs[0]):
                    rep[n.outputs[0]] = rep.get(n.inputs[0])
                    changed = True
                elif n.kind in (K.GETITEM, K.LIST_UNPACK) and rep.get(n.inputs[0]) == RAWLIST:
                    for o in n.outputs:
                        if rep.get(o) != RAW:
                            rep[o] = RAW
                            changed = True
                if n.kind in (K.UNCHECKED_CAST, K.GETITEM, K.LIST_UNPACK, K.LOOP) and (
                        any(v in views for v in n.inputs) or (n.kind == K.LOOP and any(
                            v in views for v in n.blocks[0].inputs))):
                    for o in n.outputs:
                        if o not in views:
                            views.add(o)
                            changed = True

    def _held(self, v: Value) -> str:
        return self.rep.get(v, OBJ)

    def as_obj(self, v: Value) -> str:
        e, rep = self.expr(v), self._held(v)
        if e == "None":
            return e
        if rep == RAW:
            wrap = f"_wrap_view({e}, _ins)" if v in self.views else f"_wrap({e})"
            return f"(None if {e} is None else {wrap})" if _may_be_none(v) else wrap
        if rep == RAWLIST:
            return f"_wrap_view_list({e}, _ins)" if v in self.views else f"_wrap_list({e})"
        return e

    def as_raw(self, v: Value) -> str:
        e, rep = self.expr(v), self._held(v)
        if rep == RAW or is_none(v) or e == "None":
            return e
        if v in self.raw_names:
            return self.raw_names[v]
        return f"(None if {e} is None else {e}._data)" if _may_be_none(v) else f"{e}._data"

    def _as(self, v: Value, rep: str) -> str:
        return self.as_raw(v) if rep == RAW else self.as_obj(v)

    # -- emitting -----------------------------------------------------------------------------
    def _emit(self, indent: int, text: str, node: Node | None = None, rerun: bool = False) -> None:
        self.lines.append("    " * indent + text)
        if node is not None:  # a node that writes or draws is never run twice, not even to explain its error
            self.line_nodes[len(self.lines)] = (node, rerun and not (is_mutating(node) or is_random(node)))

    def build(self) -> str:
        self._assign_reps()
        g = self.graph
        params = [self._bind(v) for v in g.inputs]
        self._emit(0, f"def _plan({', '.join(params)}):")
        tensor_inputs = [self.expr(v) for v in g.inputs if isinstance(v.type, T.TensorType) and not self.arrays]
        if self.views:
            self._emit(1, f"_ins = ({', '.join(tensor_inputs)}{',' if len(tensor_inputs) == 1 else ''})")
        for v in g.inputs:  # an input tensor's array, read once rather than at every use in a loop
            if isinstance(v.type, T.TensorType) and self._held(v) == OBJ:
                self.raw_names[v] = f"{self.expr(v)}_a"
                self._emit(1, f"{self.raw_names[v]} = {self.expr(v)}._data")
        self._block(g.block, 1)
        outs = []
        for v in g.outputs:
            if self.arrays and isinstance(v.type, T.TensorType):
                outs.append(self.as_raw(v))
            else:
                outs.append(self.as_obj(v))
        self._emit(1, f"return [{', '.join(outs)}]")
        return "\n".join(self.lines) + "\n"

    def _block(self, b: Block, indent: int) -> None:
        start = len(self.lines)
        for n in b.nodes:
            self._node(n, indent)
        if len(self.lines) == start:
            self._emit(indent, "pass")

    def _node(self, n: Node, indent: int) -> None:
        kind = n.kind
        if kind == K.UNINITIALIZED:
            self.constants[n.outputs[0]] = None
            self.names[n.outputs[0]] = "None"
        elif kind == K.CONSTANT:
            value = n.attributes.get("value")
            self.constants[n.outputs[0]] = value
            self.names[n.outputs[0]] = self._literal(value)
        elif n in self.direct:
            self._direct(n, self.direct[n], indent)
        elif _group_on_arrays(n, self.known):
            outs = ", ".join(self._bind(o) for o in n.outputs)
            runner = self._global(step_for(n).run_arrays, "g")
            self._emit(indent, f"{outs}, = {runner}({', '.join(self.as_raw(v) for v in n.inputs)})", n)
        elif kind == K.LEN and self._held(n.inputs[0]) == RAWLIST:
            self._emit(indent, f"{self._bind(n.outputs[0])} = len({self.expr(n.inputs[0])})", n)
        elif kind == K.IF:
            self._if(n, indent)
        elif kind == K.LOOP:
            self._loop(n, indent)
        elif kind == K.UNCHECKED_CAST:
            self.names[n.outputs[0]] = self.expr(n.inputs[0])
        elif kind == K.GETITEM:
            self._emit(indent, f"{self._bind(n.outputs[0])} = {self.as_obj_or_list(n.inputs[0])}"
                               f"[{self.as_obj(n.inputs[1])}]", n, True)
        elif kind in ("aten::__is__", "aten::__isnot__") and any(is_none(v) for v in n.inputs):
            op = "is" if kind == "aten::__is__" else "is not"
            sources = [_through_casts(v).node for v in n.inputs]
            if all(m is not None and m.kind == K.CONSTANT for m in sources):  # known now; ``1 is None`` is a SyntaxWarning
                same = sources[0].attributes.get("value") is sources[1].attributes.get("value")
                self._emit(indent, f"{self._bind(n.outputs[0])} = {same == (op == 'is')}", n)
            else:
                a, b = (self.expr(v) if self._held(v) == RAW else self.as_obj(v) for v in n.inputs)
                self._emit(indent, f"{self._bind(n.outputs[0])} = {a} {op} {b}", n)
        elif kind in (K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT):
            items = ", ".join(self.as_obj(v) for v in n.inputs)
            text = f"[{items}]" if kind == K.LIST_CONSTRUCT else f"({items}{',' if len(n.inputs) == 1 else ''})"
            self._emit(indent, f"{self._bind(n.outputs[0])} = {text}", n)
        elif kind == K.GET_ATTR:
            self._emit(indent, f"{self._bind(n.outputs[0])} = getattr({self.as_obj(n.inputs[0])}, "
                               f"{n.attributes['name']!r})", n, True)
        elif kind in (K.LIST_UNPACK, K.TUPLE_UNPACK) and len(n.outputs) > 0:
            outs = ", ".join(self._bind(o) for o in n.outputs)
            self._emit(indent, f"{outs}, = {self.as_obj_or_list(n.inputs[0])}", n, True)
        else:
            fn = _builtin(kind)
            if fn is not None and len(n.outputs) <= 1:
                call = f"{self._global(fn, 'f')}({', '.join(self.as_obj(v) for v in n.inputs)})"
                text = f"{self._bind(n.outputs[0])} = {call}" if n.outputs else call
                self._emit(indent, text, n, K.facts(kind).safe_to_rerun)
            else:
                self._generic(n, indent)

    def as_obj_or_list(self, v: Value) -> str:
        """A container read by index: a list of arrays stays one (its items are read as arrays)."""
        return self.expr(v) if self._held(v) == RAWLIST else self.as_obj(v)

    def _direct(self, n: Node, dc, indent: int) -> None:
        args = []
        for v, how in zip(n.inputs, dc.args):
            if how == "array":
                args.append(self.as_raw(v))
            elif how == "scalar":
                if v in self.constants:
                    args.append(self._literal(dispatch.scalar_as(self.constants[v], dc.scalar_dtype)))
                else:
                    args.append(f"_scalar_as({self.expr(v)}, {self._global(dc.scalar_dtype, 'd')})")
            elif how == "ints":
                if v in self.constants:
                    c = self.constants[v]
                    args.append(self._literal(tuple(c) if isinstance(c, list) else c))
                else:
                    e = self.expr(v)
                    args.append(f"(None if {e} is None else tuple({e}))" if _may_be_none(v) else f"tuple({e})")
            else:
                args.append(self.as_obj(v))
        call = f"{self._global(dc.kernel, 'k')}({', '.join(args)})"
        op = dc.op
        if not op.returns_tensor or op.returns_list:
            self._emit(indent, f"{self._bind(n.outputs[0])} = {call}", n, True)
            return
        if len(n.outputs) == 1:
            o = n.outputs[0]
            name = self._bind(o)
            self._emit(indent, f"{name} = {call}", n, True)
            if not _surely_array(o):
                self._emit(indent, f"if type({name}) is not _ndarray: {name} = _asarray({name})", n)
            if dc.result_dtype is not None:
                d = self._global(dc.result_dtype.np, "d")
                self._emit(indent, f"if {name}.dtype != {d}: {name} = {name}.astype({d})", n)
            return
        t = f"_t{next(self._ids)}"
        self._emit(indent, f"{t} = {call}", n, True)
        for k, o in enumerate(n.outputs):
            name = self._bind(o)
            self._emit(indent, f"{name} = {t}[{k}]", n)
            if not _surely_array(o):
                self._emit(indent, f"if type({name}) is not _ndarray: {name} = _asarray({name})", n)

    def _if(self, n: Node, indent: int) -> None:
        outs = [self._bind(o) for o in n.outputs]
        self._emit(indent, f"if {self.as_obj(n.inputs[0])}:", n)
        for b, head in zip(n.blocks, (None, "else:")):
            if head is not None:
                self._emit(indent, head, n)
            self._block(b, indent + 1)
            if outs:
                vals = ", ".join(self._as(v, self._held(o)) for v, o in zip(b.outputs, n.outputs))
                self._emit(indent + 1, _assign(outs, vals), n)

    def _loop(self, n: Node, indent: int) -> None:
        b = n.blocks[0]
        trip, cond = n.inputs[0], n.inputs[1]
        counter = self._bind(b.inputs[0])
        carried = [self._bind(v) for v in b.inputs[1:]]
        for o, name in zip(n.outputs, carried):
            self.names[o] = name
        if carried:
            init = ", ".join(self._as(v, self._held(c)) for v, c in zip(n.inputs[2:], b.inputs[1:]))
            self._emit(indent, _assign(carried, init), n)
        always = self.constants.get(cond) is True and self.constants.get(b.outputs[0]) is True \
            and isinstance(trip.type, T.IntType)
        if always:
            self._emit(indent, f"for {counter} in range({self.expr(trip)}):", n)
        else:
            c = f"_c{next(self._ids)}"
            self._emit(indent, f"{c} = {self.as_obj(cond)}", n)
            self._emit(indent, f"{counter} = 0", n)
            limit = "" if is_none(trip) else (
                f" and {counter} < {self.expr(trip)}" if isinstance(trip.type, T.IntType)
                else f" and ({self.expr(trip)} is None or {counter} < {self.expr(trip)})")
            self._emit(indent, f"while {c}{limit}:", n)
        self._block(b, indent + 1)
        if carried:
            vals = ", ".join(self._as(v, self._held(c)) for v, c in zip(b.outputs[1:], b.inputs[1:]))
            self._emit(indent + 1, _assign(carried, vals), n)
        if not always:
            self._emit(indent + 1, f"{c} = {self.as_obj(b.outputs[0])}", n)
            self._emit(indent + 1, f"{counter} += 1", n)

    def _generic(self, n: Node, indent: int) -> None:
        """A node only the interpreter's step runs: it gets an environment with what it reads."""
        self.generic += 1
        inner: set = set()
        values_defined(n, inner)  # its own outputs and what its blocks define: nothing it reads from outside
        reads = []
        for v in values_read(n):
            if v not in inner and v not in reads:
                reads.append(v)
        env = ", ".join(["_P: _plans"] + [f"{self._global(v, 'V')}: {self.as_obj(v)}" for v in reads])
        parts = [f"_e = {{{env}}}", f"{self._global(step_for(n), 's')}({self._global(n, 'n')}, _e)"]
        for o in n.outputs:
            parts.append(f"{self._bind(o)} = _e[{self._global(o, 'V')}]")
        self._emit(indent, "; ".join(parts), n)


def _runs_on_arrays(n: Node) -> bool:
    """A CPU fusion group whose inputs are all tensors: its kernel runs on arrays."""
    if n.kind != K.FUSION_GROUP:
        return False
    return group_device(n) != "cuda" and all(isinstance(v.type, T.TensorType) for v in n.inputs)


def _group_on_arrays(n: Node, known: dict) -> bool:
    """A group a compiled plan runs on arrays: its inputs' dtypes hold on every run (its steps trust them)."""
    return _runs_on_arrays(n) and all(v in known for v in n.inputs)


def _assign(names: list, values: str) -> str:
    """``a, b = x, y`` (values: the right-hand side's comma-joined expressions); one name without a tuple."""
    return f"{names[0]} = {values}" if len(names) == 1 else f"{', '.join(names)} = {values}"


def _merges(n: Node):
    """(value, the values it takes) at the places where control flow joins."""
    if n.kind == K.IF:
        for k, o in enumerate(n.outputs):
            yield o, [b.outputs[k] for b in n.blocks]
    elif n.kind == K.LOOP:
        b = n.blocks[0]
        for k, v in enumerate(b.inputs[1:]):
            yield v, [n.inputs[k + 2], b.outputs[k + 1]]


def _tensorish(v: Value) -> bool:
    t = v.type
    return isinstance(t, T.TensorType) or (isinstance(t, T.OptionalType) and isinstance(t.elem, T.TensorType))


def _may_be_none(v: Value) -> bool:
    return isinstance(v.type, (T.OptionalType, T.NoneType))


def _surely_array(v: Value) -> bool:
    """A result the kernel returns as an ndarray for sure: numpy gives 0-d results as numpy scalars."""
    t = v.type
    return isinstance(t, T.TensorType) and t.sizes is not None and len(t.sizes) > 0


def _builtin(kind: str):
    """The Python function a scripted builtin kind runs (``aten::len``, ``aten::add.int``...), if it is one."""
    fn = builtins.FUNCTIONS.get(kind)
    if fn is not None and EXEC.get(kind) is not None:
        return fn
    return None


def _through_casts(v):
    """The value ``v`` is a ``prim::unchecked_cast`` of (the casts change its type, never its value)."""
    while v.node is not None and v.node.kind == K.UNCHECKED_CAST:
        v = v.node.inputs[0]
    return v
