"""Schemas of the interpreter's built-in kinds (``aten::len``, ``aten::append``, ``prim::Print``...): the value
types each accepts and what it returns, written as TorchScript writes the schemas of its builtins::

    "(t[] self, t el) -> ()"            # aten::append: a list and an element of its type; no result
    "(Dict(k, v) self, k key) -> v?"    # aten::get
    "(str fmt, *Any args) -> str"       # aten::format: any number of arguments after the format

Types: ``Tensor``, ``int`` (an int or a bool), ``float`` (any number), ``bool``, ``str``, ``None``, ``Any`` (any
value except a module), ``Device``, ``ScalarType``, ``slice``, ``ellipsis``; ``X[]`` is a list, ``X?`` an
optional, ``Dict(K, V)`` a dict and ``(X, Y)`` a tuple. One-letter names are type variables: the first argument
that mentions one binds it, later ones must agree. A value typed ``Any`` fits every argument except a module.

The schemas live beside the functions that run the kinds (``toolkit.jit.kinds.builtins``); a graph loaded from an
archive may use a builtin only as one of its schemas allows (``toolkit.jit.serialization.archive_check``), and a kind without a
schema never loads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..frontend.script.typing_rules import unify
from ..ir import types as T
from ..kinds.builtins import SCHEMAS, has_kind
from .archive_types import fits

__all__ = ["BuiltinSchema", "check_builtin_schemas", "parse_builtin_schema"]

_TOKEN = re.compile(r"\s*(->|\[\]|[A-Za-z_][A-Za-z_0-9]*|[(),?*])")
_WRITES = re.compile(r"\([a-z]!\)")  # ``t[](a!) self``: the argument is written (what effects read), not a type
_SIMPLE = {"Tensor": T.TENSOR, "int": T.INT, "float": T.FLOAT, "bool": T.BOOL, "str": T.STR, "None": T.NONE,
           "Any": T.ANY, "Device": T.OtherType("Device"), "ScalarType": T.OtherType("ScalarType"),
           "slice": T.OtherType("slice"), "ellipsis": T.OtherType("ellipsis")}


@dataclass(frozen=True)
class _Var:
    name: str


@dataclass(frozen=True)
class BuiltinSchema:
    """One overload of a builtin: its parameters, an optional ``*rest`` parameter and its returns (0 or 1)."""

    params: tuple  # ((name, pattern), ...); a pattern is a JitType whose leaves may be _Var
    rest: object  # the pattern every extra argument must fit, or None
    returns: tuple
    text: str

    def bind(self, types: list) -> list | None:
        """The output types for inputs of ``types``, or None when the inputs do not fit this overload."""
        n = len(self.params)
        if len(types) < n or (self.rest is None and len(types) != n):
            return None
        env: dict = {}
        for (_, p), t in zip(self.params, types):
            if not _match(p, t, env):
                return None
        if any(not _match(self.rest, t, env) for t in types[n:]):
            return None
        return [_substitute(r, env) for r in self.returns]

    def __str__(self) -> str:
        return self.text


def _match(p, t, env: dict) -> bool:
    """Whether a value of type ``t`` fits pattern ``p``, binding the pattern's type variables in ``env``."""

    def bind(pattern, t) -> bool | None:
        if not isinstance(pattern, _Var):
            return None
        bound = env.get(pattern.name)
        if bound is None:
            env[pattern.name] = t
            return True
        merged = unify(bound, t)
        if merged is None:
            return False
        env[pattern.name] = merged
        return True

    return fits(t, p, bind)


def _substitute(p, env: dict) -> T.JitType:
    if isinstance(p, _Var):
        return env.get(p.name, T.ANY)
    if isinstance(p, T.OptionalType):
        inner = _substitute(p.elem, env)
        return inner if isinstance(inner, (T.OptionalType, T.AnyType, T.NoneType)) else T.OptionalType(inner)
    if isinstance(p, T.ListType):
        return T.ListType(_substitute(p.elem, env))
    if isinstance(p, T.DictType):
        return T.DictType(_substitute(p.key, env), _substitute(p.value, env))
    if isinstance(p, T.TupleType):
        return T.TupleType([_substitute(e, env) for e in p.elems])
    return p


class _Parser:
    def __init__(self, text: str):
        text = self.text = _WRITES.sub("", text)
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text.rstrip()):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise ValueError(f"bad builtin schema {text!r} at {pos}")
            self.tokens.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"bad builtin schema {self.text!r}: expected {expected or 'more'}, got {tok!r}")
        self.i += 1
        return tok

    def type(self):
        tok = self.take()
        if tok == "(":
            elems = [self.type()]
            while self.peek() == ",":
                self.take(",")
                elems.append(self.type())
            self.take(")")
            t = T.TupleType(elems)
        elif tok == "Dict":
            self.take("(")
            key = self.type()
            self.take(",")
            value = self.type()
            self.take(")")
            t = T.DictType(key, value)
        elif tok in _SIMPLE:
            t = _SIMPLE[tok]
        elif len(tok) == 1 and tok.islower():
            t = _Var(tok)
        else:
            raise ValueError(f"bad builtin schema {self.text!r}: unknown type {tok!r}")
        while self.peek() in ("[]", "?"):
            t = T.ListType(t) if self.take() == "[]" else T.OptionalType(t)
        return t

    def schema(self) -> BuiltinSchema:
        self.take("(")
        params: list = []
        rest = None
        while self.peek() != ")":
            if params or rest is not None:
                self.take(",")
            if self.peek() == "*":
                self.take("*")
                rest = self.type()
                self.take()
                continue
            if rest is not None:
                raise ValueError(f"bad builtin schema {self.text!r}: parameters after *rest")
            p = self.type()
            params.append((self.take(), p))
        self.take(")")
        self.take("->")
        if self.peek() == "(" and self.tokens[self.i + 1:self.i + 2] == [")"]:
            self.i += 2
            returns: tuple = ()
        else:
            returns = (self.type(),)
        if self.peek() is not None:
            raise ValueError(f"bad builtin schema {self.text!r}: unexpected {self.peek()!r}")
        return BuiltinSchema(tuple(params), rest, returns, self.text)


def parse_builtin_schema(text: str) -> BuiltinSchema:
    """Parse one overload, ``"(t[] self, int idx) -> t"``; raises ValueError for a malformed schema."""
    return _Parser(text).schema()


def check_builtin_schemas() -> None:
    """Every builtin schema belongs to a kind that runs, and parses (checked once, when script mode loads)."""
    for kind, overloads in SCHEMAS.items():
        if not has_kind(kind):
            raise RuntimeError(f"builtin schema for {kind}, which has no function")
        for text in overloads:
            parse_builtin_schema(text)
