"""Readable Python-like code for a graph, in the style of TorchScript's serialized ``forward``::

    def forward(self,
        x: Tensor,
        y: Tensor) -> Tensor:
      n = torch.size(x, 0)
      _0 = torch.add(torch.mul(torch.view(x, [n, -1]), 2), y)
      return _0

Calls print as TorchScript prints them: registry ops as ``torch.<op>(...)`` without the trailing arguments that equal
their schema's defaults (``torch.sum(x)``, ``torch.add(a, b)``), builtins as ``torch.size(x, 0)``, ``int(a)``,
``s[0]``, ``ops.prim.NumToTensor(a)`` (the printing form is the kind's ``printed_as``). Constants, lists and attribute
reads are inlined where they are used, and so is a call whose one unnamed output is used once, by a later node, when
printing it there keeps the order in which the graph runs its nodes (``inline_calls``, TorchScript's rule); an inlined
expression that grows to a long line is printed back as statements (``_0 = ...``), as TorchScript splits it. Values
are named as TorchScript names them: their debug names without the ``.N`` suffix, made unique (``x``, ``x0``), and
``_0``, ``_1``... for the others.
Control flow prints as Python, the way TorchScript prints it:
a ``prim::If`` is an ``if``/``else`` (``else: pass`` when empty) whose blocks end by assigning the node's
outputs, and a ``prim::Loop`` assigns its carried values' initial values to the
loop's names, then runs a ``for ... in range(n)`` (constant-true condition),
a ``while c`` (no trip count) or, with both, a ``for`` that ``break``s when the
condition turns false; its body ends by assigning the next values. A ``prim::SetAttr``
prints as an assignment, ``self.count = torch.add(count, 1)``; reads of an attribute some
``prim::SetAttr`` assigns print as statements (``count = self.count``), so each reads where the
graph does. A ``prim::RaiseException`` prints as TorchScript prints it, its message and then its class by name:
``ops.prim.RaiseException(_0, "builtins.ValueError")``. A ``prim::fork`` prints its ``Subgraph`` as a nested
function, then ``fut = fork(__forked_function, x)`` passing it the node's inputs. Archives store this text and
``code_parser`` parses it back.
"""

from __future__ import annotations

import keyword
import math
import re

from ...tensor import Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from ..ir.printer import format_constant
from .archive_types import PACKED_TYPES

MAX_TRIP_COUNT = 2 ** 63 - 1
"""The trip count of a loop without one (TorchScript's ``while`` loops carry ``INT64_MAX``)."""


def op_path(op) -> str:
    """How ``.code`` names a registry op, as TorchScript prints it: ``torch.[namespace.]name``, or
    ``ops.<library>.<name>`` for an op of another library (``quantized::linear_dynamic`` prints as
    ``ops.quantized.linear_dynamic``, an extension's ``extension::lltm`` as ``ops.extension.lltm``)."""
    if "::" in op.name:
        library, _, name = op.name.partition("::")
        return f"ops.{library}.{name}"
    return f"torch.{op.namespace + '.' if op.namespace else ''}{op.name}"


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


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quoted(s: str) -> str:
    """A str literal as TorchScript writes it, in double quotes (``repr`` where it holds characters beyond ASCII)."""
    if not all(" " <= c < "\x7f" or c in _ESCAPES for c in s):
        return repr(s)
    return '"' + "".join(_ESCAPES.get(c, c) for c in s) + '"'


