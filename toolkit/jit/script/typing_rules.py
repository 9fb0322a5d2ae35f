"""Annotations to IR types, type unification where control flow merges, and NamedTuple types."""

from __future__ import annotations

import typing

from ...tensor import Tensor as _Tensor
from .. import types as T


class NamedTupleType(T.TupleType):
    """A NamedTuple class's type: a tuple with field names; values are built as the class itself."""

    __slots__ = ("cls", "names")

    def __init__(self, cls, elems):
        super().__init__(elems)
        self.cls = cls
        self.names = tuple(cls._fields)

    def __str__(self) -> str:
        return f"{self.cls.__qualname__}({', '.join(f'{n} : {t}' for n, t in zip(self.names, self.elems))})"


class UninitializedType(T.JitType):
    """The type of a value no path reads (a branch that returned or broke out): fits any other type."""

    __slots__ = ()

    def __str__(self) -> str:
        return "Uninitialized"

    def is_subtype_of(self, other: T.JitType) -> bool:
        return True


UNINITIALIZED = UninitializedType()


def is_named_tuple(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def from_annotation(ann, globals_: dict | None = None) -> T.JitType | None:
    """The IR type of a Python annotation (``Tensor``, ``int``, ``Optional[Tensor]``, ``List[int]``...), or None."""
    if isinstance(ann, str):
        ns = dict(typing.__dict__)
        ns.update(globals_ or {})
        try:
            ann = eval(ann, ns)  # noqa: S307  (an annotation string of the user's own module)
        except Exception:
            return None
    if ann is None or ann is type(None):
        return T.NONE
    if ann is _Tensor or (isinstance(ann, type) and issubclass(ann, _Tensor)):
        return T.TENSOR
    simple = {int: T.INT, float: T.FLOAT, bool: T.BOOL, str: T.STR}
    if ann in simple:
        return simple[ann]
    if ann is typing.Any:
        return T.ANY
    if is_named_tuple(ann):
        hints = typing.get_type_hints(ann) if getattr(ann, "__annotations__", None) else {}
        return NamedTupleType(ann, [from_annotation(hints.get(f), globals_) or T.TENSOR for f in ann._fields])
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner = from_annotation(rest[0], globals_)
            return T.OptionalType(inner) if inner is not None else None
        return None
    if origin is list:
        inner = from_annotation(args[0], globals_) if args else T.TENSOR
        return T.ListType(inner) if inner is not None else None
    if origin is tuple:
        elems = [from_annotation(a, globals_) for a in args]
        return T.TupleType(elems) if all(e is not None for e in elems) else None
    if origin is dict:
        k, v = (from_annotation(a, globals_) for a in args)
        return T.DictType(k, v) if k is not None and v is not None else None
    return None


def unify(a: T.JitType, b: T.JitType) -> T.JitType | None:
    """The type both may have after a merge, or None when they cannot meet (int and Tensor)."""
    if a == b:
        return a
    if isinstance(a, UninitializedType):
        return b
    if isinstance(b, UninitializedType):
        return a
    if isinstance(a, T.AnyType) or isinstance(b, T.AnyType):
        return T.ANY
    if isinstance(a, T.TensorType) and isinstance(b, T.TensorType):
        return T.TENSOR
    if isinstance(a, T.NoneType):
        return b if isinstance(b, T.OptionalType) else T.OptionalType(b)
    if isinstance(b, T.NoneType):
        return a if isinstance(a, T.OptionalType) else T.OptionalType(a)
    if isinstance(a, T.OptionalType) or isinstance(b, T.OptionalType):
        ea = a.elem if isinstance(a, T.OptionalType) else a
        eb = b.elem if isinstance(b, T.OptionalType) else b
        e = unify(ea, eb)
        return None if e is None else T.OptionalType(e)
    if isinstance(a, T.ListType) and isinstance(b, T.ListType):
        e = unify(a.elem, b.elem)
        return None if e is None else T.ListType(e)
    if isinstance(a, T.TupleType) and isinstance(b, T.TupleType) and len(a.elems) == len(b.elems):
        es = [unify(x, y) for x, y in zip(a.elems, b.elems)]
        if any(e is None for e in es):
            return None
        if isinstance(a, NamedTupleType):
            return NamedTupleType(a.cls, es)
        return T.TupleType(es)
    return None


def python_type_name(t: T.JitType) -> str:
    return str(t)


def check_argument(name: str, t: T.JitType, v) -> None:
    """Raise a TypeError when a call passes a value that does not fit the compiled parameter's type."""
    if _fits(t, v):
        return
    raise TypeError(f"Expected a value of type '{t}' for argument '{name}' but instead found type "
                    f"'{type(v).__name__}'.")


def _fits(t: T.JitType, v) -> bool:
    if isinstance(t, (T.AnyType, UninitializedType)):
        return True
    if isinstance(t, T.TensorType):
        return isinstance(v, _Tensor)
    if isinstance(t, T.OptionalType):
        return v is None or _fits(t.elem, v)
    if isinstance(t, T.NoneType):
        return v is None
    if isinstance(t, T.BoolType):
        return isinstance(v, bool)
    if isinstance(t, T.IntType):
        return isinstance(v, int) and not isinstance(v, bool)
    if isinstance(t, T.FloatType):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if isinstance(t, T.StrType):
        return isinstance(v, str)
    if isinstance(t, T.ListType):
        return isinstance(v, list) and all(_fits(t.elem, e) for e in v)
    if isinstance(t, T.TupleType):
        return isinstance(v, tuple) and len(v) == len(t.elems) and all(_fits(a, e) for a, e in zip(t.elems, v))
    if isinstance(t, T.DictType):
        return isinstance(v, dict)
    return True
