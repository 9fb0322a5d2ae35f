"""Rebuilds an archive's computation from its readable ``.code`` text, parsed with ``ast`` (never executed).

The archive's JSON graph supplies what the code does not say (value types, debug names, source
locations, scopes, the constants a loop's form implies); the code decides what runs: which registry op
each statement calls, with which arguments, what each ``if``/``else`` block and loop body assigns, and
what is returned. Statements are matched in order with the graph's statement nodes (those the ``.code``
printer does not inline), block by block: an ``if`` statement with a ``prim::If`` and its two blocks, a
loop's initial-value assignments and ``for``/``while`` statement with a ``prim::Loop`` and its body.
So editing the code text (``torch.mul`` -> ``torch.add``, a different argument, ``range(3)`` ->
``range(5)``) changes the loaded graph, while names and constructs outside the allow-list (registry
ops as ``torch.<op>``, literals, lists, tuples, attribute reads of ``self``, ``CONSTANTS``, the
``if``/``for``/``while`` shapes the printer writes, ``ops.prim.RaiseException(msg, "builtins.ValueError")``
naming one of Python's builtin errors, literal parameter defaults) are refused with ``CodeError`` naming the line.
Attribute assignments (``self.count = ...``, ``prim::SetAttr``) and the statements reading assigned
attributes (``count = self.count``) may name another attribute only when the module has it with a type
the value fits (``attributes`` tells, the way script mode checks the same assignment at compile time).

The text is bounded before anything walks it: Python's parser failing on it (an expression nested thousands of
levels deep exhausts its memory) and a syntax tree deeper than ``MAX_DEPTH`` levels raise ``CodeError``, with
the parser's own error as ``__cause__``, never a ``RecursionError`` or ``MemoryError`` from deeper in.
"""

from __future__ import annotations

import ast

from ..ops import registry as R
from .archive_types import archive_exception
from .code import _CodeWriter, assigned_attributes, loop_form, setattr_of
from .code_attributes import AttributeStatements, AttributeTypes
from .code_statements import CodeError
from .code_statements import head as _head
from .code_statements import pop as _pop
from .code_statements import where as _where
from .ir import Block, Graph, Node, Value
from .script.compiler import ExceptionRef

__all__ = ["MAX_DEPTH", "CodeError", "rebuild_from_code"]

MAX_DEPTH = 100
"""The deepest syntax tree archive code may have (``def``, statements, nested blocks and expressions together);
the code the printer writes nests a few levels per ``if``/``for`` and per submodule in an attribute chain."""


def _ops_by_path() -> dict[str, list]:
    """Registry ops under the name the ``.code`` printer writes: ``torch.[namespace.]name``."""
    table: dict[str, list] = {}
    for op in R.all_ops():
        path = f"torch.{op.namespace + '.' if op.namespace else ''}{op.name}"
        table.setdefault(path, []).append(op)
    return table


def _dotted(e: ast.expr) -> str | None:
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        base = _dotted(e.value)
        return None if base is None else f"{base}.{e.attr}"
    return None


