"""What a graph loaded from an archive may do: the check ``toolkit.jit.load`` runs before it builds the module.

The interpreter trusts its graph: ``prim::GetAttr`` is Python's ``getattr``, ``prim::SetAttr`` its ``setattr``,
and builtins such as ``aten::__getitem__``, ``aten::pop`` or ``aten::format`` call methods of whatever values
reach them. A graph compiled from the user's own code earns that trust from the compiler, which typed every
value; a graph read from a file has to earn it here, from the same rules, before anything runs:

- every node is a registry op used as its schema says, a builtin used as one of its schemas says
  (``builtin_schema``; a builtin without a schema never loads), or one of the structural kinds of
  ``_RULES``, with the inputs, outputs, attributes and blocks its kind takes; ``prim::RaiseException`` raises
  only one of Python's builtin errors (``archive_types.ARCHIVE_EXCEPTIONS``), its message a value (never a module);
  ``prim::fork``'s ``Subgraph`` is checked by these same rules, its parameters typed by what the node passes;
- every value's type follows from its definition (a node's rule, a constant's value, a declared member of a
  module, a checked call argument) and the archive's declared type must agree with it;
- tensors are read only through the properties scripted code reads (``x.dtype``, ``x.device``, ``x.ndim``...);
- modules are confined: the only module values are ``self`` and the submodules ``prim::GetAttr`` reads from it
  by a child's name; a module is used only as the object of ``prim::GetAttr`` and ``prim::SetAttr``, whose
  names must be members the archive declares for that very module (its parameters, buffers, submodules and
  typed attributes, and ``training``), and never enters a list, an op, a builtin, a block's or the graph's
  outputs;
- the graph's inputs have types a call checks (``check_value``), so every value a node ever sees is a tensor, a
  number, a string, None, a dtype or device, a list, tuple or dict of those, or one of the archive's modules.

So no node reaches an object the archive did not create. Anything else is refused with ``GraphRefused``,
which names the node; the loader adds the archive's code line.
"""

from __future__ import annotations

from ...nn.modules.module import Module
from ..frontend.script.attributes import accepts
from ..frontend.script.exprs import TENSOR_ATTR_TYPES
from ..frontend.script.refs import ExceptionRef
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from ..kinds.builtins import SCHEMAS, check_format
from .archive_types import (
    ARCHIVE_EXCEPTIONS,
    check_value,
    checkable,
    contains_module,
    fits,
    fits_arg,
    return_type,
)
from .builtin_schema import parse_builtin_schema

__all__ = ["GraphRefused", "MAX_NODES", "check_graph", "loadable_kinds"]

MAX_NODES = 1_000_000
"""The most nodes a loaded graph may have (nested blocks included)."""

_TENSOR_PROPERTIES = {**TENSOR_ATTR_TYPES, "T": T.TENSOR, "mT": T.TENSOR, "data": T.TENSOR}
"""The properties a loaded graph may read off a tensor (``prim::GetAttr`` on a tensor), with their types."""

class GraphRefused(Exception):
    """A loaded graph does something the archive may not: ``node`` (or None for the graph) and why."""

    def __init__(self, node: Node | None, reason: str):
        super().__init__(reason)
        self.node = node
        self.reason = reason


_PARSED: dict = {}


def _schemas() -> dict:
    """The builtins' parsed schemas (parsed again when a kind is added)."""
    if len(_PARSED) != len(SCHEMAS):
        _PARSED.clear()
        _PARSED.update({k: tuple(parse_builtin_schema(s) for s in v) for k, v in SCHEMAS.items()})
    return _PARSED


def loadable_kinds() -> frozenset:
    """The node kinds other than registry ops that a loaded graph may hold."""
    return frozenset(_RULES) | frozenset(_schemas())


