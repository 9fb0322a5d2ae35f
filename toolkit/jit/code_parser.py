"""Rebuilds an archive's computation from its readable ``.code`` text, parsed with ``ast`` (never executed).

The archive's JSON graph supplies what the code does not say (value types, debug names, source
locations, scopes, nested control-flow blocks); the code decides what runs: which registry op each
statement calls, with which arguments, and what is returned. Statements are matched in order with
the graph's statement nodes (those the ``.code`` printer does not inline), so editing the code text
(``torch.mul`` -> ``torch.add``, a different argument) changes the loaded graph, while names and
constructs outside the allow-list (registry ops as ``torch.<op>``, literals, lists, tuples,
attribute reads of ``self``, ``CONSTANTS``) are refused with ``CodeError``.
"""

from __future__ import annotations

import ast

from ..ops import registry as R
from .code import _CodeWriter
from .ir import Graph, Node, Value

_INLINED = frozenset({"prim::Constant", "prim::ListConstruct", "prim::GetAttr"})


class CodeError(ValueError):
    """The code text names something outside the allow-list, or does not fit the archive's graph."""


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


def _where(e: ast.AST) -> str:
    return f"line {getattr(e, 'lineno', '?')}"


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


class _Rebuilder:
    def __init__(self, graph: Graph, tree: ast.Module):
        self.graph = graph
        self.tree = tree
        self.ops = _ops_by_path()
        self.env: dict[str, Value] = {}
        self.writer = _CodeWriter(graph)
        self.writer_lines: list = []

    # -- expressions ------------------------------------------------------------------------------
    def value(self, e: ast.expr, old: Value | None, before: Node) -> Value:
        """The value an argument expression denotes; ``old`` is the graph's value at that position."""
        if isinstance(e, ast.Name):
            if e.id not in self.env:
                raise CodeError(f"unknown name {e.id!r} at {_where(e)}")
            return self.env[e.id]
        text = ast.unparse(e)
        if old is not None and old.node is not None and old.node.kind in _INLINED:
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
            with self.graph.inserting_before(before):
                n = self.graph.insert("prim::ListConstruct", items)
            n.output().type = old.type if old is not None else n.output().type
            return n.output()
        with self.graph.inserting_before(before):
            return self.graph.insert_constant(_literal(e))

    # -- statements -------------------------------------------------------------------------------
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
                else:
                    raise CodeError(f"{path} at {_where(call)}: missing argument {a.name!r}")
            else:
                new.append(self.value(call.args[i], old, node))
        for i in reversed(range(len(node.inputs))):
            node.remove_input(i)
        for v in new:
            node.add_input(v)
        node.kind, node.op = op.qualified_name, op

    def statement(self, node: Node, stmt: ast.stmt) -> None:
        k = node.kind
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            raise CodeError(f"expected an assignment for {k} at {_where(stmt)}, got {ast.unparse(stmt)!r}")
        rhs = stmt.value
        if node.op is not None or (isinstance(rhs, ast.Call) and k.startswith("aten::")):
            if not isinstance(rhs, ast.Call):
                raise CodeError(f"expected an op call at {_where(stmt)}, got {ast.unparse(rhs)!r}")
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
        self.bind(stmt.targets[0], node.outputs)

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

    def run(self) -> None:
        fns = [s for s in self.tree.body if isinstance(s, ast.FunctionDef)]
        if len(self.tree.body) != 1 or len(fns) != 1:
            raise CodeError("the code must be exactly one function definition")
        fn = fns[0]
        if fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults:
            raise CodeError(f"unsupported function signature at {_where(fn)}")
        params = fn.args.args
        if len(params) != len(self.graph.inputs):
            raise CodeError(f"the code takes {len(params)} inputs, the graph {len(self.graph.inputs)}")
        for p, v in zip(params, self.graph.inputs):
            self.env[p.arg] = v
        body = list(fn.body)
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise CodeError("the code must end with a return statement")
        ret = body.pop()
        for node in self.graph.nodes():
            self.writer.node(node, self.writer_lines, "  ")  # what the printer inlines, to recognize it
            if node.kind in _INLINED:
                continue
            if node.blocks:
                raise CodeError(f"{node.kind} with nested blocks cannot be rebuilt from code yet")
            if not body:
                raise CodeError(f"the code has fewer statements than the graph (missing {node.kind})")
            self.statement(node, body.pop(0))
        if body:
            raise CodeError(f"unexpected statement {ast.unparse(body[0])!r} at {_where(body[0])}")
        outs = ret.value.elts if isinstance(ret.value, ast.Tuple) and len(self.graph.outputs) != 1 \
            else [ret.value]
        if len(outs) != len(self.graph.outputs):
            raise CodeError(f"the code returns {len(outs)} values, the graph {len(self.graph.outputs)}")
        self.graph.block.outputs = [self.value(e, v, None) if isinstance(e, ast.Name) else _no_expr(e)
                                    for e, v in zip(outs, list(self.graph.outputs))]


def _no_expr(e: ast.expr):
    raise CodeError(f"return values must be names, got {ast.unparse(e)!r} at {_where(e)}")


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


def rebuild_from_code(graph: Graph, code: str) -> Graph:
    """Rewire ``graph`` (decoded from the archive's JSON) so it computes what ``code`` says; returns it.

    Raises ``CodeError`` for syntax errors, unknown names or ops, and constructs outside the allow-list.
    """
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as e:
        raise CodeError(f"the code does not parse ({e.msg} at line {e.lineno})") from None
    _Rebuilder(graph, tree).run()
    return graph
