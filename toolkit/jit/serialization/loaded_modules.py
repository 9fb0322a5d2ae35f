"""Modules and functions rebuilt from archives, the attributes (``count``, ``scale``, ``last``) they save and
restore, and the check of their calls' arguments.

A loaded module keeps each saved attribute's value in its ``__dict__`` and its type in ``_attribute_types``:
the loaded graph's ``prim::GetAttr``/``prim::SetAttr`` nodes read and write the values, the code parser checks
the archive's attribute statements against the types, and assignments from Python must fit them. Member names
(parameters, buffers, submodules, attributes) are ones ``getattr`` resolves to that member and nothing else.

A loaded ``forward`` (or function) checks each call's arguments against the types its graph declares, with
TorchScript's message, before anything runs::

    RuntimeError: forward() Expected a value of type 'Tensor' for argument 'y' but instead found type 'int'.
    Position: 2
    Value: 5
    Declaration: forward(__torch__.Net self, Tensor x, Tensor y) -> Tensor
"""

from __future__ import annotations

from collections.abc import Callable

from ... import serialization as S
from ...nn.modules.module import Module
from ..frontend.script.attributes import accepts, attribute_type, module_attribute_type
from ..ir import types as T
from ..ir.graph import Graph
from ..script_module import ScriptFunction, ScriptModule, TracedModuleMethod
from .archive_types import check_value
from .code import annotation, parameter_names

MAX_NAME_LENGTH = 256


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
    """A loaded module: its saved attributes (``count``) are read and assigned on the module its graph runs with,
    and calls are checked against the types ``forward`` declares."""

    def __init__(self, original: Module, graph: Graph | None, defaults: tuple = ()):
        super().__init__(original, graph)
        self.__dict__["_signature"] = (None if graph is None else
                                       Signature("forward", graph, module_input=True, defaults=defaults))

    def _add_loaded_method(self, name: str, graph: Graph, defaults: tuple = ()) -> None:
        """A saved method beside ``forward``, callable as ``self.<name>(...)`` with its declared types checked."""
        method = LoadedMethod(self._original, name, graph, defaults)
        self.__dict__["_traced_methods"][name] = method
        self.__dict__[name] = method

    def forward(self, *args, **kwargs):
        return self._forward_executor().run([self._original, *self._signature.bind(args, kwargs)])[0]

    def graph_for(self, *args, **kwargs):
        return self._forward_executor().graph_for([self._original, *self._signature.bind(args, kwargs)])

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


class LoadedMethod(TracedModuleMethod):
    """A loaded method other than ``forward``: runs its graph with the loaded module as ``self``."""

    def __init__(self, original: Module, name: str, graph: Graph, defaults: tuple = ()):
        super().__init__(original, name, graph)
        self._signature = Signature(name, graph, module_input=True, defaults=defaults)

    def __call__(self, *args, **kwargs):
        return self._executor.run([self._original, *self._signature.bind(args, kwargs)])[0]

    def graph_for(self, *args, **kwargs):
        return self._executor.graph_for([self._original, *self._signature.bind(args, kwargs)])


class LoadedScriptFunction(ScriptFunction):
    """A loaded function: calls are checked against the types its graph declares."""

    def __init__(self, graph: Graph, name: str, defaults: tuple = ()):
        super().__init__(graph, name)
        self._signature = Signature(name, graph, module_input=False, defaults=defaults)

    def __call__(self, *args, **kwargs):
        return self._executor.run(self._signature.bind(args, kwargs))[0]

    def graph_for(self, *args, **kwargs):
        return self._executor.graph_for(self._signature.bind(args, kwargs))


def _declared_type(t: T.JitType) -> str:
    """A type as TorchScript's declarations print it (tensors as ``Tensor``, whatever is known of them)."""
    if isinstance(t, T.TensorType):
        return "Tensor"
    if isinstance(t, T.ListType):
        return f"{_declared_type(t.elem)}[]"
    if isinstance(t, T.OptionalType):
        return f"{_declared_type(t.elem)}?"
    if isinstance(t, T.TupleType):
        return "(" + ", ".join(_declared_type(e) for e in t.elems) + ")"
    if isinstance(t, T.DictType):
        return f"Dict({_declared_type(t.key)}, {_declared_type(t.value)})"
    return str(t)