# ---------------------------------------------------------------------------------------------------- members
def _member(m: Module, name) -> tuple[str, object]:
    """What ``m.<name>`` is, as the archive declares it: ("module", child), ("tensor", value), ("attribute",
    type), ("training", None), or ("", None) for anything else."""
    if not isinstance(name, str):
        return "", None
    if name in m._modules and m._modules[name] is not None:
        return "module", m._modules[name]
    for table in (m._parameters, m._buffers):
        if name in table:
            return "tensor", table[name]
    types = m.__dict__.get("_attribute_types", {})
    if name in types:
        return "attribute", types[name]
    if name == "training":
        return "training", None
    return "", None


def _declared(m: Module) -> str:
    names = [*m._parameters, *m._buffers, *(k for k, c in m._modules.items() if c is not None),
             *m.__dict__.get("_attribute_types", {}), "training"]
    return ", ".join(names)


def _module_name(m: Module) -> str:
    return m._get_name()


# ---------------------------------------------------------------------------------------------------- the check
class _Checker:
    def __init__(self, root: Module | None):
        self.root = root
        self.modules: dict[Value, Module] = {}
        self.nodes = 0

    # -- values
    def define(self, n: Node | None, v: Value, computed: T.JitType) -> None:
        """A value's declared type must agree with what its definition computes."""
        if v in self.modules:
            if not isinstance(v.type, T.ModuleType):
                raise GraphRefused(n, f"%{v.debug_name} is a module but is declared {v.type}")
            return
        if contains_module(v.type):
            raise GraphRefused(n, f"%{v.debug_name} is declared {v.type}, but only self and its submodules read "
                                  "by prim::GetAttr are modules")
        if not fits(computed, v.type):
            raise GraphRefused(n, f"%{v.debug_name} is declared {v.type}, but {n.kind if n else 'it'} gives "
                                  f"{computed}")

    def not_module(self, n: Node | None, v: Value, what: str) -> None:
        if v in self.modules or contains_module(v.type):  # declared a module: refused where it is defined too
            m = self.modules.get(v)
            raise GraphRefused(n, f"a module (%{v.debug_name}, {_module_name(m) if m is not None else v.type}) cannot "
                                  f"be {what}: modules are only read and assigned attributes of")

    # -- graphs and blocks
    def graph(self, g: Graph, module_input: bool) -> None:
        for i, v in enumerate(g.inputs):
            if i == 0 and module_input:
                if not isinstance(v.type, T.ModuleType) or self.root is None:
                    raise GraphRefused(None, f"the graph's first input %{v.debug_name} is {v.type}, not the module")
                self.modules[v] = self.root
            elif not checkable(v.type):
                raise GraphRefused(None, f"the graph's input %{v.debug_name} has type {v.type}, which a call "
                                         "cannot check")
        if not g.outputs:
            raise GraphRefused(None, "the graph returns nothing")
        self.block(g.block)
        for v in g.outputs:
            self.not_module(None, v, "returned")

    def block(self, b: Block) -> None:
        for n in b.nodes:
            self.node(n)

    def node(self, n: Node) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise GraphRefused(n, f"the graph has more than {MAX_NODES} nodes")
        k = n.kind
        for i, v in enumerate(n.inputs):
            if not (i == 0 and k in (K.GET_ATTR, K.SET_ATTR)) and k != K.FORK:
                self.not_module(n, v, f"passed to {k}")
        extra = set(n.attributes) - set(K.facts(k).attributes)
        if extra:
            raise GraphRefused(n, f"{k} takes no attribute {sorted(extra)[0]!r}")
        if n.blocks and not K.facts(k).blocks:
            raise GraphRefused(n, f"{k} takes no blocks")
        if n.op is not None:
            self.op(n)
        elif k in _RULES:
            _RULES[k](self, n)
        elif k in _schemas():
            self.builtin(n)
        else:
            raise GraphRefused(n, f"unknown node kind {k}: only registry ops and the interpreter's kinds that "
                                  "have a schema can be loaded")

    def arity(self, n: Node, n_in: int | None, n_out: int | None) -> None:
        if n_in is not None and len(n.inputs) != n_in:
            raise GraphRefused(n, f"{n.kind} takes {n_in} input(s), got {len(n.inputs)}")
        if n_out is not None and len(n.outputs) != n_out:
            raise GraphRefused(n, f"{n.kind} has {n_out} output(s), got {len(n.outputs)}")

    # -- registry ops and builtins
    def op(self, n: Node) -> None:
        op = n.op
        if n.kind != op.qualified_name:
            raise GraphRefused(n, f"node {n.kind} runs op {op.schema.full_name}")
        if len(n.inputs) != len(op.args):
            raise GraphRefused(n, f"{n.kind} takes {len(op.args)} inputs (schema {op.schema}), got {len(n.inputs)}")
        for v, a in zip(n.inputs, op.args):
            if not fits_arg(v.type, a, op):
                raise GraphRefused(n, f"argument '{a.name}' of {n.kind} must be {a.type}, but %{v.debug_name} is "
                                      f"{v.type}")
        if len(n.outputs) != op.n_outputs:
            raise GraphRefused(n, f"{n.kind} returns {op.n_outputs} value(s), the graph expects {len(n.outputs)}")
        # an elementwise op on numbers alone may be declared to give a number, as graphs converted from
        # TorchScript's say (``%c : bool = aten::gt(%n, %4)``): what runs is still a tensor, used as one
        scalar = op.scalar_tensors and all(isinstance(v.type, (T.IntType, T.FloatType, T.BoolType))
                                           for v, a in zip(n.inputs, op.args) if a.type == "Tensor")
        for o, r in zip(n.outputs, op.schema.returns):
            number = isinstance(o.type, (T.IntType, T.FloatType, T.BoolType))
            self.define(n, o, o.type if scalar and number and r.type == "Tensor" else return_type(r))

    def builtin(self, n: Node) -> None:
        overloads = _schemas()[n.kind]
        if n.kind == "aten::format" and n.inputs and n.inputs[0].node is not None \
                and n.inputs[0].node.kind == K.CONSTANT:
            fmt = n.inputs[0].node.attributes.get("value")
            try:
                check_format(fmt if isinstance(fmt, str) else "")
            except ValueError as e:
                raise GraphRefused(n, str(e)) from None
        types = [v.type for v in n.inputs]
        for s in overloads:
            outs = s.bind(types)
            if outs is not None and len(outs) == len(n.outputs):
                for o, t in zip(n.outputs, outs):
                    self.define(n, o, t)
                return
        got = ", ".join(str(t) for t in types)
        raise GraphRefused(n, f"{n.kind} takes {' or '.join(str(s) for s in overloads)}; got ({got}) and "
                              f"{len(n.outputs)} output(s)")

    # -- structural kinds
    def constant(self, n: Node) -> None:
        self.arity(n, 0, 1)
        value = n.attributes.get("value")
        o = n.outputs[0]
        if contains_module(o.type) or not check_value(value, o.type):
            raise GraphRefused(n, f"the constant {value!r:.60} is not a value of its declared type {o.type}")

    def list_construct(self, n: Node) -> None:
        self.arity(n, None, 1)
        t = n.outputs[0].type
        elem = t.elem if isinstance(t, T.ListType) else T.ANY if isinstance(t, T.AnyType) else None
        if elem is None:
            raise GraphRefused(n, f"prim::ListConstruct makes a list, but its output is declared {t}")
        for v in n.inputs:
            if not fits(v.type, elem):
                raise GraphRefused(n, f"%{v.debug_name} ({v.type}) cannot be an element of {t}")
        self.define(n, n.outputs[0], t)

    def tuple_construct(self, n: Node) -> None:
        self.arity(n, None, 1)
        self.define(n, n.outputs[0], T.TupleType([v.type for v in n.inputs]))

    def dict_construct(self, n: Node) -> None:
        self.arity(n, None, 1)
        t = n.outputs[0].type
        if isinstance(t, T.AnyType):
            t = T.DictType(T.ANY, T.ANY)
        if not isinstance(t, T.DictType) or len(n.inputs) % 2:
            raise GraphRefused(n, f"prim::DictConstruct takes keys and values and makes a dict, but has "
                                  f"{len(n.inputs)} inputs and is declared {t}")
        for i, v in enumerate(n.inputs):
            want = t.value if i % 2 else t.key
            if not fits(v.type, want):
                raise GraphRefused(n, f"%{v.debug_name} ({v.type}) cannot be a {'value' if i % 2 else 'key'} of {t}")
        self.define(n, n.outputs[0], t)

    def unpack(self, n: Node) -> None:
        self.arity(n, 1, None)
        t, k = n.inputs[0].type, len(n.outputs)
        if isinstance(t, T.TupleType) and len(t.elems) == k:
            elems = list(t.elems)
        elif isinstance(t, T.ListType):
            elems = [t.elem] * k
        elif isinstance(t, T.AnyType):
            elems = [T.ANY] * k
        else:
            raise GraphRefused(n, f"{n.kind} cannot unpack {t} into {k} value(s)")
        for o, e in zip(n.outputs, elems):
            self.define(n, o, e)

    def getitem(self, n: Node) -> None:
        self.arity(n, 2, 1)
        index, t = n.inputs[1], n.inputs[0].type
        it = index.type
        if isinstance(t, T.TensorType):
            out = T.TENSOR
        elif isinstance(t, (T.ListType, T.StrType)) and fits(it, T.INT):
            out = t.elem if isinstance(t, T.ListType) else T.STR
        elif isinstance(t, T.DictType) and fits(it, t.key):
            out = t.value
        elif isinstance(t, T.TupleType) and fits(it, T.INT):
            c = index.node.attributes.get("value") if index.node is not None and \
                index.node.kind == K.CONSTANT else None
            if isinstance(c, int) and -len(t.elems) <= c < len(t.elems):
                out = t.elems[c]
            else:
                out = t.elems[0] if t.elems and all(e == t.elems[0] for e in t.elems) else T.ANY
        elif isinstance(t, T.AnyType):
            out = T.ANY
        else:
            raise GraphRefused(n, f"aten::__getitem__ cannot index {t} with {it}")
        self.define(n, n.outputs[0], out)

    def member(self, n: Node, write: bool) -> tuple[Module, str, str, object]:
        name = n.attributes.get("name")
        m = self.modules.get(n.inputs[0]) if n.inputs else None
        if m is None:
            raise GraphRefused(n, f"{n.kind} of {name!r:.60} on %{n.inputs[0].debug_name} ({n.inputs[0].type}), "
                                  "which is not a module: only attributes of the module and its submodules can be "
                                  "read or assigned")
        what, info = _member(m, name)
        if not what or (write and what not in ("attribute", "tensor")) or \
                (write and what == "tensor" and name in m._parameters):
            declared = "assigns only its typed attributes and buffers" if write else f"declares {_declared(m)}"
            raise GraphRefused(n, f"{name!r:.60} is not an attribute the archive declares for module "
                                  f"{_module_name(m)} (it {declared})")
        return m, name, what, info

    def get_attr(self, n: Node) -> None:
        self.arity(n, 1, 1)
        obj = n.inputs[0]
        if obj not in self.modules and isinstance(obj.type, T.TensorType):
            self.tensor_property(n)
            return
        _, _, what, info = self.member(n, write=False)
        o = n.outputs[0]
        if what == "module":
            self.modules[o] = info
            self.define(n, o, o.type)
            return
        if what == "tensor":
            computed = T.TENSOR if info is not None else T.NONE
            if info is None and isinstance(o.type, T.TensorType):
                computed = o.type  # a parameter or buffer set to None reads as None wherever a tensor may
        else:
            computed = T.BOOL if what == "training" else info
        self.define(n, o, computed)

    def tensor_property(self, n: Node) -> None:
        """``x.dtype``, ``x.device``, ``x.T``...: one of the Tensor properties scripted code reads, typed as the
        compiler types it."""
        name = n.attributes.get("name")
        t = _TENSOR_PROPERTIES.get(name) if isinstance(name, str) else None
        if t is None:
            raise GraphRefused(n, f"prim::GetAttr of {name!r:.60} on the tensor %{n.inputs[0].debug_name}: an archive "
                                  f"reads only the tensor properties {', '.join(sorted(_TENSOR_PROPERTIES))}")
        self.define(n, n.outputs[0], t)

    def set_attr(self, n: Node) -> None:
        self.arity(n, 2, 0)
        m, name, what, info = self.member(n, write=True)
        t = n.inputs[1].type
        ok = fits(t, T.OptionalType(T.TENSOR)) and not isinstance(t, T.AnyType) if what == "tensor" else \
            accepts(info, t)
        if not ok:
            want = "a tensor" if what == "tensor" else str(info)
            raise GraphRefused(n, f"{_module_name(m)}.{name} is {want}; %{n.inputs[1].debug_name} is {t}")

    def raise_exception(self, n: Node) -> None:
        """Raises one of ``ARCHIVE_EXCEPTIONS`` with a message that is data (a string, usually; None for no message),
        never a module."""
        if len(n.inputs) > 1 or n.outputs:
            raise GraphRefused(n, f"prim::RaiseException takes at most 1 input (the message) and has no outputs, got "
                                  f"{len(n.inputs)} input(s) and {len(n.outputs)} output(s)")
        ref = n.attributes.get("exception")
        if not isinstance(ref, ExceptionRef) or ref.cls not in ARCHIVE_EXCEPTIONS:
            raise GraphRefused(n, f"prim::RaiseException raises {ref!s:.80}, which an archive may not raise: only "
                                  "Python's builtin errors (" + ", ".join(sorted(c.__name__ for c in ARCHIVE_EXCEPTIONS))
                                  + ")")
        t = n.inputs[0].type if n.inputs else T.NONE
        if not (checkable(t) or isinstance(t, T.AnyType)):
            raise GraphRefused(n, f"the message of prim::RaiseException must be a str or other data, but "
                                  f"%{n.inputs[0].debug_name} is {t}")

    def fork(self, n: Node) -> None:
        """``prim::fork``: its ``Subgraph`` keeps to the same rules, its parameters typed by what the node passes
        (a module passed in is that very module inside, confined as everywhere); the output is a ``Future`` of
        what the subgraph returns."""
        self.arity(n, None, 1)
        sub = n.attributes.get("Subgraph")
        if not isinstance(sub, Graph):
            raise GraphRefused(n, "prim::fork holds no Subgraph to run")
        if len(sub.inputs) != len(n.inputs) or len(sub.outputs) != 1:
            raise GraphRefused(n, f"prim::fork passes {len(n.inputs)} value(s) to a Subgraph that takes "
                                  f"{len(sub.inputs)} and returns {len(sub.outputs)} (it must return 1)")
        for v, p in zip(n.inputs, sub.inputs):
            if v in self.modules:
                if not isinstance(p.type, T.ModuleType):
                    raise GraphRefused(n, f"prim::fork passes the module %{v.debug_name} as the Subgraph's "
                                          f"%{p.debug_name}, declared {p.type}")
                self.modules[p] = self.modules[v]
            elif contains_module(p.type) or not fits(v.type, p.type):
                raise GraphRefused(n, f"the Subgraph's parameter %{p.debug_name} is declared {p.type}, but prim::fork "
                                      f"passes %{v.debug_name} ({v.type})")
        self.block(sub.block)
        out = sub.outputs[0]
        self.not_module(n, out, "returned by a forked Subgraph")
        self.define(n, n.outputs[0], T.FutureType(out.type))

    def wait(self, n: Node) -> None:
        """``aten::wait``: the value of a ``Future``, of the type the future declares."""
        self.arity(n, 1, 1)
        t = n.inputs[0].type
        if not isinstance(t, T.FutureType):
            raise GraphRefused(n, f"aten::wait takes a Future (what prim::fork returns), got %{n.inputs[0].debug_name} "
                                  f"({t})")
        self.define(n, n.outputs[0], t.elem)

    def if_(self, n: Node) -> None:
        self.arity(n, 1, None)
        if not _condition(n.inputs[0].type):
            raise GraphRefused(n, f"prim::If needs a bool condition, got {n.inputs[0].type}")
        if len(n.blocks) != 2 or any(b.inputs or len(b.outputs) != len(n.outputs) for b in n.blocks):
            raise GraphRefused(n, f"prim::If needs 2 blocks without inputs returning {len(n.outputs)} value(s)")
        for b in n.blocks:
            self.block(b)
            self.block_outputs(n, b, b.outputs, n.outputs)
        for o in n.outputs:
            self.define(n, o, o.type)

    def block_outputs(self, n: Node, b: Block, values: list, targets: list) -> None:
        for v, o in zip(values, targets):
            self.not_module(n, v, "returned by a block")
            if not fits(v.type, o.type):
                raise GraphRefused(n, f"a block of {n.kind} returns %{v.debug_name} ({v.type}) for %{o.debug_name}, "
                                      f"declared {o.type}")

    def loop(self, n: Node) -> None:
        k = len(n.inputs) - 2
        b = n.blocks[0] if len(n.blocks) == 1 else None
        if k < 0 or b is None or len(n.outputs) != k or len(b.inputs) != k + 1 or len(b.outputs) != k + 1:
            raise GraphRefused(n, "prim::Loop(max_trip_count, cond, *carried) needs one block carrying as many "
                                  "values in, through it and out")
        if not fits(n.inputs[0].type, T.OptionalType(T.INT)) or not _condition(n.inputs[1].type):
            raise GraphRefused(n, f"prim::Loop needs an int trip count and a bool condition, got "
                                  f"{n.inputs[0].type} and {n.inputs[1].type}")
        self.define(n, b.inputs[0], T.INT)
        for init, param in zip(n.inputs[2:], b.inputs[1:]):
            if contains_module(param.type) or not fits(init.type, param.type):
                raise GraphRefused(n, f"the loop-carried %{param.debug_name} is declared {param.type}, but starts "
                                      f"as %{init.debug_name} ({init.type})")
        self.block(b)
        self.not_module(n, b.outputs[0], "returned by a block")
        if not _condition(b.outputs[0].type):
            raise GraphRefused(n, f"the body of prim::Loop must return a bool condition first, got "
                                  f"%{b.outputs[0].debug_name} ({b.outputs[0].type})")
        self.block_outputs(n, b, b.outputs[1:], b.inputs[1:])
        for param, o in zip(b.inputs[1:], n.outputs):
            self.define(n, o, param.type)