def _literal(e: ast.expr):
    """The Python value of a literal expression (numbers, bools, None, str, lists of them, ``-x``)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, (int, float, bool, str, type(None))):
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
            and isinstance(e.operand.value, (int, float)) and not isinstance(e.operand.value, bool):
        return -e.operand.value
    if isinstance(e, ast.List):
        return [_literal(x) for x in e.elts]
    raise CodeError(f"unsupported expression {ast.unparse(e)!r} at {_where(e)}")


class _Rebuilder(AttributeStatements):
    def __init__(self, graph: Graph, tree: ast.Module, attributes: AttributeTypes | None = None):
        self.graph = graph
        self.tree = tree
        self.ops = _ops_by_path()
        self.env: dict[str, Value] = {}
        self.writer = _CodeWriter(graph)
        self.writer_lines: list = []
        self.assigned = assigned_attributes(graph)  # as the printer saw the graph, before any rewiring
        self.attributes = attributes
        self.pending: tuple | None = None  # (statement, value) of a call printed as the next SetAttr's value
        self.lines: dict[Node, int] = {}  # the code line each node came from (for the loaded graph's check)
        self.line = self.end_line = 1
        self.defaults: list = []  # the default values of the function's last parameters

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
        if old is not None and old.node is not None and self.inlined(old.node):
            if old.node.kind == "prim::ListConstruct" and isinstance(e, ast.List) \
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
        if isinstance(e, (ast.Attribute, ast.Call, ast.Name)):
            raise CodeError(f"unsupported expression {text!r} at {_where(e)}")
        if isinstance(e, ast.List) and any(not _is_literal(x) for x in e.elts):
            items = [self.value(x, None, before) for x in e.elts]
            with self._inserting(before):
                n = self.graph.insert("prim::ListConstruct", items)
            n.output().type = old.type if old is not None else n.output().type
            self.lines[n] = self.line
            return n.output()
        literal = _literal(e)
        with self._inserting(before):
            v = self.graph.insert_constant(literal)
        self.lines[v.node] = self.line
        return v

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
        old_inputs = list(node.inputs) if node.op is op else []
        new: list[Value] = []
        for i, a in enumerate(op.args):
            old = old_inputs[i] if i < len(old_inputs) else None
            if a.kwarg_only or i >= len(call.args):
                if a.name in kw:
                    new.append(self.value(kw[a.name], old, node))
                elif a.has_default:
                    with self.graph.inserting_before(node):
                        new.append(old if old is not None and old.node is not None and
                                   old.node.kind == "prim::Constant" else self.graph.insert_constant(a.default))
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

    def builtin(self, node: Node, stmt: ast.stmt, bind: bool = True) -> bool:
        """An interpreter built-in written ``ops.aten.add_.t(...)``: rewire it (its kind cannot change)."""
        call = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
        path = _dotted(call.func) if isinstance(call, ast.Call) else None
        if node.op is not None or path is None or not path.startswith("ops."):
            return False
        ns, _, name = path[4:].partition(".")
        kind = f"{ns}::{name}"
        if kind != node.kind or call.keywords:
            raise CodeError(f"expected {node.kind} at {_where(stmt)}, got {path!r}")
        self.rewire(node, list(call.args))
        if not bind:
            return True
        if node.outputs:
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                raise CodeError(f"expected an assignment for {node.kind} at {_where(stmt)}")
            self.bind(stmt.targets[0], node.outputs)
        elif not isinstance(stmt, ast.Expr):
            raise CodeError(f"{node.kind} at {_where(stmt)} returns nothing to assign")
        return True

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
        if k == "prim::RaiseException":
            self.raise_exception(node, stmt)
            return
        if self.builtin(node, stmt):
            return
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            raise CodeError(f"expected an assignment for {k} at {_where(stmt)}, got {_head(stmt)!r}")
        self.right_hand_side(node, stmt, stmt.value)
        self.bind(stmt.targets[0], node.outputs)

    def right_hand_side(self, node: Node, stmt: ast.stmt, rhs: ast.expr) -> None:
        """Rewire ``node`` to compute what the assignment's right-hand side ``rhs`` says."""
        k = node.kind
        if node.op is not None or (isinstance(rhs, ast.Call) and k.startswith("aten::")):
            if not isinstance(rhs, ast.Call):
                raise CodeError(f"expected an op call for {k} at {_where(stmt)}, got {ast.unparse(rhs)!r}")
            self.call(node, stmt, rhs)
        elif k == "prim::TupleConstruct" and isinstance(rhs, ast.Tuple):
            self.rewire(node, rhs.elts)
        elif k == "prim::DictConstruct" and isinstance(rhs, ast.Dict) and None not in rhs.keys:
            self.rewire(node, [x for kv in zip(rhs.keys, rhs.values) for x in kv])
        elif k in ("prim::ListUnpack", "prim::TupleUnpack") and isinstance(rhs, ast.Name):
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
            if block is self.graph.block:
                self.writer.node(node, self.writer_lines, "  ")  # what the printer inlines, to recognize it
            # a statement node comes from the next statement; an inlined one is written in it or a later one
            nxt = self.pending[0] if self.pending is not None and node.kind == "prim::SetAttr" else \
                stmts[0] if stmts else None
            self.line = nxt.lineno if nxt is not None else self.end_line if block is self.graph.block else self.line
            self.lines[node] = self.line
            if self.inlined(node):
                continue
            if node.kind == "prim::If":
                self.if_(node, stmts, owner)
            elif node.kind == "prim::Loop":
                self.loop(node, stmts, owner)
            elif node.blocks:
                raise CodeError(f"{node.kind} with nested blocks cannot be rebuilt from code")
            elif node.kind == "prim::SetAttr":
                self.setattr(node, stmts, owner)
            elif node.kind == "prim::GetAttr":
                self.getattr(node, _pop(stmts, owner, node.kind))
            elif setattr_of(node, self.assigned) is not None:
                self.call_into_setattr(node, _pop(stmts, owner, node.kind))
            else:
                self.statement(node, _pop(stmts, owner, node.kind))
        return stmts

    def assign_outputs(self, block: Block, rest: list, targets: list | None, values: list, owner: str,
                       what: str) -> list[str]:
        """Match the block's closing assignment (``a, b = x, y``) with ``values`` (positions in ``block.outputs``).

        ``targets`` are the names the assignment must bind (None: any names, as long as there is one per value).
        """
        if len(rest) > 1 or (rest and not values):
            raise CodeError(f"unexpected statement {_head(rest[0])!r} at {_where(rest[0])}")
        n = len(values)
        what += f" ({', '.join(targets) if targets is not None else f'{n} name(s)'})"
        if not rest:
            raise CodeError(f"{owner} does not assign {what} at its end")
        stmt = rest[0]
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            raise CodeError(f"{owner} must end by assigning {what}, got {_head(stmt)!r} at {_where(stmt)}")
        lhs, rhs = stmt.targets[0], stmt.value
        names = lhs.elts if n > 1 and isinstance(lhs, ast.Tuple) else [lhs]
        exprs = rhs.elts if n > 1 and isinstance(rhs, ast.Tuple) else [rhs]
        got = [t.id if isinstance(t, ast.Name) else None for t in names]
        if len(names) != n or len(exprs) != n or None in got or (targets is not None and got != targets):
            raise CodeError(f"{owner} must end by assigning {what}, got {_head(stmt)!r} at {_where(stmt)}")
        outs = list(block.outputs)
        for e, i in zip(exprs, values):
            outs[i] = self.value(e, block.outputs[i], block)
        block.outputs = outs
        return got

    def if_(self, node: Node, stmts: list, owner: str) -> None:
        stmt = _pop(stmts, owner, node.kind)
        if not isinstance(stmt, ast.If):
            raise CodeError(f"expected an if statement for prim::If at {_where(stmt)}, got {_head(stmt)!r}")
        self.rewire_input(node, 0, stmt.test)
        n = len(node.outputs)
        what = f"the {n} output(s) of prim::If"
        names = []
        for i, (b, body) in enumerate(zip(node.blocks, (stmt.body, stmt.orelse))):
            where = f"the {'else' if i else 'if'} block of the if at {_where(stmt)}"
            if i and not body:
                if n or not all(self.inlined(m) for m in b.nodes):
                    raise CodeError(f"the if at {_where(stmt)} has no else block, but prim::If "
                                    + (f"has {n} output(s)" if n else "has statements in its second block"))
                continue
            saved = self.env
            self.env = dict(saved)
            try:
                rest = self.walk(b, list(body), where)
                if n:
                    names.append(self.assign_outputs(b, rest, names[0] if names else None, list(range(n)), where,
                                                     what))
                elif rest:
                    raise CodeError(f"unexpected statement {_head(rest[0])!r} at {_where(rest[0])}")
            finally:
                self.env = saved
        for name, v in zip(names[0] if names else [], node.outputs):
            self.env[name] = v

    def loop(self, node: Node, stmts: list, owner: str) -> None:
        form = loop_form(node)
        body = node.blocks[0]
        names = []
        for i in range(len(node.outputs)):
            s = _pop(stmts, owner, node.kind)
            names.append(self.simple_assign(s, "the initial value of a loop-carried value"))
            self.rewire_input(node, 2 + i, s.value)
        cond = None
        if form != "for":
            s = _pop(stmts, owner, node.kind)
            cond = self.simple_assign(s, "the loop's condition")
            self.rewire_input(node, 1, s.value)
        s = _pop(stmts, owner, node.kind)
        bound = dict(zip(names, body.inputs[1:]))
        if form == "while":
            if not isinstance(s, ast.While) or s.orelse:
                raise CodeError(f"expected 'while {cond}:' for prim::Loop at {_where(s)}, got {_head(s)!r}")
            if not (isinstance(s.test, ast.Name) and s.test.id == cond):
                raise CodeError(f"the while loop at {_where(s)} must test {cond!r}, got {ast.unparse(s.test)!r}")
        else:
            it = getattr(s, "iter", None)
            if not isinstance(s, ast.For) or s.orelse or not isinstance(s.target, ast.Name) \
                    or not isinstance(it, ast.Call) or _dotted(it.func) != "range" or len(it.args) != 1 \
                    or it.keywords:
                raise CodeError(f"expected 'for ... in range(...):' for prim::Loop at {_where(s)}, got {_head(s)!r}")
            self.rewire_input(node, 0, it.args[0])
            bound[s.target.id] = body.inputs[0]
        where = f"the body of the loop at {_where(s)}"
        stmts_in = list(s.body)
        if form == "for-break":
            first = stmts_in.pop(0) if stmts_in else s
            if not _is_break_unless(first, cond):
                raise CodeError(f"{where} must start with 'if not {cond}: break', got {_head(first)!r}")
        saved = self.env
        self.env = {**saved, **bound}
        try:
            rest = self.walk(body, stmts_in, where)
            if form == "for":
                unchanged = all(o is i for o, i in zip(body.outputs[1:], body.inputs[1:]))
                if rest or not unchanged:  # the printer leaves the assignment out only when nothing changes
                    self.assign_outputs(body, rest, names, list(range(1, len(body.outputs))), where,
                                        "the next carried values")
            else:
                self.assign_outputs(body, rest, [cond] + names, list(range(len(body.outputs))), where,
                                    "the next condition and carried values")
        finally:
            self.env = saved
        for name, v in zip(names, node.outputs):
            self.env[name] = v

    def simple_assign(self, s: ast.stmt, what: str) -> str:
        if not isinstance(s, ast.Assign) or len(s.targets) != 1 or not isinstance(s.targets[0], ast.Name):
            raise CodeError(f"expected 'name = value' for {what} of prim::Loop at {_where(s)}, got {_head(s)!r}")
        return s.targets[0].id

    # -- the function ------------------------------------------------------------------------------
    def run(self) -> None:
        fns = [s for s in self.tree.body if isinstance(s, ast.FunctionDef)]
        if len(self.tree.body) != 1 or len(fns) != 1:
            extra = [s for s in self.tree.body if s is not (fns[0] if fns else None)]
            raise CodeError("the code must be exactly one function definition"
                            + (f" (got {_head(extra[0])!r} at {_where(extra[0])})" if extra else ""))
        fn = fns[0]
        if fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs:
            raise CodeError(f"unsupported function signature at {_where(fn)}")
        params = fn.args.args
        if len(params) != len(self.graph.inputs):
            raise CodeError(f"the code takes {len(params)} inputs, the graph {len(self.graph.inputs)}")
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


def _is_break_unless(s: ast.stmt, cond: str) -> bool:
    """Whether ``s`` is ``if not <cond>: break``."""
    return isinstance(s, ast.If) and not s.orelse and len(s.body) == 1 and isinstance(s.body[0], ast.Break) \
        and isinstance(s.test, ast.UnaryOp) and isinstance(s.test.op, ast.Not) \
        and isinstance(s.test.operand, ast.Name) and s.test.operand.id == cond


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
