"""Readable Python-like code for a graph, in the style of TorchScript's serialized ``forward``::

    def forward(self,
        x: Tensor) -> Tensor:
      _0 = torch.mul(x, 2)
      return torch.add(_0, y, 1)

One statement per op node; constants, lists and attribute reads are inlined
where they are used. Control flow prints as Python, the way TorchScript prints it:
a ``prim::If`` is an ``if``/``else`` whose blocks end by assigning the node's
outputs, and a ``prim::Loop`` assigns its carried values' initial values to the
loop's names, then runs a ``for ... in range(n)`` (constant-true condition),
a ``while c`` (no trip count) or, with both, a ``for`` that ``break``s when the
condition turns false; its body ends by assigning the next values. A ``prim::SetAttr``
prints as an assignment, ``self.count = torch.add(count, 1)``, its value's call written in
place when that call comes right before it and has no other use; reads of an attribute some
``prim::SetAttr`` assigns print as statements (``count = self.count``), so each reads where the
graph does. A ``prim::RaiseException`` prints as TorchScript prints it, its message and then its class by name:
``ops.prim.RaiseException(_0, "builtins.ValueError")``. A ``prim::fork`` prints its ``Subgraph`` as a nested
function, then ``fut = fork(__forked_function, x)`` passing it the node's inputs. Archives store this text and
``code_parser`` parses it back.
"""

from __future__ import annotations

import keyword
import math

from ...tensor import Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from ..ir.printer import format_constant

MAX_TRIP_COUNT = 2 ** 63 - 1
"""The trip count of a loop without one (TorchScript's ``while`` loops carry ``INT64_MAX``)."""


def annotation(t: T.JitType) -> str:
    """A type as ``.code`` annotates it (and TorchScript's errors name it): ``Tensor``, ``List[int]``,
    ``Optional[Tensor]``, ``Dict[str, Tensor]``."""
    if isinstance(t, T.TensorType):
        return "Tensor"
    if isinstance(t, T.ListType):
        return f"List[{annotation(t.elem)}]"
    if isinstance(t, T.TupleType):
        return "Tuple[" + ", ".join(annotation(e) for e in t.elems) + "]"
    if isinstance(t, T.DictType):
        return f"Dict[{annotation(t.key)}, {annotation(t.value)}]"
    if isinstance(t, T.OptionalType):
        return f"Optional[{annotation(t.elem)}]"
    if isinstance(t, T.FutureType):
        return f"Future[{annotation(t.elem)}]"
    return str(t)


def exception_name(cls: type) -> str:
    """How ``.code`` names the class a ``prim::RaiseException`` raises, as TorchScript does: ``builtins.ValueError``,
    ``__main__.MyError``."""
    return f"{cls.__module__}.{cls.__qualname__}"


def raised_class(n: Node) -> type:
    """The exception class a ``prim::RaiseException`` raises (``RuntimeError`` when the node names none)."""
    ref = n.attributes.get("exception")
    return ref.cls if ref is not None else RuntimeError


def _literal(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return format_constant(v)
    if isinstance(v, str):
        return repr(v)
    if v is None:
        return "None"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_literal(e) for e in v) + "]"
    return str(v)


def assigned_attributes(graph: Graph) -> frozenset:
    """The attribute names some ``prim::SetAttr`` of ``graph`` assigns."""
    return frozenset(n["name"] for n in graph.all_nodes() if n.kind == K.SET_ATTR)


def prints_inline(n: Node, assigned: frozenset) -> bool:
    """Whether ``n`` prints inside the expressions that use it rather than as a statement.

    A module attribute that the graph assigns (a name in ``assigned``) is read by a statement, in order,
    as TorchScript prints it: ``count = self.count``.
    """
    if n.kind == K.GET_ATTR:
        return not (n["name"] in assigned and isinstance(n.inputs[0].type, T.ModuleType)
                    and not isinstance(n.output().type, T.ModuleType))
    return K.facts(n.kind).printed_inline


def is_call(n: Node) -> bool:
    """Whether ``n`` prints as one call, ``torch.<op>(...)`` or an interpreter built-in ``ops.<ns>.<name>(...)``."""
    return n.op is not None or (not K.facts(n.kind).printed_as_syntax and not n.attributes and "::" in n.kind)