def _condition(t: T.JitType) -> bool:
    """A condition is a bool, or a tensor the interpreter tests as Python does (graphs converted from
    TorchScript's use one)."""
    return fits(t, T.BOOL) or isinstance(t, T.TensorType)


_RULES = {
    K.CONSTANT: _Checker.constant,
    K.LIST_CONSTRUCT: _Checker.list_construct,
    K.TUPLE_CONSTRUCT: _Checker.tuple_construct,
    K.DICT_CONSTRUCT: _Checker.dict_construct,
    K.LIST_UNPACK: _Checker.unpack,
    K.TUPLE_UNPACK: _Checker.unpack,
    K.GETITEM: _Checker.getitem,
    K.GET_ATTR: _Checker.get_attr,
    K.SET_ATTR: _Checker.set_attr,
    K.IF: _Checker.if_,
    K.LOOP: _Checker.loop,
    K.RAISE_EXCEPTION: _Checker.raise_exception,
    K.FORK: _Checker.fork,
    K.WAIT: _Checker.wait,
}


def check_graph(graph: Graph, root: Module | None) -> None:
    """Raise ``GraphRefused`` unless ``graph`` keeps to the rules above; ``root`` is the module its first input is
    (None for a function)."""
    _Checker(root).graph(graph, module_input=root is not None)
