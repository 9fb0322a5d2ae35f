"""Python fallback (``script(fn, fallback=True)``): a statement the compiler cannot handle runs as Python.

The statement becomes a ``prim::PythonOp`` node: its inputs are the values of
the names it reads, its outputs the names it binds (assignments, ``import``,
``def``, ``for`` targets...). An annotated name gets its annotation; a name that
held a Tensor stays a Tensor (checked when the statement runs), so the code after
it (``with no_grad(): x = ...``) stays compiled; any other name is a ``PyObject``
(``toolkit.jit.ir.types.PyObjectType``), an opaque Python value that later
statements, compiled or not, use as Python would.
The statement is compiled by Python itself with its original file and line
numbers, so its errors and tracebacks point at the user's line.
"""

from __future__ import annotations

import ast
import copy
import functools
import types as pytypes
import warnings

from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Value
from . import sugar as S
from .control import Undefined
from .errors import FrontendError, ScriptFallbackWarning
from .refs import PyCallable
from .typing_rules import _fits, from_annotation

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


class _Names(ast.NodeVisitor):
    """The names a statement reads, binds and deletes in the function's own scope (first use first)."""

    def __init__(self):
        self.reads: list = []
        self.writes: list = []
        self.deletes: list = []
        self.depth = 0  # > 0 inside a nested scope (def, class, lambda, comprehension)

    @staticmethod
    def _add(lst: list, name: str) -> None:
        if name not in lst:
            lst.append(name)

    def _bind(self, name: str | None) -> None:
        if name and self.depth == 0:
            self._add(self.writes, name)

    def visit_Name(self, n: ast.Name) -> None:
        if isinstance(n.ctx, ast.Load):
            self._add(self.reads, n.id)  # inside a nested scope too: it may read the function's locals
        elif self.depth == 0:
            self._add(self.deletes if isinstance(n.ctx, ast.Del) else self.writes, n.id)

    def visit_alias(self, n: ast.alias) -> None:
        if n.name != "*":
            self._bind(n.asname or n.name.split(".")[0])

    def visit_MatchAs(self, n) -> None:
        self._bind(n.name)
        self.generic_visit(n)

    def visit_MatchStar(self, n) -> None:
        self._bind(n.name)

    def visit_MatchMapping(self, n) -> None:
        self._bind(n.rest)
        self.generic_visit(n)

    def generic_visit(self, n: ast.AST) -> None:
        if isinstance(n, _SCOPES):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._bind(n.name)
            self.depth += 1
            super().generic_visit(n)
            self.depth -= 1
            return
        super().generic_visit(n)


class FallbackStatement:
    """What a fallback ``prim::PythonOp`` calls: the statement as a Python function, whose results are checked
    against the types the graph gives the names it binds. Prints as ``function:line``."""

    __slots__ = ("fn", "label", "names", "out_types")

    def __init__(self, fn, label: str, names: list, out_types: list):
        self.fn, self.label, self.names, self.out_types = fn, label, list(names), list(out_types)

    def __call__(self, *args):
        out = self.fn(*args)
        for name, t, v in zip(self.names, self.out_types, out):
            if not _fits(t, v):
                raise TypeError(f"{self.label}: the Python statement bound '{name}' to a value of type "
                                f"'{type(v).__name__}', but the script graph expects {t} (what '{name}' held "
                                "before); use another name for a value of another type")
        return out

    def __str__(self) -> str:
        return self.label


def _output_type(c, stmt: ast.stmt, name: str) -> T.JitType:
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
        t = from_annotation(ast.unparse(stmt.annotation), c.globals)
        if t is not None:
            return t
    prev = c.env.get(name)
    if isinstance(prev, Value) and isinstance(prev.type, T.TensorType):
        return prev.type
    return T.PYOBJECT


