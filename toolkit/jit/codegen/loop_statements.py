"""Scalar helpers written into a fused loop's body as straight-line statements.

A float32 loop computes ``exp`` and ``tanh`` with the float64 helpers of
:mod:`toolkit.backends.cpu.scalar` (``exp_f32``, ``tanh_f32``): plain
arithmetic, so the loop vectorizes, where libm's routine is a call per element.
Calling them as functions keeps the call; having numba inline them costs
seconds of compile time per kernel. So the generator copies their bodies in:
each local renamed apart, each nested helper call expanded the same way, the
``return`` becoming an assignment. The helpers are straight-line code (no
loops, one ``return`` at the end), which is what makes that a plain copy.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import textwrap

from ...backends.cpu.scalar import HELPERS


class LoopStatements:
    """The statements one kernel's loop body runs before a node's expression; names unique in the kernel."""

    def __init__(self, expand: bool = True):
        self.lines: list[str] = []
        self.expand = expand  # whether float32 exp/tanh expand here (else the loop calls libm)
        self._next = 0

    def take(self) -> list[str]:
        """The statements added since the last call (to go right before the node's assignment)."""
        lines, self.lines = self.lines, []
        return lines

    def inline(self, name: str, args: list[str]) -> str:
        """Append statements computing helper ``name`` on the argument expressions; returns the result's name."""
        params, body = _helper(name)
        self._next += 1
        uid = self._next
        assigned = {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
        rename = {v: f"_{v}_{uid}" for v in set(params) | assigned}
        for p, a in zip(params, args):
            self.lines.append(f"{rename[p]} = {a}")
        result = f"_r{uid}"
        for stmt in body:
            stmt = _Expand(rename, self).visit(copy.deepcopy(stmt))
            if isinstance(stmt, ast.Return):
                self.lines.append(f"{result} = {ast.unparse(stmt.value)}")
            else:
                self.lines.append(ast.unparse(ast.fix_missing_locations(stmt)))
        return result


@functools.cache
def _helper(name: str) -> tuple:
    """(parameter names, body statements without the docstring) of a straight-line helper."""
    fn = ast.parse(textwrap.dedent(inspect.getsource(HELPERS[name]))).body[0]
    body = fn.body[1:] if body_has_docstring(fn) else fn.body
    returns = [i for i, s in enumerate(body) if any(isinstance(n, ast.Return) for n in ast.walk(s))]
    if returns != [len(body) - 1] or not isinstance(body[-1], ast.Return) or any(
            isinstance(n, (ast.For, ast.While, ast.If)) for s in body for n in ast.walk(s)):
        raise ValueError(f"helper {name} is not straight-line code ending in one return")
    return tuple(a.arg for a in fn.args.args), tuple(body)


def body_has_docstring(fn: ast.FunctionDef) -> bool:
    first = fn.body[0] if fn.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


class _Expand(ast.NodeTransformer):
    """Renames a helper's locals; expands the helper calls it makes (their statements go first)."""

    def __init__(self, rename: dict, statements: LoopStatements):
        self.rename = rename
        self.statements = statements

    def visit_Name(self, node: ast.Name):
        if node.id in self.rename:
            return ast.copy_location(ast.Name(self.rename[node.id], node.ctx), node)
        return node

    def visit_Call(self, node: ast.Call):
        node = self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in HELPERS:
            result = self.statements.inline(node.func.id, [ast.unparse(a) for a in node.args])
            return ast.copy_location(ast.Name(result, ast.Load()), node)
        return node
