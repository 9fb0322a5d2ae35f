"""What the code parser's statement handlers share: its error and how messages name a line."""

from __future__ import annotations

import ast


class CodeError(ValueError):
    """The code text names something outside the allow-list, or does not fit the archive's graph."""


def where(e: ast.AST) -> str:
    return f"line {getattr(e, 'lineno', '?')}"


def head(stmt: ast.stmt) -> str:
    """A statement's first line, for messages (compound statements unparse to several)."""
    return ast.unparse(stmt).splitlines()[0]


def pop(stmts: list, owner: str, kind: str) -> ast.stmt:
    if not stmts:
        raise CodeError(f"{owner} has fewer statements than the graph (missing {kind})")
    return stmts.pop(0)


def dotted(e: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        base = dotted(e.value)
        return None if base is None else f"{base}.{e.attr}"
    return None
