"""``Library``: torch's low-level way to define ops (``define``) and give them kernels (``impl``) by dispatch key.

Each ``define`` adds one registry entry (a ``LibraryOp``); ``impl`` attaches a function to it for a dispatch key:
``CPU``/``CUDA`` (a kernel for that device), ``CompositeExplicitAutograd`` (a kernel for every device),
``CompositeImplicitAutograd`` (a composition of toolkit ops: autograd records its parts) or ``Meta`` (the fake).
Only ops a library defined can be given kernels: the built-in ops' kernels are the registry's own.

Example::

    lib = toolkit.library.Library("mylib", "DEF")
    lib.define("thrice(Tensor x) -> Tensor")
    lib.impl("thrice", lambda x: x * 3, "CPU")
    toolkit.ops.mylib.thrice(toolkit.ones(2))   # tensor([3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable

from ..ops import registry as R
from ._entry import LibraryOp
from ._schema import parse_library_schema, split_name

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_BUILTIN_NAMESPACES = frozenset({"aten", "prim", "quantized"})
_DEF_LIBRARIES: dict[str, Library] = {}  # namespace -> its live DEF library (torch allows one per namespace)


def library_op(op) -> LibraryOp:
    """The ``LibraryOp`` behind ``op``: a qualified name (``"mylib::twice"``), a registry ``OpDef`` or a
    ``CustomOpDef``. A RuntimeError naming the op where it does not exist or is not a library's."""
    entry = getattr(op, "_entry", None) or getattr(op, "library_op", None)
    if isinstance(entry, LibraryOp):
        return entry
    if isinstance(op, str):
        try:
            d = R.get(op)
        except KeyError:
            raise RuntimeError(f"operator {op} does not exist: define it first (toolkit.library.custom_op, or "
                               f"Library('{op.partition('::')[0]}', 'DEF').define(...))") from None
        entry = getattr(d, "library_op", None)
        if isinstance(entry, LibraryOp):
            return entry
        op = d
    raise RuntimeError(f"{getattr(op, 'qualified_name', op)}: toolkit.library can give kernels only to ops it defined; "
                       "a built-in op's kernels are its registry entry's")


def name_taken(schema) -> list:
    """The registered ops a new definition of ``schema`` would clash with (same name and overload)."""
    key = schema.name[6:] if schema.name.startswith("aten::") else schema.name  # aten ops are filed by bare name
    return [o for o in R.overloads(key) if o.overload == schema.overload]


def duplicate_error(schema) -> RuntimeError:
    return RuntimeError(f"Tried to register an operator ({schema}) with the same name and overload name multiple "
                        "times. Each overload's schema should only be registered with a single call to def().")


class Library:
    """torch.library.Library: ``Library(ns, "DEF")`` owns namespace ``ns`` (one live DEF library each),
    ``"FRAGMENT"`` adds definitions to it, ``"IMPL"`` only implements ops. ``_destroy()`` removes the ops it
    defined from the registry."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        split_name(f"{ns}::op")  # a ValueError for a namespace that is no identifier
        if kind == "DEF" and (ns in _BUILTIN_NAMESPACES or ns in _DEF_LIBRARIES):
            raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put "
                               "all of your definitions in a single TORCH_LIBRARY block. If you were trying to specify "
                               "implementations, consider using TORCH_LIBRARY_IMPL (Library(ns, 'IMPL')).")
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defined: list[LibraryOp] = []
        if kind == "DEF":
            _DEF_LIBRARIES[ns] = self

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define op ``<ns>::<name>`` from ``schema`` (``"thrice(Tensor x) -> Tensor"``); returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"{self}: an IMPL library cannot define ops; use Library({self.ns!r}, 'FRAGMENT')")
        head = schema.split("(", 1)[0].strip()
        qualname = head.partition(".")[0] if "::" in head else f"{self.ns}::{head.partition('.')[0]}"
        if qualname.partition("::")[0] != self.ns:
            raise RuntimeError(f"{self}: cannot define {qualname} outside namespace {self.ns}")
        parsed = parse_library_schema(qualname, schema)
        if name_taken(parsed):
            raise duplicate_error(parsed)
        entry = LibraryOp(parsed)
        R.register(entry.op)
        self._defined.append(entry)
        return head.partition("::")[2] if "::" in head else head

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Attach ``fn`` to op ``op_name`` (a name in this namespace, ``"ns::name"``, or the op) for
        ``dispatch_key`` (``CPU``, ``CUDA``, ``CompositeExplicitAutograd``, ``CompositeImplicitAutograd``,
        ``Meta``; empty: the library's key, else ``CompositeImplicitAutograd`` as torch's)."""
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True): toolkit has no dispatch key sets")
        if isinstance(op_name, str) and "::" not in op_name:
            op_name = f"{self.ns}::{op_name}"
        entry = library_op(op_name)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        apply_dispatch_key(entry, key, fn)

    def _destroy(self) -> None:
        """Remove the ops this library defined from the registry (torch does so when a library is destroyed)."""
        for entry in self._defined:
            R.unregister(entry.op)
        self._defined.clear()
        if _DEF_LIBRARIES.get(self.ns) is self:
            del _DEF_LIBRARIES[self.ns]


_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "CompositeExplicitAutograd": None}


def apply_dispatch_key(entry: LibraryOp, key: str, fn: Callable) -> None:
    """What ``fn`` becomes for ``entry`` under dispatch key ``key``."""
    if key in _DEVICE_KEYS:
        entry.set_kernel(_DEVICE_KEYS[key], fn)
    elif key == "CompositeImplicitAutograd":
        if not callable(fn):
            raise TypeError(f"{entry.name}: a kernel must be callable, got {type(fn).__name__}")
        entry.op.composite = fn
        entry.op.__dict__.pop("_plain_run", None)  # dispatch decided once whether the op is plain: no longer
    elif key == "Meta":
        entry.set_fake(fn)
    else:
        raise NotImplementedError(f"{entry.name}: dispatch key {key!r} is not supported (CPU, CUDA, "
                                  "CompositeExplicitAutograd, CompositeImplicitAutograd, Meta; autograd: "
                                  "register_autograd)")
