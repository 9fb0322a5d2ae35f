"""Module constants: attributes named in ``__constants__`` or annotated ``Final`` in the class body.

As in TorchScript, a constant's value is folded into the compiled graph (``prim::Constant``) when the module is
scripted, so it costs nothing at run time and survives save/load as part of the graph. Only simple values can be
constants (bool, int, float, str, None, dtype, device, layout, and lists or tuples of them; a list becomes a
tuple); script code cannot assign to a constant, and the scripted module refuses to change one.
"""

from __future__ import annotations

import functools
import warnings

from ....nn.modules.module import Module
from ....tensor import Tensor
from .annotations import is_final

__all__ = ["check_constants", "constant_names", "constant_value", "is_constant"]

_SIMPLE = (bool, int, float, str, type(None))
_OBJECT_TYPES = ("dtype", "qdtype", "device", "layout", "memory_format", "qscheme")


@functools.cache
def constant_names(cls: type) -> frozenset:
    """The constant attribute names of a module class: its ``__constants__`` and its ``Final`` annotations."""
    names = set(getattr(cls, "__constants__", ()))
    for klass in cls.__mro__:
        for name, ann in klass.__dict__.get("__annotations__", {}).items():
            if is_final(ann):
                names.add(name)
    return frozenset(names)


def is_constant(module: Module, name: str) -> bool:
    """Whether ``module.<name>`` is a constant that is set (not a parameter, buffer or submodule)."""
    if name not in constant_names(type(module)):
        return False
    d = module.__dict__
    if name in d.get("_parameters", {}) or name in d.get("_buffers", {}) or name in d.get("_modules", {}):
        return False
    return hasattr(module, name)


def _simple(value) -> bool:
    return isinstance(value, _SIMPLE) or type(value).__name__ in _OBJECT_TYPES


def _type_name(value) -> str:
    if isinstance(value, Tensor):
        return "toolkit.Tensor"
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def constant_value(module: Module, name: str):
    """The value compiled code sees for constant ``name`` (lists as tuples); a TypeError when it cannot be one."""
    value = getattr(module, name)
    if _simple(value):
        return value
    if isinstance(value, (list, tuple)) and all(_simple(v) for v in value):
        return tuple(value)
    raise TypeError(f"'{_type_name(value)}' object in attribute '{type(module).__name__}.{name}' is not a valid "
                    "constant.\nValid constants are:\n1. a nn.ModuleList\n2. a value of type {bool, float, int, str, "
                    "NoneType, toolkit.device, toolkit.layout, toolkit.dtype}\n3. a list or tuple of (2)\n")


def check_constants(root: Module) -> None:
    """Validate the constants of ``root`` and its submodules as scripting does: a TypeError for a value that cannot
    be a constant, a warning for a name that is a parameter, buffer or submodule, or that is never set."""
    for m in root.modules():
        d = m.__dict__
        for name in sorted(constant_names(type(m))):
            for table, hint in (("_modules", "submodule"), ("_buffers", "buffer"), ("_parameters", "parameter")):
                if name in d.get(table, {}):
                    warnings.warn(f"'{name}' was found in ScriptModule constants,  but it is a non-constant "
                                  f"{hint}. Consider removing it.", stacklevel=4)
                    break
            else:
                if not hasattr(m, name):
                    warnings.warn(f"'{name}' was found in ScriptModule constants, but was not actually set in "
                                  "__init__. Consider removing it.", stacklevel=4)
                    continue
                constant_value(m, name)

