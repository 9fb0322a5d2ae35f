"""Annotations to IR types, type unification where control flow merges, and NamedTuple types."""

from __future__ import annotations

import typing

from ....futures import Future
from ....tensor import Tensor as _Tensor
from ...ir import types as T


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
    if ann is Future or origin is Future:
        inner = from_annotation(args[0], globals_) if args else T.ANY
        return T.FutureType(inner) if inner is not None else None
    return None


def unify(a: T.JitType, b: T.JitType) -> T.JitType | None:
    """The type both may have after a merge, or None when they cannot meet (int and Tensor)."""
    if a == b:
        return a
    if isinstance(a, UninitializedType):
        return b
    if isinstance(b, UninitializedType):
        return a
    if isinstance(a, T.PyObjectType) or isinstance(b, T.PyObjectType):
        return T.PYOBJECT  # a fallback statement's value meets anything: the merged value is a Python object
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
    if isinstance(t, (T.AnyType, T.PyObjectType, UninitializedType)):
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
    if isinstance(t, T.FutureType):
        return isinstance(v, Future)
    return True


# -- builtins called with arguments whose types already show the call fails ------------------------------------
_NUMBERS = (T.IntType, T.FloatType, T.BoolType)
_OPAQUE = (T.AnyType, T.PyObjectType)
_SIZED = (T.ListType, T.TupleType, T.DictType, T.StrType, T.TensorType)
_KEYWORDS = {"enumerate": ("start",)}  # the keyword arguments script code accepts, per builtin


def _list_of(t: T.JitType, elems) -> bool:
    return isinstance(t, T.ListType) and (isinstance(t.elem, elems) or isinstance(t.elem, _OPAQUE))


def _bad_argument(name: str, i: int, t: T.JitType, expected: str) -> str:
    return (f"Arguments for call are not valid: {name}() expected a value of type {expected} for argument {i} but "
            f"instead found type '{t}'")


def builtin_call_error(name: str, arg_types: list, kwarg_names) -> str | None:
    """Why calling the builtin ``name`` with arguments of these types (None: not a run-time value) cannot work, as
    a located compile error says it (TorchScript rejects these at compile time); None when it may work.

    ``sorted(d)`` of a ``Dict[str, int]``, ``len(3)``, ``int([1])``, ``min("a", 1)``, ``print(x, end="")``...
    A ``PyObject`` or ``Any`` argument is always accepted: Python decides at run time.
    """
    extra = [k for k in kwarg_names if k not in _KEYWORDS.get(name, ())]
    if extra:
        if name == "print":
            return "print doesn't accept any keyword arguments"
        return f"Arguments for call are not valid: {name}() does not take the keyword argument '{extra[0]}' in " \
               "script code"
    known = [(i, t) for i, t in enumerate(arg_types) if t is not None and not isinstance(t, _OPAQUE)]
    for i, t in known:
        if isinstance(t, T.OptionalType) and name not in ("print", "str", "bool", "isinstance", "getattr",
                                                          "hasattr"):
            return _bad_argument(name, i, t, "without None (refine it with 'is not None' first)")
    if name == "len":
        for _, t in known:
            if not isinstance(t, _SIZED):
                return f"object of type '{t}' has no len()"
    elif name == "range":
        for i, t in known:
            if not isinstance(t, (T.IntType, T.BoolType)):
                return f"all inputs of range must be ints, found {t} in argument {i}"
    elif name == "sorted":
        for i, t in known:
            if not (_list_of(t, (T.IntType, T.FloatType, T.BoolType, T.StrType, T.TensorType))
                    or isinstance(t, (T.TupleType, T.StrType, T.TensorType))):
                return _bad_argument(name, i, t, "'List[t]' (of int, float, bool, str or Tensor)")
    elif name == "sum":
        for i, t in known:
            if not (_list_of(t, _NUMBERS + (T.TensorType,)) or isinstance(t, (T.TupleType, T.TensorType))):
                return _bad_argument(name, i, t, "'List[int]' or 'List[float]'")
    elif name in ("min", "max"):
        if len(arg_types) == 1 and known:
            t = known[0][1]
            if not (isinstance(t, (T.ListType, T.TupleType, T.TensorType, T.StrType))):
                return f"'{t}' object is not iterable"
        elif all(t is not None for t in arg_types) and len(known) == len(arg_types):
            kinds = {"number" if isinstance(t, _NUMBERS) else "Tensor" if isinstance(t, T.TensorType) else str(t)
                     for _, t in known}
            if not (kinds <= {"number", "Tensor"} or len(kinds) == 1):
                shown = ", ".join(str(t) for _, t in known)
                return f"Arguments for call are not valid: {name}() cannot compare values of types {shown}"
    elif name == "abs":
        for _, t in known:
            if not isinstance(t, _NUMBERS + (T.TensorType,)):
                return f"bad operand type for abs(): '{t}'"
    elif name in ("int", "float"):
        for i, t in known:
            if not isinstance(t, _NUMBERS + (T.TensorType, T.StrType)):
                return _bad_argument(name, i, t, "'Tensor', 'number' or 'str'")
    return None


def index_error(container: T.JitType, index: T.JitType) -> str | None:
    """Why ``container[index]`` cannot work for values of these types (a list or str indexed by a str, a dict by a
    key of another type), or None."""
    if isinstance(index, _OPAQUE) or isinstance(container, _OPAQUE):
        return None
    if isinstance(container, (T.ListType, T.StrType)) and not isinstance(index, (T.IntType, T.BoolType)):
        what = "list" if isinstance(container, T.ListType) else "string"
        return f"{what} indices must be integers, not {index} (indexing a {container})"
    if isinstance(container, T.DictType) and not isinstance(container.key, _OPAQUE) \
            and not index.is_subtype_of(container.key) and unify(index, container.key) != container.key:
        return f"a {container} is indexed by a {index}, but its keys are {container.key}"
    return None
