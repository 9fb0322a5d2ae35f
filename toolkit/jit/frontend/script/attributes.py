"""Module attributes that scripted methods assign (``self.count = self.count + 1``).

As in TorchScript, only attributes that exist (set in ``__init__``) with a known
type (int, float, bool, Tensor, None, an ``Optional`` declared in the class body as
``o: Optional[Tensor]``, or a list or dict declared there or with
``toolkit.jit.Attribute([], List[str])``) can be assigned; reads of such an attribute are
``prim::GetAttr`` nodes (not constants) so each run sees the current value, and a
write is a ``prim::SetAttr`` node. Archives check their code's assignments with the
same ``accepts`` rule.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap

from ....tensor import Tensor as _Tensor
from ...ir import kinds as K
from ...ir import types as T
from . import sugar as S
from .annotations import Attribute
from .constants import is_constant
from .typing_rules import _fits, from_annotation

DECLARED_TYPES = "_jit_attribute_types"  # instance dict entry: attribute name -> type declared by Attribute


def attribute_type(value) -> T.JitType | None:
    """The IR type of an attribute value scripted code may assign, or None."""
    if value is None:
        return T.NONE
    if isinstance(value, bool):
        return T.BOOL
    if isinstance(value, int):
        return T.INT
    if isinstance(value, float):
        return T.FLOAT
    if isinstance(value, _Tensor):
        return T.TENSOR
    return None


@functools.cache
def written_attributes(cls: type) -> frozenset:
    """Names ``self.<name>`` is assigned to in the methods of ``cls`` and its user-defined bases."""
    out: set = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("toolkit.") or klass is object:
            continue
        for attr in vars(klass).values():
            fn = getattr(attr, "fn", None) or getattr(attr, "__func__", None) or attr
            if not inspect.isfunction(fn) or fn.__name__ == "__init__":
                continue
            try:
                tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
            except (OSError, TypeError, SyntaxError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                        and isinstance(node.value, ast.Name) and node.value.id == "self":
                    out.add(node.attr)
    return frozenset(out)


def declared_type(module, name: str) -> T.JitType | None:
    """The type a class body declares for an attribute (``o: Optional[Tensor]``), when it is one code can assign."""
    t = declared_attribute_type(module, name)
    inner = t.elem if isinstance(t, T.OptionalType) else t
    return t if inner is not None and _assignable(inner) else None


def declared_attribute_type(module, name: str) -> T.JitType | None:
    """The type declared for an attribute: by ``toolkit.jit.Attribute(value, type)``, else by the class body."""
    ann = module.__dict__.get(DECLARED_TYPES, {}).get(name)
    if ann is not None:
        return from_annotation(ann)
    for klass in type(module).__mro__:
        anns = klass.__dict__.get("__annotations__", {})
        if name in anns:
            mod = sys.modules.get(klass.__module__)
            return from_annotation(anns[name], vars(mod) if mod is not None else None)
    return None


def container_attribute_type(module, name: str) -> T.JitType | None:
    """The declared type of a list or dict attribute (``Attribute([], List[str])``, ``d: Dict[str, int]``), or None.

    Such an attribute is read with ``prim::GetAttr`` each run, so what compiled code appends or stores in it stays
    on the module, as in TorchScript.
    """
    value = module.__dict__.get(name)
    if not isinstance(value, (list, dict)):
        return None
    t = declared_attribute_type(module, name)
    return t if isinstance(t, (T.ListType, T.DictType)) and _fits(t, value) else None


def unwrap_attribute(module, name: str, value: Attribute):
    """Record the type of an ``Attribute(value, type)`` assigned to ``module.<name>``; returns its value."""
    t = from_annotation(value.type)
    if t is None:
        raise TypeError(f"toolkit.jit.Attribute: unsupported type {value.type!r} for attribute "
                        f"'{type(module).__name__}.{name}'")
    v = value.value
    if isinstance(t, T.FloatType) and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)  # the attribute holds a float, as the declared type says
    if not _fits(t, v):
        raise RuntimeError(f"Could not cast attribute '{name}' to type {t}: the value {v!r} of "
                           f"'{type(module).__name__}.{name}' is a {type(v).__name__}")
    module.__dict__.setdefault(DECLARED_TYPES, {})[name] = value.type
    return v


def unwrap_attributes(root) -> None:
    """Replace each ``Attribute(value, type)`` held by ``root`` or its submodules with its value, keeping its type
    (scripting a module whose ``__init__`` assigned them; compiled code reads the values at run time)."""
    for m in root.modules():
        for name, value in list(m.__dict__.items()):
            if isinstance(value, Attribute):
                m.__dict__[name] = unwrap_attribute(m, name, value)


def _assignable(t: T.JitType) -> bool:
    return isinstance(t, (T.IntType, T.FloatType, T.BoolType, T.TensorType))


def module_attribute_type(module, name: str) -> T.JitType | None:
    """The IR type of ``module.<name>`` (its declared type when its value fits it, else its value's), or None."""
    if name not in module.__dict__:
        return None
    typ = attribute_type(module.__dict__[name])
    if typ is None:
        return container_attribute_type(module, name)
    declared = declared_type(module, name)
    return declared if declared is not None and accepts(declared, typ) else typ


def accepts(attr_type: T.JitType, value_type: T.JitType) -> bool:
    """Whether an attribute of type ``attr_type`` may be assigned a value of type ``value_type``."""
    if isinstance(attr_type, T.OptionalType):
        if isinstance(value_type, T.OptionalType):
            value_type = value_type.elem
        return isinstance(value_type, T.NoneType) or accepts(attr_type.elem, value_type)
    if isinstance(attr_type, T.TensorType):
        return isinstance(value_type, T.TensorType)
    if isinstance(attr_type, (T.ListType, T.DictType)):
        return value_type.is_subtype_of(attr_type)
    return type(attr_type) is type(value_type)


class Attributes:
    """Mixin of the function compiler: assignment to ``self.<attribute>``."""

    def assign_attribute(self, target: ast.Attribute, value, node) -> None:
        obj = self.expr(target.value)
        if not isinstance(obj, S.ModuleValue):
            what = obj.type if hasattr(obj, "type") else obj.describe()
            raise self.error(f"assigning to an attribute of {what} is not supported in script code", target)
        m, name = obj.module, target.attr
        d = m.__dict__
        if is_constant(m, name):
            raise self.error(f"Tried to set nonexistent attribute: {name}. Did you forget to initialize it in "
                             f"__init__()? ('{name}' is a constant of '{type(m).__name__}' (__constants__ or Final) "
                             "and cannot be assigned in script code)", target)
        if name in d.get("_modules", {}):
            raise self.error(f"cannot assign to submodule '{name}' of '{type(m).__name__}' in script code", target)
        if name in d.get("_parameters", {}) or name in d.get("_buffers", {}):
            current = d["_parameters"].get(name) if name in d["_parameters"] else d["_buffers"].get(name)
        elif name in d:
            current = d[name]
        else:
            raise self.error(f"Tried to set nonexistent attribute: {name}. Did you forget to initialize it in "
                             f"__init__()?", target)
        typ = attribute_type(current) if name not in d else module_attribute_type(m, name)
        if typ is None:
            raise self.error(f"cannot assign to attribute '{name}' of type {type(current).__name__} in script code "
                             f"(int, float, bool, Tensor and Optional attributes, and lists and dicts of a declared "
                             f"type, can be assigned)", target)
        if name not in written_attributes(type(m)):
            raise self.error(f"attribute '{name}' of '{type(m).__name__}' can be assigned only as 'self.{name} = ...' "
                             f"in a method of its own class", target)
        v = self.as_value(value, node)
        if not accepts(typ, v.type):
            raise self.error(f"Wrong type for attribute assignment: '{name}' is {typ} but the value is {v.type}",
                             target)
        n = self.insert(K.SET_ATTR, [obj.value, v], 0, node=node)
        n["name"] = name
