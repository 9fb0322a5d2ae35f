"""Compile errors that point at the user's source: file, line, the line itself and a caret under the spot."""

from __future__ import annotations

import ast


class FrontendError(RuntimeError):
    """``toolkit.jit.script`` cannot compile a construct; the message names it and shows where it is.

    Example message::

        Python construct 'Try' (try/except) is not supported in script functions:
          File "model.py", line 12, in forward
            try:
            ^~~~
    """

    def __init__(self, message: str, where: str = ""):
        super().__init__(message + (":\n" + where if where else ""))
        self.reason = message
        self.where = where


class ScriptFallbackWarning(UserWarning):
    """A statement runs as Python (``fallback=True``): it is a ``prim::PythonOp`` node in the graph."""


class SourceInfo:
    """Where a function's AST came from: file, first line, source lines, and the function's name."""

    def __init__(self, filename: str, first_line: int, lines: list, name: str):
        self.filename = filename
        self.first_line = first_line  # 1-based line of the AST's line 1
        self.lines = lines  # dedented source lines
        self.name = name

    def line_of(self, node: ast.AST | None) -> int:
        return self.first_line + getattr(node, "lineno", 1) - 1

    def location(self, node: ast.AST | None) -> tuple:
        return (self.filename, self.line_of(node))

    def render(self, node: ast.AST | None) -> str:
        """``File "...", line N, in name`` plus the source line and a caret marking the node's span."""
        lineno = getattr(node, "lineno", None)
        head = f'  File "{self.filename}", line {self.line_of(node)}, in {self.name}'
        if lineno is None or not (1 <= lineno <= len(self.lines)):
            return head
        text = self.lines[lineno - 1].rstrip("\n")
        col = getattr(node, "col_offset", 0) or 0
        end_line = getattr(node, "end_lineno", lineno)
        end = getattr(node, "end_col_offset", None)
        if end is None or end_line != lineno:
            end = len(text.rstrip())
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        caret = " " * max(0, col - indent) + "^" + "~" * (max(1, end - col) - 1)
        return f"{head}\n    {stripped}\n    {caret}"

    def error(self, message: str, node: ast.AST | None) -> FrontendError:
        return FrontendError(message, self.render(node))