def emit_fallback(c, stmt: ast.stmt, reason: str) -> None:
    """Replace ``stmt`` by a ``prim::PythonOp`` node and warn, naming the line."""
    names = _Names()
    names.visit(stmt)
    writes = [w for w in names.writes if w not in names.deletes]
    inputs, params, closure = [], [], {}
    for name in names.reads + [w for w in writes + names.deletes if w not in names.reads]:
        v = c.env.get(name)
        if isinstance(v, bool):
            v = c.const(v, stmt)
        elif isinstance(v, S.PythonValue):
            closure[name] = v.obj
            continue
        elif v is not None and not isinstance(v, (Value, Undefined)):
            try:
                v = c.as_value(v, stmt)
            except FrontendError:
                v = None
        if isinstance(v, Value):
            inputs.append(v)
            params.append(name)
        elif v is None and name in c.closure:
            closure[name] = c.closure[name]
    out_types = [_output_type(c, stmt, w) for w in writes]
    fn = _build(c, stmt, params, list(closure), writes)
    label = f"{c.info.name}:{c.info.line_of(stmt)}"
    call = functools.partial(fn, **closure) if closure else fn
    n = c.insert(K.PYTHON_OP, inputs, 0, node=stmt)
    n["name"] = label
    n["callable"] = FallbackStatement(call, label, writes, out_types)
    n["unpack"] = True
    for w, t in zip(writes, out_types):
        o = n.add_output(t)
        o.set_debug_name(w)
        c.env[w] = o
    for d in names.deletes:
        c.env[d] = Undefined(f"'{d}' was deleted (line {c.info.line_of(stmt)})")
    warn_fallback(c, stmt, reason)


def warn_fallback(c, s, reason: str) -> None:
    """Say which line of which function runs as Python, and why it could not be compiled."""
    warnings.warn_explicit(
        f"toolkit.jit.script: line {c.info.line_of(s)} of '{c.info.name}' runs as Python (prim::PythonOp): {reason}",
        ScriptFallbackWarning, c.info.filename, c.info.line_of(s))


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


def _call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def call_object(c, fn: Value, args: list, kwargs: dict, node) -> Value:
    """Call a ``PyObject`` (a function or method a fallback statement bound): a ``prim::PythonOp``; the result is a
    ``PyObject`` too."""
    inputs = [fn] + [c.as_value(a, node) for a in args] + [c.as_value(v, node) for v in kwargs.values()]
    n = c.insert(K.PYTHON_OP, inputs, 1, node=node)
    n["name"] = f"{c.info.name}:{c.info.line_of(node)}"
    n["callable"] = PyCallable(_call, "call", kwargs)
    n.output().type = T.PYOBJECT
    return n.output()


RETURN_VALUE = "__return_value"


def fallback_return(c, stmt: ast.Return, reason: str) -> None:
    """``return <expr>`` whose expression cannot be compiled: the expression runs as a Python statement binding a
    ``PyObject``, which the compiled ``return`` returns."""
    target = ast.copy_location(ast.Name(RETURN_VALUE, ast.Store()), stmt.value)
    assign = ast.copy_location(ast.Assign([target], stmt.value), stmt)
    ast.fix_missing_locations(assign)
    c.env.pop(RETURN_VALUE, None)
    emit_fallback(c, assign, reason)
    ret = ast.copy_location(ast.Return(ast.copy_location(ast.Name(RETURN_VALUE, ast.Load()), stmt.value)), stmt)
    c.stmt(ret)


class _ObjectAttribute:
    """What a ``prim::PythonOp`` reading an attribute of a Python object runs. Not a ``prim::GetAttr``: passes take
    that for a pure read, but a Python object's attribute may change between two reads (or be a property)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self, obj):
        return getattr(obj, self.name)

    def __str__(self) -> str:
        return f"getattr .{self.name}"


def get_attribute(c, v: Value, name: str, node) -> Value:
    """``obj.name`` of a ``PyObject``: a ``prim::PythonOp`` whose result is a ``PyObject``."""
    n = c.insert(K.PYTHON_OP, [v], 1, node=node)
    n["name"] = f"{c.info.name}:{c.info.line_of(node)}"
    n["callable"] = _ObjectAttribute(name)
    n.output().type = T.PYOBJECT
    return n.output()
