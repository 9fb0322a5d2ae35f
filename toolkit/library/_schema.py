"""Schemas of library-defined ops: checked when written by hand, inferred from type hints otherwise.

``torch.library.custom_op`` infers ``mylib::twice(Tensor x) -> Tensor`` from ``def twice(x: Tensor) -> Tensor``;
``infer_schema`` does the same with torch's type table (``int`` is ``SymInt``, ``int | float | bool`` is
``Scalar``), and ``parse_library_schema`` checks a schema string before the registry sees it, so a typo is an error
naming the op, not an op that never binds.
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import types
import typing
from collections.abc import Callable, Sequence

from .._core.dtypes import dtype as _dtype
from ..ops.schema import Schema, parse_schema
from ..tensor import Tensor

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BASE_TYPES = frozenset({"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device",
                         "Layout", "MemoryFormat", "Generator", "Any"})
# Names the registry's derivative rules read besides the op's arguments: an argument may not take them.
RESERVED_ARGS = frozenset({"grad", "result", "needs_input_grad"})

_ARG_TYPES: dict = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str", _dtype: "ScalarType",
                    int | float | bool: "Scalar"}
_RETURN_TYPES: dict = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool"}


def split_name(qualname: str) -> tuple[str, str]:
    """``"mylib::twice"`` -> ``("mylib", "twice")``; a ValueError for anything else, as torch's."""
    ns, sep, name = qualname.partition("::")
    if not sep or not _IDENT.match(ns) or not _IDENT.match(name):
        raise ValueError(f"Expected a qualified op name 'namespace::name' (identifiers), got {qualname!r}")
    return ns, name


def _type_ok(t: str) -> bool:
    t = t[:-1] if t.endswith("?") else t
    if t.endswith("[]"):
        t = t[:-2]
    elif "[" in t and t.endswith("]"):  # int[2]
        t = t[: t.index("[")]
    return t in _BASE_TYPES


def parse_library_schema(qualname: str, text: str) -> Schema:
    """The registry schema of op ``qualname`` from ``text``, written with the name (``"twice(Tensor x) -> Tensor"``,
    as ``Library.define`` takes it) or without (``"(Tensor x) -> Tensor"``, as ``custom_op(schema=...)`` does)."""
    ns, name = split_name(qualname)
    body = text.strip()
    head = body.split("(", 1)[0].strip()
    if head:
        if head.partition(".")[0] not in (name, qualname):
            raise RuntimeError(f"{qualname}: the schema names op {head!r}: {text!r}")
        body = body[len(head):]
        overload = head.partition(".")[2]
    else:
        overload = ""
    full = f"{qualname}{'.' + overload if overload else ''}{body}"
    try:
        if "->" not in body or not body.startswith("(") or body.count("(") != body.count(")"):
            raise ValueError("expected '(<arguments>) -> <returns>'")
        schema = parse_schema(full)
    except ValueError as e:
        raise RuntimeError(f"{qualname}: schema {text!r} does not parse: {e}") from None
    for a in schema.args:
        if not _IDENT.match(a.name) or not _type_ok(a.type):
            raise RuntimeError(f"{qualname}: schema {text!r} does not parse: unknown type {a.type!r} of argument "
                               f"{a.name!r}")
        if a.name in RESERVED_ARGS:
            raise RuntimeError(f"{qualname}: an argument may not be named {a.name!r} (the derivative reads that name)")
    for r in schema.returns:
        if not _type_ok(r.type):
            raise RuntimeError(f"{qualname}: schema {text!r} does not parse: unknown return type {r.type!r}")
    return schema


def _type_name(hint, table: dict, where: str, fn: Callable) -> str:
    if hint in table:
        return table[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        rest = inner[0] if len(inner) == 1 else functools.reduce(operator.or_, inner)
        return _type_name(rest, table, where, fn) + "?"
    if origin in (list, Sequence, typing.Sequence) and len(args) == 1 and args[0] in table:
        return table[args[0]] + "[]"
    raise ValueError(f"infer_schema(func): {where} has unsupported type {hint!r}. The valid types are: "
                     f"{sorted(set(table.values()))} and Optional/list of them. Got func with signature "
                     f"{inspect.signature(fn)}")


def _default(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return f'"{v}"'  # double-quoted, as torch's infer_schema writes a string default
    if isinstance(v, int):
        return str(v)
    raise ValueError(f"infer_schema(func): unsupported default value {v!r}")


def infer_schema(fn: Callable, mutates_args: Sequence[str] | str) -> str:
    """The schema ``(args) -> returns`` of ``fn`` from its type hints, with ``(a!)`` on each argument it mutates,
    as ``torch.library.infer_schema`` writes it."""
    sig = inspect.signature(fn)
    # Hints written as strings (``from __future__ import annotations``) resolve in the function's module, where
    # ``Tensor`` and ``Optional`` need not be imported, as torch's infer_schema resolves them.
    names = {"Tensor": Tensor, "Optional": typing.Optional, "Union": typing.Union, "List": list,
             "Sequence": Sequence, **getattr(fn, "__globals__", {})}
    try:
        hints = typing.get_type_hints(fn, globalns=names)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}))
    # "unknown": any Tensor argument may be written, so torch's schema marks each one mutable.
    mutated = set(mutates_args) if not isinstance(mutates_args, str) else set(sig.parameters)
    unknown = mutated - set(sig.parameters)
    if unknown:
        raise ValueError(f"infer_schema(func): {unknown} in mutates_args were not found in the custom op's signature. "
                         "mutates_args should contain the names of all args that the custom op mutates, or just the "
                         "string 'unknown' if you don't know.")
    parts, kwonly, alias = [], False, iter("abcdefghijklmnopqrstuvwxyz")
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"infer_schema(func): *args and **kwargs are not supported. Got func with signature {sig}")
        if p.name not in hints:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type annotation. Got func with "
                             f"signature {sig}")
        t = _type_name(hints[p.name], _ARG_TYPES, f"Parameter {p.name}", fn)
        if p.name in mutated and t.startswith("Tensor"):
            t = f"Tensor({next(alias)}!){t[6:]}"
        elif p.name in mutated and not isinstance(mutates_args, str):
            raise ValueError(f"infer_schema(func): mutated argument {p.name} is not a Tensor")
        if p.kind == p.KEYWORD_ONLY and not kwonly:
            parts.append("*")
            kwonly = True
        parts.append(f"{t} {p.name}" + ("" if p.default is p.empty else f"={_default(p.default)}"))
    if "return" not in hints:
        raise ValueError(f"infer_schema(func): No return type annotation was provided. Got func with signature {sig}")
    ret = hints["return"]
    if ret is None or ret is type(None):
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        returns = "(" + ", ".join(_type_name(a, _RETURN_TYPES, "Return", fn) for a in typing.get_args(ret)) + ")"
    else:
        returns = _type_name(ret, _RETURN_TYPES, "Return", fn)
    return f"({', '.join(parts)}) -> {returns}"
