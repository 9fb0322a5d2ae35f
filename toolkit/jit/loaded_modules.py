"""Modules rebuilt from archives, and the attributes (``count``, ``scale``, ``last``) they save and restore.

A loaded module keeps each saved attribute's value in its ``__dict__`` and its type in ``_attribute_types``:
the loaded graph's ``prim::GetAttr``/``prim::SetAttr`` nodes read and write the values, the code parser checks
the archive's attribute statements against the types, and assignments from Python must fit them.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import serialization as S
from ..nn.modules.module import Module
from . import types as T
from .script.attributes import accepts, attribute_type, module_attribute_type
from .script_module import ScriptModule


class LoadedModule(Module):
    """A submodule rebuilt from an archive: parameters, buffers, attributes and children, under its original class name."""

    def __init__(self, original_name: str):
        super().__init__()
        self.__dict__["original_name"] = original_name
        self.__dict__["_attribute_types"] = {}

    def _get_name(self) -> str:
        return self.original_name

    def forward(self, *args):
        raise RuntimeError(f"{self.original_name} was loaded from an archive: only the traced top-level forward runs")


class LoadedScriptModule(ScriptModule):
    """A loaded module: its saved attributes (``count``) are read and assigned on the module its graph runs with."""

    def _attribute(self, name: str):
        root = self.__dict__.get("_original")
        types = root.__dict__["_attribute_types"] if isinstance(root, LoadedModule) else {}
        return root, types.get(name)

    def __getattr__(self, name: str):
        root, typ = self._attribute(name)
        if typ is not None:
            return root.__dict__[name]
        return super().__getattr__(name)

    def __setattr__(self, name: str, value) -> None:
        root, typ = self._attribute(name)
        if typ is None:
            super().__setattr__(name, value)
            return
        got = attribute_type(value)
        if got is None or not accepts(typ, got):
            raise RuntimeError(f"Could not cast attribute '{name}' of {self.original_name} to type {typ}: "
                               f"got {type(value).__name__}")
        setattr(root, name, value)


def attribute_types_of(m: Module) -> dict:
    """The module's public int, float, bool, Tensor, None and Optional attributes (not parameters, buffers or
    submodules), with their types: the state that scripted code reads and assigns."""
    src = m.__dict__.get("_original", m)  # compiled and traced modules keep attributes on the original
    saved = src.__dict__.get("_attribute_types", {}) if isinstance(src, LoadedModule) else {}
    out = {}
    for k in list(src.__dict__):
        if k.startswith("_") or k == "training":
            continue
        typ = module_attribute_type(src, k)
        if typ is None:
            continue
        if k in saved and accepts(saved[k], typ):
            typ = saved[k]
        out[k] = typ
    return out


def restore_attribute(m: LoadedModule, name, typ: T.JitType, value) -> None:
    """Set a saved attribute on ``m``, refusing names and types a module could not have had."""
    S._check(isinstance(name, str) and name.isidentifier() and not name.startswith("_") and name != "training",
             f"bad attribute name {name!r:.80}")
    S._check(name not in m._parameters and name not in m._buffers and name not in m._modules,
             f"attribute {name!r} of {m.original_name} is also a parameter, buffer or submodule")
    inner = typ.elem if isinstance(typ, T.OptionalType) else typ
    S._check(isinstance(inner, (T.IntType, T.FloatType, T.BoolType, T.TensorType, T.NoneType)),
             f"attribute {name!r} of {m.original_name} has type {typ}, which modules cannot hold")
    got = attribute_type(value)
    S._check(got is not None and accepts(typ, got),
             f"attribute {name!r} of {m.original_name} is {typ}, but its saved value is {type(value).__name__}")
    m.__dict__[name] = value
    m.__dict__["_attribute_types"][name] = typ


def attribute_lookup(root: LoadedModule) -> Callable[[tuple, str], T.JitType | None]:
    """What the code parser asks: the type of the attribute ``name`` of the submodule at ``path``, or None."""

    def lookup(path: tuple, name: str) -> T.JitType | None:
        m = root
        for p in path:
            m = m._modules.get(p) if isinstance(m, LoadedModule) else None
        if not isinstance(m, LoadedModule):
            return None
        if m._buffers.get(name) is not None:
            return T.TENSOR
        return m.__dict__["_attribute_types"].get(name)

    return lookup
