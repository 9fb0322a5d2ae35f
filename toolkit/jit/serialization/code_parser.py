"""Rebuilds an archive's computation from its readable ``.code`` text, parsed with ``ast`` (never executed).

The archive's JSON graph supplies what the code does not say (value types, debug names, source
locations, scopes, the constants a loop's form implies); the code decides what runs: which registry op
each statement calls, with which arguments, what each ``if``/``else`` block and loop body assigns, and
what is returned. Statements are matched in order with the graph's statement nodes (those the ``.code``
printer does not inline, as it prints the archived graph), block by block: an ``if`` statement with a
``prim::If`` and its two blocks, a loop's initial-value assignments and ``for``/``while`` statement with a
``prim::Loop`` and its body. A call the printer inlined is rewired from the expression written where its value
is used (``torch.add(torch.mul(x, 2), y)``, ``int(torch.sum(x))``, ``s[0]``).
So editing the code text (``torch.mul`` -> ``torch.add``, a different argument, ``range(3)`` ->
``range(5)``) changes the loaded graph, while names and constructs outside the allow-list (registry
ops as ``torch.<op>``, literals, lists, tuples, attribute reads of ``self``, ``CONSTANTS``, the
``if``/``for``/``while`` shapes the printer writes, ``ops.prim.RaiseException(msg, "builtins.ValueError")``
naming one of Python's builtin errors, literal parameter defaults, a ``prim::fork``'s nested ``def`` and its
``fut = fork(<def>, *values)``) are refused with ``CodeError`` naming the line. A forked function is rebuilt as a
graph of its own (its ``Subgraph``) and reads only its parameters.
Attribute assignments (``self.count = ...``, ``prim::SetAttr``) and the statements reading assigned
attributes (``count = self.count``) may name another attribute only when the module has it with a type
the value fits (``attributes`` tells, the way script mode checks the same assignment at compile time).

The text is bounded before anything walks it: Python's parser failing on it (an expression nested thousands of
levels deep exhausts its memory) and a syntax tree deeper than ``MAX_DEPTH`` levels raise ``CodeError``, with
the parser's own error as ``__cause__``, never a ``RecursionError`` or ``MemoryError`` from deeper in.
"""

from __future__ import annotations

import ast

from ...ops import registry as R
from ..frontend.script.refs import ExceptionRef
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from .archive_types import archive_exception
from .code import (
    FORKED_FUNCTION,
    _CodeWriter,
    equals_default,
    is_call,
    op_path,
    printed_path,
)
from .code_attributes import AttributeStatements, AttributeTypes
from .code_blocks import BlockStatements
from .code_statements import CodeError
from .code_statements import dotted as _dotted
from .code_statements import head as _head
from .code_statements import pop as _pop
from .code_statements import where as _where

__all__ = ["MAX_DEPTH", "CodeError", "rebuild_from_code"]

MAX_DEPTH = 100
"""The deepest syntax tree archive code may have (``def``, statements, nested blocks and expressions together);
the code the printer writes nests a few levels per ``if``/``for`` and per submodule in an attribute chain."""


def _ops_by_path() -> dict[str, list]:
    """Registry ops under the name the ``.code`` printer writes (``code.op_path``: ``torch.[namespace.]name``,
    ``ops.quantized.linear``)."""
    table: dict[str, list] = {}
    for op in R.all_ops():
        table.setdefault(op_path(op), []).append(op)
    return table


