"""``toolkit.jit.CompilationUnit``: script functions compiled from source text, as ``torch.jit.CompilationUnit``.

The text is Python in the script subset; its functions may call each other and name ``torch`` (read as
``toolkit``), ``Tensor`` and the ``typing`` containers. Each becomes a compiled function, an attribute of the unit::

    cu = toolkit.jit.CompilationUnit('''
    def double(x):
        return x * 2
    def quad(x):
        return double(double(x))
    ''')
    cu.quad(toolkit.ones(2))         # tensor([4., 4.])
"""

from __future__ import annotations

import ast
import itertools
import linecache
import sys
import typing

from .frontend.script import script

__all__ = ["CompilationUnit"]

_units = itertools.count()


class CompilationUnit:
    """Functions compiled from source strings (``define``), looked up as attributes or with ``find_function``."""

    def __init__(self, lang: str | None = None, _frames_up: int = 0) -> None:
        self._functions: dict = {}
        if lang is not None:
            self.define(lang, _frames_up=_frames_up + 1)

    def define(self, src: str, rcb=None, _frames_up: int = 0) -> None:
        """Compile every function ``src`` defines and add them to the unit."""
        filename = f"<toolkit.jit.CompilationUnit {next(_units)}>"
        try:
            tree = ast.parse(src, filename)
        except SyntaxError as e:
            raise RuntimeError(f"{e.msg} here:\n  File \"<string>\", line {e.lineno}\n{e.text or ''}") from None
        # The compiler reads a function's source through inspect, which finds it in linecache under this name.
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        # As in PyTorch, a source sees its own functions, not those of earlier ``define`` calls.
        namespace = self._namespace()
        exec(compile(tree, filename, "exec"), namespace)  # noqa: S102  (the user's own script source)
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                self._functions[stmt.name] = script(namespace[stmt.name])

    @staticmethod
    def _namespace() -> dict:
        toolkit = sys.modules["toolkit"]
        names = {"torch": toolkit, "toolkit": toolkit, "Tensor": toolkit.Tensor}
        names.update({n: getattr(typing, n) for n in ("Any", "Dict", "List", "Optional", "Tuple", "Union")})
        return names

    def find_function(self, name: str):
        """The compiled function ``name``, or None."""
        return self._functions.get(name)

    def get_functions(self) -> list:
        return list(self._functions.values())

    def __getattr__(self, name: str):
        functions = self.__dict__.get("_functions", {})  # (absent while unpickling)
        if name in functions:
            return functions[name]
        raise AttributeError(f"'CompilationUnit' has no attribute '{name}'")
