"""The types of values in a graph loaded from an archive, and the checks of values against them.

``fits`` says whether a value of one type may stand where another is declared, ``fits_arg`` whether it may be
passed as a registry op's schema argument, ``check_value`` whether a Python value (a call's argument, a constant)
has a type. Modules never fit anything: ``archive_check`` tracks them by value. A tensor type fits any other
tensor type, whatever its dtype, shape or device: what a tensor holds is checked where it runs.
"""

from __future__ import annotations

from ..._core import dtypes as _dt
from ..._core.device import device as _device
from ...ops.quantized import PACKED_PARAMS
from ...tensor import Tensor
from ..ir import types as T

__all__ = ["ARCHIVE_EXCEPTIONS", "OTHER_TYPES", "PACKED_TYPES", "archive_exception", "checkable", "check_value", "contains_module",
           "fits", "fits_arg", "is_data", "return_type"]

PACKED_TYPES = {name: cls for name, (cls, _) in PACKED_PARAMS.items()}
"""Quantized modules' prepacked weights, which graphs hold as constants (kept with the archive's data)."""

OTHER_TYPES = frozenset({"ScalarType", "Device", "Layout", "MemoryFormat", "Generator", "slice", "ellipsis",
                         *PACKED_TYPES})
"""The ``OtherType`` names an archive may declare."""

ARCHIVE_EXCEPTIONS = frozenset({
    Exception, ArithmeticError, AssertionError, AttributeError, FloatingPointError, IndexError, KeyError,
    LookupError, NotImplementedError, OverflowError, RecursionError, RuntimeError, StopIteration, TypeError,
    ValueError, ZeroDivisionError,
})
"""The exception classes a graph loaded from an archive may raise (``prim::RaiseException``): Python's builtin
errors, which hold their message and do nothing else. The archive names one as ``"builtins.ValueError"``; a name
outside this fixed set (another module's class, ``os.system``) is refused, so loading never imports or looks up
anything the file names."""

_EXCEPTIONS_BY_NAME = {f"builtins.{c.__name__}": c for c in ARCHIVE_EXCEPTIONS}


def archive_exception(name) -> type:
    """The class of ``ARCHIVE_EXCEPTIONS`` that ``name`` (``"builtins.ValueError"``) names; ``ValueError``
    naming the allowed classes for anything else."""
    cls = _EXCEPTIONS_BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        allowed = ", ".join(sorted(_EXCEPTIONS_BY_NAME))
        raise ValueError(f"prim::RaiseException names the exception class {name!r:.80}, which an archive may not "
                         f"raise (allowed: {allowed})")
    return cls


def contains_module(t: T.JitType) -> bool:
    if isinstance(t, T.ModuleType):
        return True
    if isinstance(t, (T.ListType, T.OptionalType, T.FutureType)):
        return contains_module(t.elem)
    if isinstance(t, T.TupleType):
        return any(contains_module(e) for e in t.elems)
    if isinstance(t, T.DictType):
        return contains_module(t.key) or contains_module(t.value)
    return False


def fits(t: T.JitType, expected: T.JitType, bind=None) -> bool:
    """Whether a value of type ``t`` may stand where ``expected`` is declared (tensor details aside: what a tensor
    holds is checked when it runs). ``Any`` fits both ways, modules never (they are tracked by value).

    ``bind(pattern, t)`` lets a schema's type variables take part (``builtin_schema``): it returns whether ``t``
    binds the variable ``pattern``, or None when ``pattern`` is not a variable.
    """
    if contains_module(t) or contains_module(expected):
        return False
    if bind is not None:
        bound = bind(expected, t)
        if bound is not None:
            return bound
    if isinstance(t, T.AnyType) or isinstance(expected, T.AnyType):
        return True
    if isinstance(expected, T.OptionalType):
        if isinstance(t, T.NoneType):
            return True
        return fits(t.elem if isinstance(t, T.OptionalType) else t, expected.elem, bind)
    if isinstance(t, T.OptionalType):
        return False
    if isinstance(expected, T.TensorType):
        return isinstance(t, T.TensorType)
    if isinstance(expected, T.FloatType):
        return isinstance(t, (T.FloatType, T.IntType, T.BoolType))
    if isinstance(expected, T.IntType):
        return isinstance(t, (T.IntType, T.BoolType))
    if isinstance(expected, T.ListType):
        return isinstance(t, T.ListType) and fits(t.elem, expected.elem, bind)
    if isinstance(expected, T.TupleType):
        return isinstance(t, T.TupleType) and len(t.elems) == len(expected.elems) and all(
            fits(a, b, bind) for a, b in zip(t.elems, expected.elems))
    if isinstance(expected, T.DictType):
        return isinstance(t, T.DictType) and fits(t.key, expected.key, bind) and fits(t.value, expected.value, bind)
    if isinstance(expected, T.FutureType):
        return isinstance(t, T.FutureType) and fits(t.elem, expected.elem, bind)
    if isinstance(expected, T.OtherType):
        return isinstance(t, T.OtherType) and t.name == expected.name
    return type(t) is type(expected)