def _literal(e: ast.expr):
    """The Python value of a literal expression (numbers, bools, None, str, lists of them, ``-x``)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, (int, float, bool, str, type(None))):
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
            and isinstance(e.operand.value, (int, float)) and not isinstance(e.operand.value, bool):
        return -e.operand.value
    if isinstance(e, ast.List):
        return [_literal(x) for x in e.elts]
    if _is_annotated_empty_list(e):
        return []
    raise CodeError(f"unsupported expression {ast.unparse(e)!r} at {_where(e)}")


class _Rebuilder(AttributeStatements, BlockStatements):
    """Rebuilds one graph from one ``def``; a ``prim::fork``'s ``Subgraph`` is rebuilt by a rebuilder of its own from
    the nested ``def``, with the writer that printed it (``writer``: the subgraph was printed whole, before any
    rewiring, with the enclosing graph's node)."""

    def __init__(self, graph: Graph, tree: ast.Module | None, attributes: AttributeTypes | None = None,
                 writer: _CodeWriter | None = None, ops: dict | None = None):
        self.graph = graph
        self.tree = tree
        self.ops = _ops_by_path() if ops is None else ops
        self.env: dict[str, Value] = {}
        if writer is None:  # print the graph as archived, before any rewiring: which nodes the code writes as
            writer = _CodeWriter(graph)  # statements, which inside the expressions using them
            writer.function("forward")
        self.writer = writer
        self.attributes = attributes
        self.lines: dict[Node, int] = {}  # the code line each node came from (for the loaded graph's check)
        self.line = self.end_line = 1
        self.defaults: list = []  # the default values of the function's last parameters
        self.matched: set[Node] = set()  # the calls printed inline that the code's expressions have rewired

    def inlined(self, n: Node) -> bool:
        """Whether the printer wrote ``n`` inside the expressions using it (see ``_CodeWriter.inlined``)."""
        return self.writer.inlined(n)

    # -- expressions ------------------------------------------------------------------------------
    def value(self, e: ast.expr, old: Value | None, before: Node | Block) -> Value:
        """The value an expression denotes; ``old`` is the graph's value at that position.

        New constants and lists are inserted before the node ``before``, or at the end of a block.
        """
        if isinstance(e, ast.Name):
            if e.id not in self.env:
                raise CodeError(f"unknown name {e.id!r} at {_where(e)}")
            return self.env[e.id]
        text = ast.unparse(e)
        if old is not None and self.writer.inlined_call(old.node) and self.writes(old.node, e):
            self.expression(old.node, e, e)  # a call printed where it is used: rewire it from its expression
            self.matched.add(old.node)
            return old
        if old is not None and old.node is not None and self.inlined(old.node):
            if old.node.kind == K.LIST_CONSTRUCT and isinstance(e, ast.List) \
                    and len(e.elts) == len(old.node.inputs) and any(not _is_literal(x) for x in e.elts):
                lst = old.node
                new = [self.value(x, v, lst) for x, v in zip(e.elts, list(lst.inputs))]
                for i, v in enumerate(new):
                    if lst.inputs[i] is not v:
                        lst.replace_input(i, v)
                return old
            if old in self.writer.inline and _same(text, self.writer.inline[old]):
                return old
        dotted = _dotted(e)
        if dotted is not None and dotted.startswith("torch."):
            raise CodeError(f"unknown name {dotted!r} at {_where(e)}")
        if isinstance(e, ast.Call) and self.ops.get(_dotted(e.func) or ""):
            return self.new_call(e, old, before)
        if isinstance(e, (ast.Attribute, ast.Call, ast.Name)) and not _is_annotated_empty_list(e):
            raise CodeError(f"unsupported expression {text!r} at {_where(e)}")
        if isinstance(e, ast.List) and any(not _is_literal(x) for x in e.elts):
            items = [self.value(x, None, before) for x in e.elts]
            with self._inserting(before):
                n = self.graph.insert(K.LIST_CONSTRUCT, items)
            n.output().type = old.type if old is not None else n.output().type
            self.lines[n] = self.line
            return n.output()
        literal = _literal(e)
        with self._inserting(before):
            v = self.graph.insert_constant(literal)
        self.lines[v.node] = self.line
        return v

    def writes(self, node: Node, e: ast.expr) -> bool:
        """Whether ``e`` has the form the printer writes ``node`` in (a call for a call, an index for
        ``aten::__getitem__``...); else the code replaced the expression, and ``e`` is read as new."""
        if node.kind == K.TUPLE_CONSTRUCT:
            return isinstance(e, ast.Tuple)
        if node.kind == K.DICT_CONSTRUCT:
            return isinstance(e, ast.Dict)
        if node.op is None and K.facts(node.kind).printed_as == "[]":
            return isinstance(e, ast.Subscript)
        if not isinstance(e, ast.Call):
            return False
        path = _dotted(e.func) or ""
        if node.op is not None or (node.kind.startswith("aten::") and path.startswith("torch.")):
            return True
        return path in _builtin_paths(node.kind)

    def new_call(self, e: ast.Call, old: Value | None, before: Node | Block) -> Value:
        """A registry op call written where the graph has no call printed inline (the code moved or added one): a
        new node computing it, inserted before ``before`` (where the expression is evaluated), typed as the value it
        replaces (a tensor where the op returns one)."""
        op = self.ops[_dotted(e.func)][0]
        if op.n_outputs != 1:
            raise CodeError(f"{_dotted(e.func)} at {_where(e)} returns {op.n_outputs} values: only a call returning "
                            "one can stand inside an expression")
        with self._inserting(self._unevaluated_first(before) or before):
            n = self.graph.insert(op.qualified_name, (), 1, op)
        if op.returns_tensor:
            n.output().type = T.TENSOR
        elif old is not None:
            n.output().type = old.type
        self.lines[n] = self.line
        self.call(n, e, e)
        return n.output()

    def _unevaluated_first(self, user: Node | Block) -> Node | None:
        """The first node, in graph order, of the calls printed inline in ``user``'s inputs that the code has not yet
        matched: the graph runs them before ``user``, and the code evaluates them after the expression being read
        (its later arguments), so a call the code adds there goes before them, never after one of them."""
        pending: list[Node] = []
        stack = list(user.outputs if isinstance(user, Block) else user.inputs)
        while stack:
            n = stack.pop().node
            if n is not None and n.kind == K.LIST_CONSTRUCT and self.inlined(n):
                stack.extend(n.inputs)
            elif self.writer.inlined_call(n) and n not in self.matched:
                pending.append(n)
                stack.extend(n.inputs)
        block = user if isinstance(user, Block) else user.owning_block
        pending = [n for n in pending if n.owning_block is block]
        return min(pending, key=block.index) if pending else None

    def _inserting(self, before: Node | Block):
        if isinstance(before, Block):
            return self.graph.inserting_at_end(before)
        return self.graph.inserting_before(before)

    def rewire_input(self, node: Node, i: int, e: ast.expr) -> None:
        v = self.value(e, node.inputs[i], node)
        if node.inputs[i] is not v:
            node.replace_input(i, v)

    # -- simple statements ----------------------------------------------------------------------------
    def call(self, node: Node, stmt: ast.stmt, call: ast.Call) -> None:
        path = _dotted(call.func)
        cands = self.ops.get(path or "")
        if not cands:
            raise CodeError(f"unknown op {path or ast.unparse(call.func)!r} at {_where(call)}: only registry ops "
                            "written as torch.<op> can be loaded")
        kw = {k.arg: k.value for k in call.keywords}
        if None in kw:
            raise CodeError(f"unsupported **kwargs at {_where(call)}")
        fits = [op for op in cands if _fits(op, len(call.args), kw)]
        if not fits:
            raise CodeError(f"no overload of {path} takes these arguments at {_where(call)}")
        op = node.op if node.op in fits else fits[0]
        if len(node.outputs) != op.n_outputs and not (op.returns_list and len(node.outputs) == 1):
            raise CodeError(f"{path} at {_where(call)} returns {op.n_outputs} values, the graph expects "
                            f"{len(node.outputs)}")
        old_inputs = list(node.inputs)  # by position, also for another op: the calls printed inline in them
        new: list[Value] = []
        for i, a in enumerate(op.args):
            old = old_inputs[i] if i < len(old_inputs) else None
            if a.kwarg_only or i >= len(call.args):
                if a.name in kw:
                    new.append(self.value(kw[a.name], old, node))
                elif a.has_default:  # left out: the default (the graph's constant only where it holds it)
                    with self.graph.inserting_before(node):
                        new.append(old if node.op is op and old is not None and equals_default(old, a.default)
                                   else self.graph.insert_constant(a.default))
                    self.lines.setdefault(new[-1].node, self.line)
                else:
                    raise CodeError(f"{path} at {_where(call)}: missing argument {a.name!r}")
            else:
                new.append(self.value(call.args[i], old, node))
        for i in reversed(range(len(node.inputs))):
            node.remove_input(i)
        for v in new:
            node.add_input(v)
        node.kind, node.op = op.qualified_name, op

    def builtin(self, node: Node, e: ast.expr) -> bool:
        """An interpreter built-in written as the printer writes it (``torch.size(x, 0)``, ``int(a)``, ``s[0]``,
        ``ops.prim.NumToTensor(a)``; archives of earlier versions: ``ops.aten.add.int(a, 1)``): rewire it (its kind
        cannot change). False for another ``torch.<op>(...)`` in place of an ``aten::`` built-in (a registry op)."""
        if node.op is not None or not is_call(node):
            return False
        if K.facts(node.kind).printed_as == "[]":
            if not isinstance(e, ast.Subscript):
                raise CodeError(f"expected 'container[index]' for {node.kind} at {_where(e)}, got {ast.unparse(e)!r}")
            self.rewire(node, [e.value, e.slice])
            return True
        path = _dotted(e.func) if isinstance(e, ast.Call) else None
        if path in _builtin_paths(node.kind):
            if e.keywords:
                raise CodeError(f"{path} at {_where(e)} takes no keyword arguments")
            self.rewire(node, list(e.args))
            return True
        if path is not None and path.startswith("torch.") and node.kind.startswith("aten::"):
            return False
        raise CodeError(f"expected {printed_path(node.kind)}(...) for {node.kind} at {_where(e)}, got {path or ast.unparse(e)!r}")

    def raise_exception(self, node: Node, stmt: ast.stmt) -> None:
        """``ops.prim.RaiseException(msg, "builtins.ValueError")``: the message is a value (None: the exception
        gets no arguments), the class one of ``ARCHIVE_EXCEPTIONS``, named by a string literal."""
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and _dotted(call.func) == "ops.prim.RaiseException"
                and len(call.args) == 2 and not call.keywords):
            raise CodeError(f"expected 'ops.prim.RaiseException(message, \"builtins.<Error>\")' for "
                            f"prim::RaiseException at {_where(stmt)}, got {_head(stmt)!r}")
        msg, cls = call.args
        name = cls.value if isinstance(cls, ast.Constant) and isinstance(cls.value, str) else ast.unparse(cls)
        try:
            node["exception"] = ExceptionRef(archive_exception(name))
        except ValueError as e:
            raise CodeError(f"{e}, at {_where(cls)}") from None
        if node.inputs:
            self.rewire(node, [msg])
        elif not (isinstance(msg, ast.Constant) and msg.value is None):
            node.add_input(self.value(msg, None, node))

    def statement(self, node: Node, stmt: ast.stmt) -> None:
        k = node.kind
        if k == K.RAISE_EXCEPTION:
            self.raise_exception(node, stmt)
            return
        if not node.outputs:
            if not isinstance(stmt, ast.Expr):
                raise CodeError(f"{k} at {_where(stmt)} returns nothing to assign")
            self.expression(node, stmt.value, stmt)
            return
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            raise CodeError(f"expected an assignment for {k} at {_where(stmt)}, got {_head(stmt)!r}")
        self.expression(node, stmt.value, stmt)
        self.bind(stmt.targets[0], node.outputs)

    def expression(self, node: Node, e: ast.expr, stmt: ast.AST) -> None:
        """Rewire ``node`` to compute what the expression ``e`` (in ``stmt``) says."""
        if not self.builtin(node, e):
            self.right_hand_side(node, stmt, e)

    def right_hand_side(self, node: Node, stmt: ast.stmt, rhs: ast.expr) -> None:
        """Rewire ``node`` to compute what the assignment's right-hand side ``rhs`` says."""
        k = node.kind
        if node.op is not None or (isinstance(rhs, ast.Call) and k.startswith("aten::")):
            if not isinstance(rhs, ast.Call):
                raise CodeError(f"expected an op call for {k} at {_where(stmt)}, got {ast.unparse(rhs)!r}")
            self.call(node, stmt, rhs)
        elif k == K.TUPLE_CONSTRUCT and isinstance(rhs, ast.Tuple):
            self.rewire(node, rhs.elts)
        elif k == K.DICT_CONSTRUCT and isinstance(rhs, ast.Dict) and None not in rhs.keys:
            self.rewire(node, [x for kv in zip(rhs.keys, rhs.values) for x in kv])
        elif k in (K.LIST_UNPACK, K.TUPLE_UNPACK):
            self.rewire(node, [rhs])
        else:
            if isinstance(rhs, ast.Call):
                path = _dotted(rhs.func) or ast.unparse(rhs.func)
                raise CodeError(f"unknown op {path!r} at {_where(stmt)}: only registry ops written as "
                                "torch.<op> can be loaded")
            raise CodeError(f"unsupported statement {ast.unparse(stmt)!r} at {_where(stmt)}")

    def rewire(self, node: Node, exprs: list) -> None:
        if len(exprs) != len(node.inputs):
            raise CodeError(f"{node.kind} at {_where(exprs[0] if exprs else node)} takes {len(node.inputs)} "
                            f"values, the code gives {len(exprs)}")
        new = [self.value(e, v, node) for e, v in zip(exprs, list(node.inputs))]
        for i, v in enumerate(new):
            if node.inputs[i] is not v:
                node.replace_input(i, v)

    def bind(self, target: ast.expr, outs: list) -> None:
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        if len(names) != len(outs) or not all(isinstance(t, ast.Name) for t in names):
            raise CodeError(f"the assignment at {_where(target)} does not bind {len(outs)} name(s)")
        for t, v in zip(names, outs):
            self.env[t.id] = v

    # -- blocks -----------------------------------------------------------------------------------
    def walk(self, block: Block, stmts: list, owner: str) -> list:
        """Match the block's statement nodes with ``stmts`` (consumed in order); returns what is left."""
        if len(stmts) == 1 and isinstance(stmts[0], ast.Pass) and block is not self.graph.block:
            stmts.clear()
        for node in list(block.nodes):
            # a statement node comes from the next statement; an inlined one is written in it or a later one
            nxt = stmts[0] if stmts else None
            self.line = nxt.lineno if nxt is not None else self.end_line if block is self.graph.block else self.line
            self.lines[node] = self.line
            if self.inlined(node):
                continue
            if node.kind == K.IF:
                self.if_(node, stmts, owner)
            elif node.kind == K.LOOP:
                self.loop(node, stmts, owner)
            elif node.kind == K.FORK:
                self.fork(node, stmts, owner)
            elif node.blocks:
                raise CodeError(f"{node.kind} with nested blocks cannot be rebuilt from code")
            elif node.kind == K.SET_ATTR:
                self.setattr(node, stmts, owner)
            elif node.kind == K.GET_ATTR:
                self.getattr(node, _pop(stmts, owner, node.kind))
            else:
                self.statement(node, _pop(stmts, owner, node.kind))
        return stmts

    def fork(self, node: Node, stmts: list, owner: str) -> None:
        """A nested ``def`` (the node's ``Subgraph``, rebuilt from its body, reading only its parameters) and
        ``fut = fork(<that def>, *values)``, whose values the node passes to it."""
        fn = _pop(stmts, owner, node.kind)
        if not isinstance(fn, ast.FunctionDef):
            raise CodeError(f"expected 'def {FORKED_FUNCTION}(...):' for prim::fork at {_where(fn)}, "
                            f"got {_head(fn)!r}")
        stmt = _pop(stmts, owner, node.kind)
        call = stmt.value if isinstance(stmt, ast.Assign) else None
        if not (isinstance(call, ast.Call) and len(stmt.targets) == 1 and _dotted(call.func) == "fork"
                and call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == fn.name
                and not call.keywords):
            raise CodeError(f"expected 'name = fork({fn.name}, ...)' for prim::fork at {_where(stmt)}, "
                            f"got {_head(stmt)!r}")
        _, writer = self.writer.forks[node]
        sub = _Rebuilder(node["Subgraph"], None, None, writer, self.ops)
        sub.function(fn, nested=True)
        self.lines.update(sub.lines)
        self.line = stmt.lineno
        self.lines[node] = stmt.lineno
        self.rewire(node, call.args[1:])
        self.bind(stmt.targets[0], node.outputs)

    def run(self) -> None:
        fns = [s for s in self.tree.body if isinstance(s, ast.FunctionDef)]
        if len(self.tree.body) != 1 or len(fns) != 1:
            extra = [s for s in self.tree.body if s is not (fns[0] if fns else None)]
            raise CodeError("the code must be exactly one function definition"
                            + (f" (got {_head(extra[0])!r} at {_where(extra[0])})" if extra else ""))
        self.function(fns[0])

    def function(self, fn: ast.FunctionDef, nested: bool = False) -> None:
        """Rebuild the graph from ``fn``: its parameters are the graph's inputs, its body the graph's statements,
        its return the graph's outputs. A ``nested`` (forked) function takes no defaults."""
        if fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs:
            raise CodeError(f"unsupported function signature at {_where(fn)}")
        params = fn.args.args
        if len(params) != len(self.graph.inputs):
            raise CodeError(f"the code takes {len(params)} inputs, the graph {len(self.graph.inputs)}")
        if nested and fn.args.defaults:
            raise CodeError(f"the forked function {fn.name} at {_where(fn)} cannot have default values")
        self.defaults = [_default(e) for e in fn.args.defaults]
        for p, v in zip(params, self.graph.inputs):
            self.env[p.arg] = v
        body = list(fn.body)
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            last = body[-1] if body else fn
            raise CodeError(f"the code must end with a return statement (got {_head(last)!r} at {_where(last)})")
        ret = body.pop()
        self.end_line = ret.lineno
        rest = self.walk(self.graph.block, body, f"the code before the return at {_where(ret)}")
        if rest:
            raise CodeError(f"unexpected statement {_head(rest[0])!r} at {_where(rest[0])}")
        outs = ret.value.elts if isinstance(ret.value, ast.Tuple) and len(self.graph.outputs) != 1 \
            else [ret.value]
        if len(outs) != len(self.graph.outputs):
            raise CodeError(f"the code returns {len(outs)} values, the graph {len(self.graph.outputs)}")
        self.graph.block.outputs = [self.value(e, v, self.graph.block)
                                    for e, v in zip(outs, list(self.graph.outputs))]
        self.drop_unwritten_calls()

    def drop_unwritten_calls(self) -> None:
        """Remove the calls the printer inlined that the code no longer writes (an expression edited away): the code
        decides what runs."""
        returned = {id(v) for b in self.graph.all_blocks() for v in b.outputs}
        dropped = True
        while dropped:
            dropped = False
            for n in list(self.writer.inline_calls - self.writer.split):
                if n.owning_block is not None and not any(o.uses or id(o) in returned for o in n.outputs):
                    n.destroy()
                    self.lines.pop(n, None)
                    dropped = True


