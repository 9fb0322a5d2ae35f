"""Types of IR values: tensors with what is known of their shape, and the Python types TorchScript has.

A ``TensorType`` has ``.shape``, ``.dtype`` and ``.device`` so the registry's
meta rules read it exactly as they read an eager tensor; that is how the IR's
types come from the same definition as eager execution.
"""

from __future__ import annotations

import numbers

from ..._core import dtypes as _dt
from ..._core.meta import TensorMeta
from ..._core.names import names_of, repr_names
from ...tensor import Tensor


class JitType:
    """Base of all value types; equal types print equally."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return str(self)

    def is_subtype_of(self, other: JitType) -> bool:
        """Whether a value of this type may stand where ``other`` is expected."""
        if isinstance(other, AnyType) or self == other:
            return True
        if isinstance(other, OptionalType):
            return isinstance(self, NoneType) or self.is_subtype_of(other.elem)
        return False


class _Simple(JitType):
    __slots__ = ()
    name = ""

    def __str__(self) -> str:
        return self.name


class IntType(_Simple):
    __slots__ = ()
    name = "int"


class FloatType(_Simple):
    __slots__ = ()
    name = "float"


class BoolType(_Simple):
    __slots__ = ()
    name = "bool"


class StrType(_Simple):
    __slots__ = ()
    name = "str"


class NoneType(_Simple):
    __slots__ = ()
    name = "NoneType"


class AnyType(_Simple):
    __slots__ = ()
    name = "Any"


class PyObjectType(_Simple):
    """An opaque Python object: what a Python fallback statement (``script(fn, fallback=True)``) binds.

    Like TorchScript's ``PyObject``: compiled code passes it on, and the builtins that act on any Python
    object (``len``, indexing, calls, attribute reads, iteration, ``int()``/``float()``/``bool()``,
    truthiness, operators on non-tensors) run Python's own operation on it at run time. Operations that
    need a concrete type (a tensor op's argument) do not accept it, so the statement runs as Python too.
    """

    __slots__ = ()
    name = "PyObject"


class OtherType(JitType):
    """A type the IR carries but does not reason about: ``Device``, ``ScalarType``, ``Generator``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return self.name


class ModuleType(JitType):
    """The type of ``self`` and submodules: printed with the class's qualified name, as TorchScript does."""

    __slots__ = ("qualified_name",)

    def __init__(self, cls: type):
        self.qualified_name = f"__torch__.{cls.__module__}.{cls.__qualname__}"

    def __str__(self) -> str:
        return self.qualified_name


class ListType(JitType):
    __slots__ = ("elem",)

    def __init__(self, elem: JitType):
        self.elem = elem

    def __str__(self) -> str:
        return f"{self.elem}[]"

    def is_subtype_of(self, other: JitType) -> bool:
        if isinstance(other, ListType):
            return self.elem.is_subtype_of(other.elem)
        return super().is_subtype_of(other)


class TupleType(JitType):
    __slots__ = ("elems",)

    def __init__(self, elems):
        self.elems = tuple(elems)

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"

    def is_subtype_of(self, other: JitType) -> bool:
        if isinstance(other, TupleType):
            return len(self.elems) == len(other.elems) and all(
                a.is_subtype_of(b) for a, b in zip(self.elems, other.elems))
        return super().is_subtype_of(other)


class DictType(JitType):
    __slots__ = ("key", "value")

    def __init__(self, key: JitType, value: JitType):
        self.key, self.value = key, value

    def __str__(self) -> str:
        return f"Dict({self.key}, {self.value})"


class OptionalType(JitType):
    __slots__ = ("elem",)

    def __init__(self, elem: JitType):
        self.elem = elem

    def __str__(self) -> str:
        return f"{self.elem}?"


class FutureType(JitType):
    """The result of ``toolkit.jit.fork``: a task whose value, of type ``elem``, ``wait`` returns."""

    __slots__ = ("elem",)

    def __init__(self, elem: JitType):
        self.elem = elem

    def __str__(self) -> str:
        return f"Future[{self.elem}]"

    def is_subtype_of(self, other: JitType) -> bool:
        if isinstance(other, FutureType):
            return self.elem.is_subtype_of(other.elem)
        return super().is_subtype_of(other)


class TensorType(JitType):
    """A tensor whose dtype, shape, strides, device and requires_grad may each be unknown (None).

    ``sizes`` is None when the rank is unknown; inside it, None marks one unknown
    dimension (a partial shape). Printing follows TorchScript:
    ``Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu)``, ``Float(*, 3)``, ``Tensor``. A named
    tensor's type also prints its names after the sizes, as ``Tensor.names`` reads:
    ``Float(2, 3, names=['N', None], ...)`` (TorchScript has no such field: it never traced named tensors).
    """

    __slots__ = ("dtype", "sizes", "strides", "device", "requires_grad", "names")

    def __init__(self, dtype=None, sizes=None, strides=None, device=None, requires_grad=None, names=None):
        self.dtype = dtype
        self.sizes = None if sizes is None else tuple(sizes)
        self.strides = None if strides is None else tuple(strides)
        self.device = device
        self.requires_grad = requires_grad
        self.names = names  # a tuple of str or None per dim, only for a named tensor

    @classmethod
    def of(cls, t) -> TensorType:
        """The complete type of a concrete tensor."""
        return cls(t.dtype, tuple(t.shape), t.stride(), t.device, t.requires_grad, names_of(t))

    @classmethod
    def from_meta(cls, m: TensorMeta, requires_grad=None) -> TensorType:
        return cls(m.dtype, m.shape, None, m.device, requires_grad)

    # what meta rules read
    @property
    def shape(self) -> tuple:
        if not self.complete_shape():
            raise RuntimeError(f"the shape of {self} is not known")
        return self.sizes

    @property
    def ndim(self) -> int:
        if self.sizes is None:
            raise RuntimeError(f"the rank of {self} is not known")
        return len(self.sizes)

    def dim(self) -> int:
        return self.ndim

    def size(self, d: int | None = None):
        return self.shape if d is None else self.shape[d]

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_floating_point(self) -> bool:
        return self.dtype is not None and self.dtype.is_floating_point

    def complete_shape(self) -> bool:
        return self.sizes is not None and all(s is not None for s in self.sizes)

    def is_complete(self) -> bool:
        return self.dtype is not None and self.device is not None and self.complete_shape()

    def dimensioned(self) -> TensorType:
        """The same type with only the rank kept: what a graph looks like before specialization."""
        sizes = None if self.sizes is None else (None,) * len(self.sizes)
        return TensorType(self.dtype, sizes, None, self.device, self.requires_grad, self.names)

    def matches(self, t) -> bool:
        """Whether a concrete tensor fits this type (unknown parts fit anything)."""
        if self.dtype is not None and t.dtype is not self.dtype:
            return False
        if self.device is not None and t.device != self.device:
            return False
        if self.sizes is not None:
            if len(self.sizes) != t.ndim:
                return False
            if any(s is not None and s != n for s, n in zip(self.sizes, t.shape)):
                return False
        return True

    def is_subtype_of(self, other: JitType) -> bool:
        if isinstance(other, TensorType):
            return all(getattr(other, f) is None or getattr(other, f) == getattr(self, f)
                       for f in ("dtype", "sizes", "device"))
        return super().is_subtype_of(other)

    def __str__(self) -> str:
        if self.dtype is None and self.sizes is None and self.device is None and self.requires_grad is None:
            return "Tensor"
        parts = []
        if self.sizes is not None:
            parts += ["*" if s is None else str(s) for s in self.sizes]
        if self.names is not None:
            parts.append("names=" + repr_names(self.names))
        if self.strides:  # a 0-dim tensor's empty strides print as nothing, as TorchScript prints them
            parts.append("strides=[" + ", ".join(str(s) for s in self.strides) + "]")
        if self.requires_grad is not None:
            parts.append(f"requires_grad={int(self.requires_grad)}")
        if self.device is not None:
            parts.append(f"device={self.device}")
        head = _dt.title(self.dtype) if self.dtype is not None else "Tensor"
        return f"{head}({', '.join(parts)})" if parts else head


INT = IntType()
FLOAT = FloatType()
BOOL = BoolType()
STR = StrType()
NONE = NoneType()
ANY = AnyType()
PYOBJECT = PyObjectType()
TENSOR = TensorType()


def type_of_constant(v) -> JitType:
    """The IR type of a Python constant (ints, floats, bools, strs, None, dtypes, devices, and lists of them)."""
    if v is None:
        return NONE
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return FLOAT
    if isinstance(v, str):
        return STR
    if isinstance(v, Tensor):
        return TensorType.of(v)
    if isinstance(v, _dt.dtype):
        return OtherType("ScalarType")
    if type(v).__name__ == "device":
        return OtherType("Device")
    if isinstance(v, (list, tuple)):
        elems = [type_of_constant(e) for e in v]
        if elems and all(e == elems[0] for e in elems):
            return ListType(elems[0])
        return ListType(ANY) if not elems else TupleType(elems)
    if isinstance(v, numbers.Integral):
        return INT
    if isinstance(v, numbers.Real):
        return FLOAT
    return OtherType(type(v).__name__)


def schema_type(t: str) -> JitType:
    """The IR type an op schema's argument type string stands for."""
    t = t.split(" ", 1)[0]  # a lone named return (``-> Tensor Y``) keeps its name in the type string
    if t.endswith("?") and not t.endswith("[]?"):
        return OptionalType(schema_type(t[:-1]))
    if "[" in t:
        base = t[: t.index("[")]
        inner = schema_type(base)
        lt = ListType(inner)
        return OptionalType(lt) if t.endswith("?") else lt
    return {
        "Tensor": TENSOR, "int": INT, "SymInt": INT, "float": FLOAT, "bool": BOOL, "str": STR,
        "Scalar": OtherType("Scalar"), "ScalarType": OtherType("ScalarType"), "Device": OtherType("Device"),
        "Generator": OtherType("Generator"), "Layout": OtherType("Layout"), "MemoryFormat": OtherType("MemoryFormat"),
    }.get(t, ANY)


__all__ = [
    "JitType", "TensorType", "IntType", "FloatType", "BoolType", "StrType", "NoneType", "AnyType", "PyObjectType",
    "OtherType", "ModuleType", "ListType", "TupleType", "DictType", "OptionalType", "INT", "FLOAT", "BOOL", "STR",
    "NONE", "ANY", "PYOBJECT", "TENSOR", "type_of_constant", "schema_type",
]