def _literal(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return format_constant(v)
    if isinstance(v, str):
        return _quoted(v)
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
    """Whether ``n`` prints as one call, ``torch.<op>(...)`` or an interpreter built-in (``torch.size(x, 0)``,
    ``int(a)``, ``s[0]``, ``ops.prim.NumToTensor(a)``)."""
    return n.op is not None or (not K.facts(n.kind).printed_as_syntax and not n.attributes and "::" in n.kind)


def printed_path(kind: str) -> str:
    """The name a built-in kind's call prints with, as TorchScript prints it: ``aten::size`` -> ``torch.size``,
    ``aten::add.int`` -> ``torch.add`` (no overload), ``aten::Int`` -> ``int`` (its ``printed_as``),
    ``prim::NumToTensor`` -> ``ops.prim.NumToTensor``."""
    form = K.facts(kind).printed_as
    if form.endswith("()"):
        return form[:-2]
    ns, _, name = kind.partition("::")
    base = name.split(".")[0]
    return f"torch.{base}" if ns == "aten" else f"ops.{ns}.{base}"


def equals_default(v: Value, default) -> bool:
    """Whether ``v`` is a constant equal to a schema default (same kind of value: ``1`` is not ``True`` or ``1.``)."""
    known, value = _constant_value(v)
    if not known or isinstance(value, Tensor):
        return False
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return len(value) == len(default) and all(type(a) is type(b) and a == b for a, b in zip(value, default))
    return type(value) is type(default) and value == default


def necessary_args(n: Node) -> int:
    """How many of a registry op node's inputs its call prints: as TorchScript (``CalculateNecessaryArgs``), the
    trailing ones that are constants equal to their schema defaults are left out."""
    args = n.op.args
    keep = len(n.inputs)
    if keep > len(args):
        return keep
    while keep and args[keep - 1].has_default and equals_default(n.inputs[keep - 1], args[keep - 1].default):
        keep -= 1
    return keep


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


RESERVED_NAMES = frozenset(keyword.kwlist) | {
    "_", "aten", "attribute", "CONSTANTS", "fork", "getattr", "inf", "nan", "infj", "nanj", "ops", "__torch__",
    "uninitialized", "unchecked_cast"}
"""Names ``.code`` never gives a value (TorchScript's ``reserved_names``): Python's keywords and the names its code
reads."""


def name_base(debug_name: str) -> str:
    """The name a value's debug name gives it in code: without its ``.N`` suffix, other characters than letters,
    digits and ``_`` made ``_`` (TorchScript's ``debugNameBase`` and ``makeValidIdentifier``)."""
    m = re.fullmatch(r"(.*)\.(\d+)", debug_name, re.DOTALL)
    base = re.sub(r"[^A-Za-z0-9_]", "_", m.group(1) if m else debug_name)
    return "_" + base if not base or base[0].isdigit() else base


LONG_LINE = 40
"""An inlined expression whose text, with its indentation, is this long or longer is printed as statements instead
(TorchScript's ``isLongLine``)."""


def _is_expression(n: Node) -> bool:
    """Whether ``n`` prints as an expression that can stand inside another: a call (a submodule's too), a tuple or a
    dict."""
    return n.kind in (K.TUPLE_CONSTRUCT, K.DICT_CONSTRUCT, K.CALL_METHOD) or (is_call(n) and n.kind != "aten::isinstance")


class _CodeWriter:
    """Prints one graph; a ``prim::fork``'s ``Subgraph`` gets a writer of its own (``parent`` is the enclosing one),
    sharing the tensor constants and the numbering of the forked functions.

    ``inline_calls`` are the calls printed inside the expression that uses them, found before printing as
    TorchScript finds them: walking each node's inputs right to left while scanning the nodes before it backward
    (passing over constants, lists and attribute reads), a call is inlined where its output is the next one the
    walk expects, so printing it there evaluates it exactly where the graph does, never across another node.
    ``split`` are those printed back as statements because their expression grew too long.
    """

    def __init__(self, graph: Graph, parent: _CodeWriter | None = None, level: int = 0):
        self.graph = graph
        self.names: dict[Value, str] = {}
        self.inline: dict[Value, str] = {}
        self.used: set[str] = set()
        self.next_id: dict[str, int] = {}
        self.level = level  # how deep the function's ``def`` is nested (a forked function's)
        self.constants: list = [] if parent is None else parent.constants
        self.forks: dict = {} if parent is None else parent.forks  # prim::fork -> (function name, its writer)
        self.assigned = assigned_attributes(graph)
        self.returned: dict[Value, list] = {}  # value -> [(block, index)] of the block outputs it is
        for b in graph.all_blocks():
            for i, v in enumerate(b.outputs):
                self.returned.setdefault(v, []).append((b, i))
        self.inline_calls: set[Node] = set()
        self._position: dict[Node, int] = {}
        self.split: set[Node] = set()
        self.split_seen: dict = {}  # user (node or block) -> the last input offset split long inlines were looked for
        self._scan_block(graph.block)

    # -- which calls print inline --------------------------------------------------------------------------------
    def use_of(self, v: Value) -> tuple | None:
        """``(user, offset)`` of ``v``'s one use (a block output's user is the block), or None unless exactly one."""
        uses = [(u.user, u.offset) for u in v.uses] + self.returned.get(v, [])
        return uses[0] if len(uses) == 1 else None

    def _can_inline(self, v: Value) -> bool:
        n = v.node
        if len(n.outputs) != 1 or n.blocks or not _is_expression(n):
            return False
        use = self.use_of(v)
        if use is None:
            return False
        user, offset = use
        if isinstance(user, Block):
            return True  # returned (or a block's closing assignment): written there even when named
        if v.has_debug_name() or user.kind == K.FORK:
            return False
        if user.kind == K.LOOP:  # only the trip count of a for and the condition of a while print where read
            return offset == {"for": 0, "while": 1}.get(loop_form(user), -1)
        return True

    def _previous(self, b: Block, i: int) -> Node | None:
        """The last node before position ``i`` of ``b`` that is not passed over: the scan for inlinable calls passes
        over the nodes that always print inside the expressions using them (``prints_inline``: a constant, a list, an
        attribute read), as TorchScript's passes over constants."""
        nodes = b.nodes
        i -= 1
        while i >= 0 and prints_inline(nodes[i], self.assigned):
            i -= 1
        return nodes[i] if i >= 0 else None

    def _scan_block(self, b: Block) -> None:
        self._position.update((n, i) for i, n in enumerate(b.nodes))
        point = self._previous(b, len(b.nodes))
        for v in reversed(b.outputs):
            point = self._scan_value(point, v)
        for n in reversed(b.nodes):
            if n not in self.inline_calls and not prints_inline(n, self.assigned):
                self._scan_node(n)

    def _scan_node(self, n: Node) -> Node | None:
        for b in n.blocks:
            self._scan_block(b)
        point = self._previous(n.owning_block, self._position[n])
        for v in reversed(n.inputs):
            point = self._scan_value(point, v)
        return point

    def _scan_value(self, point: Node | None, v: Value) -> Node | None:
        m = v.node
        if m is None:
            return point
        if m is point and self._can_inline(v):
            point = self._scan_node(m)
            self.inline_calls.add(m)
        elif m.kind == K.LIST_CONSTRUCT and m.owning_block is not None and self.use_of(v) is not None:
            for e in reversed(m.inputs):  # a list used once prints where it is used: so may its elements
                point = self._scan_value(point, e)
        return point

    def inlined(self, n: Node) -> bool:
        """Whether ``n`` prints inside the expressions that use it rather than as a statement."""
        return prints_inline(n, self.assigned) or self.inlined_call(n)

    def inlined_call(self, n: Node) -> bool:
        """Whether ``n`` is a call printed inside the expression using it (inlined, and not split back out)."""
        return n in self.inline_calls and n not in self.split

    # -- long inlined expressions ----------------------------------------------------------------------------------
    def _split_long(self, v: Value, lines: list, indent: str) -> None:
        """Print ``v``'s expression as a statement, and with it every inlined expression evaluated before it in the
        expressions around it (else they would run after it), as TorchScript's ``splitLongInlines``."""
        todo: list = []
        user, offset = self.use_of(v)
        self._long_inlines(user, offset, todo)
        for w in reversed(todo):
            text = self.inline.pop(w)
            self.split.add(w.node)
            lines.append(f"{indent}{self.name(w)} = {text}")

    def _long_inlines(self, user, offset: int, todo: list) -> None:
        seen = self.split_seen.get(user)
        inputs = user.outputs if isinstance(user, Block) else user.inputs
        for i in range(offset, -1 if seen is None else seen, -1):
            self._inlined_in(inputs[i], todo)
        self.split_seen[user] = offset
        if seen is None and isinstance(user, Node) and (user in self.inline_calls or user.kind == K.LIST_CONSTRUCT):
            use = self.use_of(user.output())
            if use is not None:
                self._long_inlines(use[0], use[1] - 1, todo)

    def _inlined_in(self, v: Value, todo: list) -> None:
        """Add the inlined calls ``v`` is (or, for a list, holds), last first, to ``todo``."""
        n = v.node
        if n is not None and n in self.inline_calls and v in self.inline:
            todo.append(v)
        elif n is not None and n.kind == K.LIST_CONSTRUCT and self.use_of(v) is not None:
            for e in reversed(n.inputs):
                self._inlined_in(e, todo)

    # -- names and expressions -------------------------------------------------------------------------------------
    def gen_name(self, candidate: str) -> str:
        """``candidate``, or when it is taken or reserved ``candidate0``, ``candidate1``... (TorchScript's
        ``genName``)."""
        name = candidate
        while name in self.used or name in RESERVED_NAMES:
            k = self.next_id.get(name, 0)
            self.next_id[name] = k + 1
            name = f"{candidate}{k}"
        self.used.add(name)
        return name

    def fresh(self) -> str:
        """A temporary's name: ``_0``, ``_1``..."""
        return self.gen_name("_")

    def name(self, v: Value) -> str:
        """How ``v`` is written: its inlined expression, or the name it was given when first written (its debug name
        without the ``.N`` suffix, made unique, as TorchScript names it: ``x.1`` -> ``x``, then ``x0``)."""
        if v in self.inline:
            return self.inline[v]
        n = self.names.get(v)
        if n is None:
            n = self.gen_name(name_base(v.debug_name) if v.has_debug_name() else "_")
            self.names[v] = n
        return n

    def expr_of_constant(self, n: Node) -> str:
        v = n.attributes.get("value")
        if isinstance(v, (Tensor, *PACKED_TYPES.values())):  # kept with the archive's data
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
        fn = op_path(op)
        parts = []
        for v, a in zip(n.inputs[:necessary_args(n)], op.args):
            s = self.name(v)
            parts.append(f"{a.name}={s}" if a.kwarg_only else s)
        return f"{fn}({', '.join(parts)})"

    def builtin(self, n: Node) -> str:
        """An interpreter built-in's call, as TorchScript prints it (``printed_path``; ``s[0]`` for an index)."""
        args = [self.name(v) for v in n.inputs]
        if K.facts(n.kind).printed_as == "[]":
            c = args[0] if args[0].isidentifier() else f"({args[0]})"
            return f"{c}[{args[1]}]"
        return f"{printed_path(n.kind)}({', '.join(args)})"

    def node(self, n: Node, lines: list, indent: str) -> None:
        k = n.kind
        if k == K.CONSTANT:
            self.inline[n.output()] = self.expr_of_constant(n)
            return
        if k == K.LIST_CONSTRUCT:  # an empty list with its type, as TorchScript: annotate(List[int], [])
            items = "[" + ", ".join(self.name(v) for v in n.inputs) + "]"
            self.inline[n.output()] = items if n.inputs else f"annotate({annotation(n.output().type)}, [])"
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
        elif is_call(n):  # interpreter built-ins: torch.size(x, 0), int(a), s[0], ops.prim.NumToTensor(a)
            rhs = self.builtin(n)
        else:
            rhs = f"{n.kind}(" + ", ".join(self.name(v) for v in n.inputs) + ")"
        if n in self.inline_calls:
            self.inline[n.output()] = rhs
            if len(rhs) + len(indent) + 2 * self.level >= LONG_LINE:
                self._split_long(n.output(), lines, indent)
            return
        lhs = ", ".join(self.name(o) for o in n.outputs)
        if k in (K.LIST_UNPACK, K.TUPLE_UNPACK):  # as TorchScript: the trailing comma unpacks even one value
            lhs += ","
        lines.append(f"{indent}{lhs} = {rhs}" if lhs else f"{indent}{rhs}")

    def if_(self, n: Node, lines: list, indent: str) -> None:
        outs = [self.name(o) for o in n.outputs]
        then, other = n.blocks
        lines.append(f"{indent}if {self.name(n.inputs[0])}:")
        self.block(then, lines, indent + "  ", outs, then.outputs)
        lines.append(f"{indent}else:")  # as TorchScript, also when empty: ``else: pass``
        self.block(other, lines, indent + "  ", outs, other.outputs)

    def fork(self, n: Node, lines: list, indent: str) -> None:
        """A ``prim::fork`` prints as TorchScript prints it, a nested function and its ``fork``, except that the
        values the subgraph reads are its parameters, passed by the call (the subgraph's inputs are exactly the
        node's)::

            def __forked_function(x: Tensor) -> Tensor:
              return torch.mul(x, 3)
            fut = fork(__forked_function, x)
        """
        sub = _CodeWriter(n["Subgraph"], parent=self, level=self.level + len(indent) // 2)
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
