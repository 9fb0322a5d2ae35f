"""The code parser's block statements: an ``if``/``else`` with its ``prim::If``, a ``for``/``while`` loop with its
``prim::Loop`` (initial-value assignments, the loop's form, its body), and the assignment that closes a block
(``a, b = x, y``, the block's outputs)."""

from __future__ import annotations

import ast

from ..ir.graph import Block, Node
from .code import loop_form
from .code_statements import CodeError
from .code_statements import dotted as _dotted
from .code_statements import head as _head
from .code_statements import pop as _pop
from .code_statements import where as _where


class BlockStatements:
    """Mixin of the code parser's rebuilder (which supplies ``env``, ``value``, ``walk``, ``rewire_input`` and
    ``inlined``)."""

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


def _is_break_unless(s: ast.stmt, cond: str) -> bool:
    """Whether ``s`` is ``if not <cond>: break``."""
    return isinstance(s, ast.If) and not s.orelse and len(s.body) == 1 and isinstance(s.body[0], ast.Break) \
        and isinstance(s.test, ast.UnaryOp) and isinstance(s.test.op, ast.Not) \
        and isinstance(s.test.operand, ast.Name) and s.test.operand.id == cond