def setattr_of(n: Node, assigned: frozenset) -> Node | None:
    """The ``prim::SetAttr`` that prints ``n``'s call as its value (``self.count = torch.add(count, 1)``), or None.

    As TorchScript: when ``n`` is a call whose one, unnamed output has that assignment as its only use, and
    only inlined nodes come between them.
    """
    if len(n.outputs) != 1 or n.blocks or not is_call(n):
        return None
    v = n.outputs[0]
    if v.has_debug_name() or len(v.uses) != 1 or v.uses[0].user.kind != K.SET_ATTR or v.uses[0].offset != 1:
        return None
    if any(o is v for b in v.graph.all_blocks() for o in b.outputs):  # also returned: it needs its name
        return None
    user, nodes = v.uses[0].user, n.owning_block.nodes
    for m in nodes[n.owning_block.index(n) + 1:]:
        if m is user:
            return user
        if not prints_inline(m, assigned):
            return None
    return None


def _constant_value(v: Value) -> tuple[bool, object]:
    """``(True, value)`` when ``v`` is a ``prim::Constant``'s output, else ``(False, None)``."""
    n = v.node
    if n is None or n.kind != K.CONSTANT:
        return False, None
    return True, n.attributes.get("value")


def loop_form(n: Node) -> str:
    """How a ``prim::Loop`` prints: ``"for"``, ``"while"`` or ``"for-break"``.

    As TorchScript decides: a loop whose entry and next conditions are constant ``True`` is a
    ``for`` over its trip count; one without a trip count (``None`` or ``INT64_MAX``) whose counter
    is unused is a ``while`` on its condition; a loop with both prints as a ``for`` that breaks.
    """
    body = n.blocks[0]
    known, trip = _constant_value(n.inputs[0])
    counter_used = bool(body.inputs[0].uses) or any(o is body.inputs[0] for o in body.outputs)
    if known and (trip is None or trip == MAX_TRIP_COUNT) and not counter_used:
        return "while"
    always = all(_constant_value(c)[1] is True for c in (n.inputs[1], body.outputs[0]))
    return "for" if always else "for-break"


FORKED_FUNCTION = "__forked_function"
"""The name of the nested function a ``prim::fork`` prints as (then ``__forked_function0``, ``1``...), as in
TorchScript's code."""