def _builtin_paths(kind: str) -> tuple[str, str]:
    """The names a built-in kind's call is read under: as the printer writes it (``printed_path``) and as archives of
    earlier versions wrote it (``ops.aten.add.int``)."""
    return printed_path(kind), "ops." + kind.replace("::", ".")


def _is_annotated_empty_list(e: ast.expr) -> bool:
    """``annotate(List[int], [])``: an empty list with its type, as the printer writes one."""
    return isinstance(e, ast.Call) and _dotted(e.func) == "annotate" and len(e.args) == 2 and not e.keywords \
        and isinstance(e.args[1], ast.List) and not e.args[1].elts


def _default(e: ast.expr):
    """A parameter's default value: a literal, or a tuple of literals."""
    if isinstance(e, ast.Tuple):
        return tuple(_literal(x) for x in e.elts)
    return _literal(e)


def _is_literal(e: ast.expr) -> bool:
    try:
        _literal(e)
    except CodeError:
        return False
    return True


def _same(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(a, mode="eval")) == ast.dump(ast.parse(b, mode="eval"))
    except SyntaxError:
        return False


def _fits(op, n_positional: int, kw: dict) -> bool:
    pos = [a for a in op.args if not a.kwarg_only]
    if n_positional > len(pos):
        return False
    names = {a.name for a in op.args[n_positional:]}
    if not set(kw) <= names:
        return False
    return all(a.has_default or a.name in kw for a in op.args[n_positional:])


