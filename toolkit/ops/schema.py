"""Parse PyTorch-style op schemas: ``add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.

The schema string is the one place an op's arguments, their types and
defaults are written; binding, the IR's signatures and documentation read it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Arg:
    name: str
    type: str
    default: object = None
    has_default: bool = False
    kwarg_only: bool = False
    alias: str = ""  # PyTorch's alias annotation: "a" for a view of, "a!" for written in place

    @property
    def is_tensor(self) -> bool:
        return self.type.startswith("Tensor")

    @property
    def is_tensor_list(self) -> bool:
        return self.type in ("Tensor[]", "Tensor?[]")

    @property
    def optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def is_number_list(self) -> bool:
        """``int[]``/``SymInt[]``/``float[]`` (sizes, dims, strides): kernels take these as tuples."""
        return self.type.startswith(("int[", "SymInt[", "float["))


@dataclass(frozen=True)
class Return:
    name: str
    type: str


@dataclass(frozen=True)
class Schema:
    name: str
    overload: str
    args: tuple
    returns: tuple

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    def __str__(self) -> str:
        parts, star = [], False
        for a in self.args:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            s = f"{a.type[:6]}({a.alias}){a.type[6:]} {a.name}" if a.alias else f"{a.type} {a.name}"
            if a.has_default:
                s += f"={a.default!r}"
            parts.append(s)
        if len(self.returns) == 1 and not self.returns[0].name:
            ret = self.returns[0].type
        else:
            ret = "(" + ", ".join(f"{r.type} {r.name}".strip() for r in self.returns) + ")"
        return f"{self.full_name}({', '.join(parts)}) -> {ret}"


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_default(text: str):
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


_ALIAS = re.compile(r"\(([a-z]!?)\)")


def _strip_alias(typ: str) -> tuple[str, str]:
    """``Tensor(a!)`` -> (``Tensor``, ``a!``); ``Tensor(a)[]`` -> (``Tensor[]``, ``a``)."""
    m = _ALIAS.search(typ)
    if not m:
        return typ, ""
    return typ[: m.start()] + typ[m.end():], m.group(1)


def parse_schema(text: str) -> Schema:
    """Parse one schema string; errors say which schema was malformed."""
    try:
        head, _, ret = text.partition("->")
        head = head.strip()
        name_part, _, rest = head.partition("(")
        arg_text = rest[: rest.rindex(")")]
        name, _, overload = name_part.strip().partition(".")
        args, kwonly = [], False
        for piece in _split_top(arg_text):
            if piece == "*":
                kwonly = True
                continue
            decl, eq, default = piece.partition("=")
            typ, argname = decl.rsplit(None, 1)
            typ, alias = _strip_alias(typ.strip())
            args.append(Arg(argname, typ, _parse_default(default) if eq else None, bool(eq), kwonly, alias))
        ret = ret.strip()
        if ret.startswith("("):
            rets = []
            for r in _split_top(ret[1:-1]):
                bits = r.split()
                rets.append(Return(bits[1] if len(bits) > 1 else "", _strip_alias(bits[0])[0]))
        else:
            rets = [Return("", _strip_alias(ret)[0])] if ret else []
        return Schema(name, overload, tuple(args), tuple(rets))
    except Exception as e:  # pragma: no cover - only malformed registry entries
        raise ValueError(f"malformed op schema {text!r}: {e}") from e
