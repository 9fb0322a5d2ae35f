"""Module attributes that scripted methods assign (``self.count = self.count + 1``).

As in TorchScript, only attributes that exist (set in ``__init__``) with a known
type (int, float, bool, Tensor, None, or an ``Optional`` declared in the class body as
``o: Optional[Tensor]``) can be assigned; reads of such an attribute are
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

from ...tensor import Tensor as _Tensor
from .. import types as T
from . import sugar as S
from .typing_rules import from_annotation


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
    for klass in type(module).__mro__:
        ann = klass.__dict__.get("__annotations__", {})
        if name in ann:
            mod = sys.modules.get(klass.__module__)
            t = from_annotation(ann[name], vars(mod) if mod is not None else None)
            inner = t.elem if isinstance(t, T.OptionalType) else t
            return t if inner is not None and _assignable(inner) else None
    return None


def _assignable(t: T.JitType) -> bool:
    return isinstance(t, (T.IntType, T.FloatType, T.BoolType, T.TensorType))


def module_attribute_type(module, name: str) -> T.JitType | None:
    """The IR type of ``module.<name>`` (its declared type when its value fits it, else its value's), or None."""
    if name not in module.__dict__:
        return None
    typ = attribute_type(module.__dict__[name])
    if typ is None:
        return None
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
                             f"(int, float, bool, Tensor and Optional attributes can be assigned)", target)
        if name not in written_attributes(type(m)):
            raise self.error(f"attribute '{name}' of '{type(m).__name__}' can be assigned only as 'self.{name} = ...' "
                             f"in a method of its own class", target)
        v = self.as_value(value, node)
        if not accepts(typ, v.type):
            raise self.error(f"Wrong type for attribute assignment: '{name}' is {typ} but the value is {v.type}",
                             target)
        n = self.insert("prim::SetAttr", [obj.value, v], 0, node=node)
        n["name"] = name
