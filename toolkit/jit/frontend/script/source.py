"""Parsing Python functions for the compiler: source, AST, and where each line came from (cached)."""

from __future__ import annotations

import ast
import inspect
import textwrap

from .errors import FrontendError, SourceInfo

_CACHE: dict = {}


def parse_function(fn) -> tuple:
    """(FunctionDef AST, SourceInfo) of a Python function; a clear error when its source is unavailable."""
    key = getattr(fn, "__code__", fn)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as e:
        raise FrontendError(f"cannot get the source of '{getattr(fn, '__qualname__', fn)}' to compile it "
                            f"({e}); script functions must be defined in a file") from None
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise FrontendError(f"cannot parse the source of '{fn.__qualname__}': {e}") from None
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise FrontendError(f"'{getattr(fn, '__qualname__', fn)}' is not a function defined with def "
                            "(lambdas cannot be compiled)")
    info = SourceInfo(filename, first, text.splitlines(), fn.__name__)
    _CACHE[key] = (fdef, info)
    return fdef, info


def closure_vars(fn) -> dict:
    """The values of a function's free variables (cells that are still empty are left out)."""
    out = {}
    code = getattr(fn, "__code__", None)
    if code is None or not fn.__closure__:
        return out
    for name, cell in zip(code.co_freevars, fn.__closure__):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out
