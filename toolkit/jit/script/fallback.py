"""Python fallback (``script(fn, fallback=True)``): a statement the compiler cannot handle runs as Python.

The statement becomes a ``prim::PythonOp`` node: its inputs are the values of
the names it reads, its outputs the names it binds (typed as they were before,
by annotation, or ``Tensor``; checked when it runs). The statement is compiled by
Python itself with its original file and line numbers, so its errors and
tracebacks point at the user's line.
"""

from __future__ import annotations

import ast
import copy
import functools
import types as pytypes

from .. import types as T
from ..ir import Value
from . import sugar as S
from .calls import PyCallable
from .typing_rules import from_annotation


def _names(stmt, ctx) -> list:
    seen = []
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx) and n.id not in seen:
            seen.append(n.id)
    return seen


def emit_fallback(c, stmt: ast.stmt, reason: str) -> None:
    """Replace ``stmt`` by a ``prim::PythonOp`` node and warn, naming the line."""
    from .compiler import warn_fallback

    reads = _names(stmt, ast.Load)
    writes = _names(stmt, ast.Store)
    inputs, params, closure = [], [], {}
    for name in reads + [w for w in writes if w not in reads]:
        v = c.env.get(name)
        if isinstance(v, Value):
            inputs.append(v)
            params.append(name)
        elif isinstance(v, S.ModuleValue):
            inputs.append(v.value)
            params.append(name)
        elif isinstance(v, bool):
            inputs.append(c.const(v, stmt))
            params.append(name)
        elif name in c.closure:
            closure[name] = c.closure[name]
    out_types = []
    for w in writes:
        prev = c.env.get(w)
        t = prev.type if isinstance(prev, Value) else None
        if t is None and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == w:
            t = from_annotation(ast.unparse(stmt.annotation), c.globals)
        out_types.append(t or T.TENSOR)
    fn = _build(c, stmt, params, list(closure), writes)
    label = f"{c.info.name}:{c.info.line_of(stmt)}"
    call = functools.partial(fn, **closure) if closure else fn
    n = c.insert("prim::PythonOp", inputs, 0, node=stmt)
    n["name"] = label
    n["callable"] = PyCallable(call, label, (), out_types, unpacked=True)
    n["unpack"] = True
    for w, t in zip(writes, out_types):
        o = n.add_output(t)
        o.set_debug_name(w)
        c.env[w] = o
    warn_fallback(c, stmt, reason)


def _build(c, stmt, params: list, closure_names: list, writes: list):
    """A Python function ``(params..., *, closure...) -> tuple(writes)`` running ``stmt`` at its own line."""
    body = copy.deepcopy(stmt)
    ast.increment_lineno(body, c.info.first_line - 1)
    ret = ast.Return(ast.Tuple([ast.Name(w, ast.Load()) for w in writes], ast.Load()))
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                         kwonlyargs=[ast.arg(k) for k in closure_names], kw_defaults=[None] * len(closure_names),
                         kwarg=None, defaults=[])
    fdef = ast.FunctionDef(name=f"{c.info.name}__fallback", args=args, body=[body, ret], decorator_list=[],
                           returns=None, type_params=[])
    mod = ast.Module(body=[fdef], type_ignores=[])
    ast.copy_location(fdef, body)
    ast.fix_missing_locations(mod)
    for node in ast.walk(ret):
        node.lineno = node.end_lineno = body.end_lineno
        node.col_offset = node.end_col_offset = 0
    code = compile(mod, c.info.filename, "exec")
    fcode = next(k for k in code.co_consts if isinstance(k, pytypes.CodeType))
    return pytypes.FunctionType(fcode, c.globals, fdef.name)