class Signature:
    """The parameters of a loaded graph (names as its code prints them, declared types) and the check of a call's
    arguments against them, as TorchScript checks a call of a loaded module."""

    def __init__(self, name: str, graph: Graph, module_input: bool, defaults: tuple = ()):
        self.name = name
        self.skip = 1 if module_input else 0
        self.params = list(zip(parameter_names(graph), (v.type for v in graph.inputs)))
        self.py_types = [annotation(t) for _, t in self.params]
        S._check(len(defaults) <= len(self.params) - self.skip,
                 f"{name}() has {len(defaults)} default values for {len(self.params) - self.skip} parameters")
        self.defaults = tuple(defaults)
        self.default_of = dict(zip([p for p, _ in self.params[len(self.params) - len(defaults):]], defaults))
        for (pname, t), v in zip(self.params[len(self.params) - len(defaults):], defaults):
            S._check(check_value(v, t), f"the default value {_short(v)} of {name}() argument '{pname}' is not "
                                        f"{annotation(t)}")
        outs = [_declared_type(v.type) for v in graph.outputs]
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        params = ", ".join(f"{_declared_type(t)} {n}" + (f"={_short(self.default_of[n])}" if n in self.default_of
                                                          else "") for n, t in self.params)
        self.declaration = f"{name}({params}) -> {ret}"

    def bind(self, args: tuple, kwargs: dict) -> list:
        """The arguments in parameter order (without ``self``); a RuntimeError for a wrong count or type."""
        params = self.params[self.skip:]
        if len(args) > len(params):
            raise RuntimeError(f"{self.name}() expected at most {len(self.params)} argument(s) but received "
                               f"{len(args) + self.skip} argument(s). Declaration: {self.declaration}")
        values = list(args)
        for pname, _ in params[len(args):]:
            if pname not in kwargs and pname in self.default_of:
                values.append(self.default_of[pname])
                continue
            if pname not in kwargs:
                raise RuntimeError(f"{self.name}() is missing value for argument '{pname}'. "
                                   f"Declaration: {self.declaration}")
            values.append(kwargs[pname])
        names = {p for p, _ in params}
        for k in kwargs:
            if k not in names:
                raise RuntimeError(f"{self.name}() got an unexpected keyword argument '{k}'. "
                                   f"Declaration: {self.declaration}")
            if k in (p for p, _ in params[:len(args)]):
                raise RuntimeError(f"{self.name}() got multiple values for argument '{k}'. "
                                   f"Declaration: {self.declaration}")
        for i, ((pname, t), v) in enumerate(zip(params, values)):
            if not check_value(v, t):
                pos = i + self.skip
                raise RuntimeError(f"{self.name}() Expected a value of type '{self.py_types[pos]}' for argument "
                                   f"'{pname}' but instead found type '{type(v).__name__}'.\nPosition: {pos}\n"
                                   f"Value: {_short(v)}\nDeclaration: {self.declaration}")
        return values


def _short(v) -> str:
    try:
        text = repr(v)
    except Exception:
        text = f"<{type(v).__name__}>"
    return text if len(text) <= 200 else text[:200] + "..."


def check_member_name(m: LoadedModule, name, what: str) -> str:
    """A parameter, buffer or submodule name of ``m`` from an archive, refused unless ``getattr(m, name)`` reads
    that member (as PyTorch refuses to register a name the module already has as an attribute)."""
    S._check(isinstance(name, str) and 0 < len(name) <= MAX_NAME_LENGTH and "." not in name
             and not name.startswith("__") and name not in m.__dict__ and not hasattr(type(m), name)
             and name not in m._parameters and name not in m._buffers and name not in m._modules,
             f"bad {what} name {name!r:.80} in module {m.original_name}: a module member cannot be named like "
             "another member or an attribute every module has")
    return name


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


_SCALAR_ATTRIBUTE_TYPES = (T.IntType, T.FloatType, T.BoolType, T.StrType, T.TensorType)


def _holdable(typ: T.JitType) -> bool:
    """The attribute types a scripted module holds: scalars, strings, tensors, Optional of them, and the lists and
    str- or int-keyed dicts of them that ``toolkit.jit.Attribute`` declares."""
    if isinstance(typ, T.OptionalType):
        typ = typ.elem
    if isinstance(typ, T.ListType):
        return isinstance(typ.elem, _SCALAR_ATTRIBUTE_TYPES)
    if isinstance(typ, T.DictType):
        return isinstance(typ.key, (T.StrType, T.IntType)) and isinstance(typ.value, _SCALAR_ATTRIBUTE_TYPES)
    return isinstance(typ, (*_SCALAR_ATTRIBUTE_TYPES, T.NoneType))


def restore_attribute(m: LoadedModule, name, typ: T.JitType, value) -> None:
    """Set a saved attribute on ``m``, refusing names and types a module could not have had."""
    S._check(isinstance(name, str) and name.isidentifier() and not name.startswith("_") and name != "training"
             and len(name) <= MAX_NAME_LENGTH and name not in m.__dict__ and not hasattr(type(m), name),
             f"bad attribute name {name!r:.80}")
    S._check(name not in m._parameters and name not in m._buffers and name not in m._modules,
             f"attribute {name!r} of {m.original_name} is also a parameter, buffer or submodule")
    S._check(_holdable(typ), f"attribute {name!r} of {m.original_name} has type {typ}, which modules cannot hold")
    if isinstance(typ, (T.ListType, T.DictType, T.StrType)):  # declared with toolkit.jit.Attribute
        mutable = {T.ListType: list, T.DictType: dict, T.StrType: str}[type(typ)]
        fits = isinstance(value, mutable) and check_value(value, typ)
    else:
        got = attribute_type(value)
        fits = got is not None and accepts(typ, got)
    S._check(fits, f"attribute {name!r} of {m.original_name} is {typ}, but its saved value is {type(value).__name__}")
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