def checkable(t: T.JitType) -> bool:
    """Whether ``check_value`` can tell if a value has type ``t`` (what a loaded graph's inputs may have)."""
    if isinstance(t, (T.TensorType, T.IntType, T.FloatType, T.BoolType, T.StrType, T.NoneType)):
        return True
    if isinstance(t, (T.OptionalType, T.ListType)):
        return checkable(t.elem)
    if isinstance(t, T.TupleType):
        return all(checkable(e) for e in t.elems)
    if isinstance(t, T.DictType):
        return checkable(t.key) and checkable(t.value)
    return isinstance(t, T.OtherType) and t.name in ("ScalarType", "Device")


def is_data(v, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if v is None or isinstance(v, (bool, int, float, str, bytes, Tensor, _dt.dtype, _device)):
        return True
    if type(v) in (list, tuple) or isinstance(v, tuple) and type(v).__module__.startswith("toolkit."):
        return all(is_data(e, depth + 1) for e in v)
    if isinstance(v, dict):
        return all(is_data(k, depth + 1) and is_data(x, depth + 1) for k, x in v.items())
    return False


def check_value(v, t: T.JitType) -> bool:
    """Whether the value ``v`` has type ``t``: a call argument (a tuple may stand for a list and a list for a
    tuple, an int for a float, a bool for an int, as TorchScript accepts them) or a constant's value."""
    if isinstance(t, T.AnyType):
        return is_data(v)
    if isinstance(t, T.TensorType):
        return isinstance(v, Tensor)
    if isinstance(t, T.OptionalType):
        return v is None or check_value(v, t.elem)
    if isinstance(t, T.NoneType):
        return v is None
    if isinstance(t, T.BoolType):
        return isinstance(v, bool)
    if isinstance(t, T.IntType):
        return isinstance(v, int)
    if isinstance(t, T.FloatType):
        return isinstance(v, (int, float))
    if isinstance(t, T.StrType):
        return isinstance(v, str)
    if isinstance(t, T.ListType):
        return isinstance(v, (list, tuple)) and all(check_value(e, t.elem) for e in v)
    if isinstance(t, T.TupleType):
        return isinstance(v, (tuple, list)) and len(v) == len(t.elems) and all(
            check_value(e, x) for e, x in zip(v, t.elems))
    if isinstance(t, T.DictType):
        return isinstance(v, dict) and all(check_value(k, t.key) and check_value(x, t.value) for k, x in v.items())
    if isinstance(t, T.OtherType) and t.name == "ScalarType":
        return isinstance(v, _dt.dtype)
    if isinstance(t, T.OtherType) and t.name == "Device":
        return isinstance(v, _device)
    if isinstance(t, T.OtherType) and t.name in PACKED_TYPES:
        return isinstance(v, PACKED_TYPES[t.name])
    return False


def fits_arg(t: T.JitType, arg, op) -> bool:
    """Whether a value of type ``t`` may be passed as the registry op's schema argument ``arg``."""
    a = arg.type
    if contains_module(t):
        return False
    if isinstance(t, T.AnyType) or a.startswith("Any"):
        return True
    if a.rpartition(".")[2] in PACKED_TYPES:  # __torch__.torch.classes.quantized.LinearPackedParamsBase
        return isinstance(t, T.OtherType) and t.name == a.rpartition(".")[2]
    if a.endswith("?"):
        if isinstance(t, T.NoneType):
            return True
        a = a[:-1]
        if isinstance(t, T.OptionalType):
            t = t.elem
    if isinstance(t, T.OptionalType):
        return False
    number = isinstance(t, (T.IntType, T.FloatType, T.BoolType))
    if a == "Tensor":
        return isinstance(t, T.TensorType) or (op.scalar_tensors and number)
    if a in ("Tensor[]", "Tensor?[]"):
        if isinstance(t, T.ListType):
            e = t.elem.elem if isinstance(t.elem, T.OptionalType) and a == "Tensor?[]" else t.elem
            return isinstance(e, (T.TensorType, T.AnyType)) or (a == "Tensor?[]" and isinstance(e, T.NoneType))
        return isinstance(t, T.TupleType) and all(isinstance(e, T.TensorType) for e in t.elems)
    if a in ("int", "SymInt"):
        return isinstance(t, (T.IntType, T.BoolType))
    if a.startswith(("int[", "SymInt[", "float[")):
        elem = (T.IntType, T.BoolType) if a.startswith(("int", "SymInt")) else (T.IntType, T.BoolType, T.FloatType)
        if isinstance(t, T.ListType):
            return isinstance(t.elem, (*elem, T.AnyType))
        if isinstance(t, T.TupleType):
            return all(isinstance(e, elem) for e in t.elems)
        return isinstance(t, elem)
    if a == "float":
        return number
    if a == "Scalar":
        return number
    if a == "bool":
        return isinstance(t, T.BoolType)
    if a == "str":
        return isinstance(t, T.StrType)
    if a in OTHER_TYPES:
        return isinstance(t, T.OtherType) and t.name == a
    return False


def return_type(r) -> T.JitType:
    return T.ListType(T.TENSOR) if r.type == "Tensor[]" else T.schema_type(r.type)