class _CodeWriter:
    """Prints one graph; a ``prim::fork``'s ``Subgraph`` gets a writer of its own (``parent`` is the enclosing one),
    sharing the tensor constants and the numbering of the forked functions."""

    def __init__(self, graph: Graph, parent: _CodeWriter | None = None):
        self.graph = graph
        self.names: dict[Value, str] = {}
        self.inline: dict[Value, str] = {}
        self.used: set[str] = set()
        self.tmp = 0
        self.constants: list = [] if parent is None else parent.constants
        self.forks: dict = {} if parent is None else parent.forks  # prim::fork -> (function name, its writer)
        self.assigned = assigned_attributes(graph)

    def inlined(self, n: Node) -> bool:
        return prints_inline(n, self.assigned)

    def fresh(self) -> str:
        while f"_{self.tmp}" in self.used:
            self.tmp += 1
        n = f"_{self.tmp}"
        self.used.add(n)
        return n

    def name(self, v: Value) -> str:
        if v in self.inline:
            return self.inline[v]
        n = self.names.get(v)
        if n is None:
            if v.has_debug_name():
                base = v.debug_name.replace(".", "_")
                ok = base.isidentifier() and not keyword.iskeyword(base) and base not in self.used
                n = base if ok else None
                if n is not None:
                    self.used.add(n)
            if n is None:
                n = self.fresh()
            self.names[v] = n
        return n

    def expr_of_constant(self, n: Node) -> str:
        v = n.attributes.get("value")
        if isinstance(v, Tensor):
            self.constants.append(v)
            return f"CONSTANTS.c{len(self.constants) - 1}"
        t = n.output().type
        if isinstance(t, T.OtherType) and t.name == "ScalarType":
            return f"torch.{str(v).split('.')[-1]}"
        if isinstance(t, T.OtherType) and t.name == "Device":
            return f'torch.device("{v}")'
        return _literal(v)

    def call(self, n: Node) -> str:
        op = n.op
        fn = f"torch.{op.namespace + '.' if op.namespace else ''}{op.name}"
        parts = []
        for v, a in zip(n.inputs, op.args):
            s = self.name(v)
            parts.append(f"{a.name}={s}" if a.kwarg_only else s)
        return f"{fn}({', '.join(parts)})"

    def node(self, n: Node, lines: list, indent: str) -> None:
        k = n.kind
        if k == K.CONSTANT:
            self.inline[n.output()] = self.expr_of_constant(n)
            return
        if k == K.LIST_CONSTRUCT:
            self.inline[n.output()] = "[" + ", ".join(self.name(v) for v in n.inputs) + "]"
            return
        if k == K.GET_ATTR:
            base = self.name(n.inputs[0])
            attr = n["name"]
            text = f"{base}.{attr}" if attr.isidentifier() else f'getattr({base}, "{attr}")'
            if self.inlined(n):
                self.inline[n.output()] = text
            else:
                lines.append(f"{indent}{self.name(n.output())} = {text}")
            return
        if k == K.SET_ATTR:
            lines.append(f"{indent}{self.name(n.inputs[0])}.{n['name']} = {self.name(n.inputs[1])}")
            return
        if k == K.IF:
            self.if_(n, lines, indent)
            return
        if k == K.LOOP:
            self.loop(n, lines, indent)
            return
        if k == K.FORK:
            self.fork(n, lines, indent)
            return
        if k == K.TUPLE_CONSTRUCT:
            elems = [self.name(v) for v in n.inputs]
            rhs = "(" + ", ".join(elems) + ("," if len(elems) == 1 else "") + ")"
        elif k == K.DICT_CONSTRUCT:
            ins = [self.name(v) for v in n.inputs]
            rhs = "{" + ", ".join(f"{a}: {b}" for a, b in zip(ins[0::2], ins[1::2])) + "}"
        elif k in (K.LIST_UNPACK, K.TUPLE_UNPACK):
            rhs = self.name(n.inputs[0])
        elif k == K.RAISE_EXCEPTION:  # as TorchScript: ops.prim.RaiseException(msg, "builtins.ValueError")
            msg = self.name(n.inputs[0]) if n.inputs else "None"
            rhs = f'ops.prim.RaiseException({msg}, "{exception_name(raised_class(n))}")'
        elif k == K.CALL_METHOD:  # as TorchScript prints a submodule call: (self.conv1).forward(x, )
            args = "".join(f"{self.name(v)}, " for v in n.inputs[1:])
            rhs = f"({self.name(n.inputs[0])}).{n['name']}({args})"
        elif n.op is not None:
            rhs = self.call(n)
        elif not n.attributes and "::" in n.kind:  # interpreter built-ins: ops.aten.add_.t(...), ops.prim.Print(...)
            rhs = "ops." + n.kind.replace("::", ".") + "(" + ", ".join(self.name(v) for v in n.inputs) + ")"
        else:
            rhs = f"{n.kind}(" + ", ".join(self.name(v) for v in n.inputs) + ")"
        if setattr_of(n, self.assigned) is not None:
            self.inline[n.output()] = rhs
            return
        lhs = ", ".join(self.name(o) for o in n.outputs)
        lines.append(f"{indent}{lhs} = {rhs}" if lhs else f"{indent}{rhs}")

    def if_(self, n: Node, lines: list, indent: str) -> None:
        outs = [self.name(o) for o in n.outputs]
        then, other = n.blocks
        lines.append(f"{indent}if {self.name(n.inputs[0])}:")
        self.block(then, lines, indent + "  ", outs, then.outputs)
        if outs or not all(self.inlined(m) for m in other.nodes):
            lines.append(f"{indent}else:")
            self.block(other, lines, indent + "  ", outs, other.outputs)
        else:
            self.block(other, [], indent + "  ", [], [])  # only inlined nodes: learn their expressions

    def fork(self, n: Node, lines: list, indent: str) -> None:
        """A ``prim::fork`` prints as TorchScript prints it, a nested function and its ``fork``, except that the
        values the subgraph reads are its parameters, passed by the call (the subgraph's inputs are exactly the
        node's)::

            def __forked_function(x: Tensor) -> Tensor:
              return torch.mul(x, 3)
            fut = fork(__forked_function, x)
        """
        sub = _CodeWriter(n["Subgraph"], parent=self)
        name = FORKED_FUNCTION + (str(len(self.forks) - 1) if self.forks else "")
        self.forks[n] = (name, sub)
        self.used.add(name)
        lines.extend(indent + line for line in sub.function(name).splitlines())
        args = "".join(f", {self.name(v)}" for v in n.inputs)
        lines.append(f"{indent}{self.name(n.output())} = fork({name}{args})")

    def loop(self, n: Node, lines: list, indent: str) -> None:
        body = n.blocks[0]
        form = loop_form(n)
        outs = [self.name(o) for o in n.outputs]
        for o, v in zip(outs, n.inputs[2:]):
            lines.append(f"{indent}{o} = {self.name(v)}")
        for bi, o in zip(body.inputs[1:], outs):
            self.names[bi] = o
        if form == "for":
            targets, values = outs, body.outputs[1:]
        else:
            cond = self.fresh()
            lines.append(f"{indent}{cond} = {self.name(n.inputs[1])}")
            targets, values = [cond] + outs, body.outputs
        if form == "while":
            lines.append(f"{indent}while {cond}:")
        else:
            lines.append(f"{indent}for {self.name(body.inputs[0])} in range({self.name(n.inputs[0])}):")
        if form == "for-break":
            lines.append(f"{indent}  if not {cond}:")
            lines.append(f"{indent}    break")
        self.block(body, lines, indent + "  ", targets, values)

    def block(self, b: Block, lines: list, indent: str, targets: list, values: list) -> None:
        """The block's statements, then one assignment of ``values`` to ``targets`` unless they already match."""
        start = len(lines)
        for n in b.nodes:
            self.node(n, lines, indent)
        srcs = [self.name(v) for v in values]
        if srcs != targets:
            lines.append(f"{indent}{', '.join(targets)} = {', '.join(srcs)}")
        if len(lines) == start:
            lines.append(f"{indent}pass")

    def function(self, name: str, defaults: tuple = ()) -> str:
        """The graph as a ``def`` (see ``graph_to_code``)."""
        graph = self.graph
        params = []
        first_default = len(graph.inputs) - len(defaults)
        for i, v in enumerate(graph.inputs):
            n = self.name(v)
            default = f"={default_literal(defaults[i - first_default])}" if i >= first_default else ""
            params.append(n if isinstance(v.type, T.ModuleType) else f"{n}: {annotation(v.type)}{default}")
        lines: list[str] = []
        for node in graph.block.nodes:
            self.node(node, lines, "  ")
        outs = [self.name(v) for v in graph.outputs]
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        rtype = annotation(graph.outputs[0].type) if len(graph.outputs) == 1 else "Tuple"
        lines.append(f"  return {ret}")
        head = f"def {name}(" + ",\n    ".join(params) + f") -> {rtype}:"
        return head + "\n" + "\n".join(lines) + "\n"


def parameter_names(graph: Graph) -> list[str]:
    """The names ``graph_to_code`` gives the graph's inputs (``self``, ``x``, ``x_1``...)."""
    w = _CodeWriter(graph)
    return [w.name(v) for v in graph.inputs]


def default_literal(value) -> str:
    """A parameter's default as the ``def`` prints it (``=None``, ``=1``, ``=[1, 2]``); ValueError for a value that
    has no literal (a tensor)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, Tensor) or not (v is None or isinstance(v, (bool, int, float, str))) or \
                (isinstance(v, float) and not math.isfinite(v)):
            raise ValueError(f"the default value {v!r:.60} ({type(v).__name__}) has no literal in code")
    return _literal(value)


def graph_to_code(graph: Graph, name: str = "forward", defaults: tuple = ()) -> str:
    """The graph as a ``def``; the first input is ``self`` when it is a module. ``defaults`` are the default values
    of the last parameters, printed as TorchScript prints them: ``hx: Optional[Tensor]=None``."""
    return _CodeWriter(graph).function(name, defaults)