def _parse(code: str) -> ast.Module:
    """The code's syntax tree, refused when Python cannot parse it or it nests deeper than ``MAX_DEPTH``."""
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as e:
        raise CodeError(f"the code does not parse ({e.msg} at line {e.lineno})") from e
    except (MemoryError, RecursionError, ValueError) as e:
        raise CodeError(f"the code does not parse: Python's parser failed with {type(e).__name__} (expressions "
                        f"nested far deeper than the {MAX_DEPTH} levels archive code may have do that)") from e
    stack = [(tree, 1, 1)]
    while stack:  # no recursion: the depth is what is being checked
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_DEPTH:
            raise CodeError(f"the code nests more than {MAX_DEPTH} levels deep at line {line}")
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))
    return tree


def signature_defaults(code: str) -> tuple:
    """The default values of the last parameters of the one function ``code`` defines (literals only), read
    without rebuilding anything: what an archive printed in an earlier code layout still gives."""
    fns = [s for s in _parse(code).body if isinstance(s, ast.FunctionDef)]
    if len(fns) != 1:
        raise CodeError("the code must be exactly one function definition")
    return tuple(_default(e) for e in fns[0].args.defaults)


def rebuild_from_code(graph: Graph, code: str, attributes: AttributeTypes | None = None,
                      lines: dict | None = None, defaults: list | None = None) -> Graph:
    """Rewire ``graph`` (decoded from the archive's JSON) so it computes what ``code`` says; returns it.

    ``graph`` must verify (``toolkit.jit.verify``) before. Raises ``CodeError`` naming the line for
    syntax errors, unknown names or ops, constructs outside the allow-list, and blocks that do not
    match the graph's (an ``if`` without its ``else``, a block that does not assign its outputs), and
    for code Python's parser fails on or that nests deeper than ``MAX_DEPTH`` levels.
    ``attributes`` gives the loaded module's attribute types, against which attribute assignments and
    reads are checked; without it they must name the graph's attributes. ``lines``, when given, is filled
    with the code line each node of the rebuilt graph comes from; ``defaults``, when given, with the default
    values of the function's last parameters (literals, as ``hx: Optional[Tensor]=None`` writes them).
    """
    rebuilder = _Rebuilder(graph, _parse(code), attributes)
    rebuilder.run()
    if lines is not None:
        lines.update(rebuilder.lines)
    if defaults is not None:
        defaults.extend(rebuilder.defaults)
    return graph
