"""Compile-time values: what a name means while compiling when it is not (yet) an IR value.

Modules, functions, registry ops, builtins (``print``, ``range``, ``len``) and
Python objects are resolved at compile time; each knows how to be called, how
its attributes read and how to iterate, and emits IR nodes only for what must
happen at run time. Which one a Python object becomes is decided in ``resolve``.
"""

from __future__ import annotations

from ....nn.modules.container import ModuleDict, ModuleList, Sequential
from ...ir.graph import Value
from . import ops as O


class Sugared:
    """Base: a compile-time value. Subclasses override what they support."""

    kind = "value"

    def attr(self, c, name: str, node):
        raise c.error(f"'{self.describe()}' has no attribute '{name}' that script code can use", node)

    def call(self, c, args: list, kwargs: dict, node):
        raise c.error(f"'{self.describe()}' cannot be called in script code", node)

    def iterate(self, c, node):
        raise c.error(f"'{self.describe()}' cannot be iterated in script code", node)

    def as_value(self, c, node) -> Value:
        raise c.error(f"'{self.describe()}' cannot be used as a value in script code", node)

    def describe(self) -> str:
        return self.kind


class PythonValue(Sugared):
    """A Python object from the function's globals or closure (a module, class, constant...)."""

    def __init__(self, obj):
        self.obj = obj

    def describe(self) -> str:
        return getattr(self.obj, "__qualname__", None) or getattr(self.obj, "__name__", None) or type(self.obj).__name__

    def attr(self, c, name: str, node):
        try:
            return c.sugar(getattr(self.obj, name), node)
        except AttributeError:
            raise c.error(f"'{self.describe()}' has no attribute '{name}'", node) from None

    def call(self, c, args, kwargs, node):
        return c.call_python(self.obj, args, kwargs, node)

    def as_value(self, c, node):
        obj = self.obj
        if isinstance(obj, tuple):
            return c.tuple_of([c.as_value(c.sugar(e, node), node) for e in obj], node)
        if isinstance(obj, list) and all(isinstance(e, (int, float, bool, str)) for e in obj):
            return c.const(list(obj), node)
        return super().as_value(c, node)

    def iterate(self, c, node):
        if isinstance(self.obj, (tuple, list)):
            return Unrolled([c.sugar(e, node) for e in self.obj])
        return super().iterate(c, node)


class OpsValue(Sugared):
    """Registry ops (``toolkit.tanh``, ``F.linear``) or a Tensor's registry method bound to ``self_value``."""

    kind = "builtin op"

    def __init__(self, ops: list, name: str, self_value: Value | None = None):
        self.ops, self.name, self.self_value = ops, name, self_value

    def describe(self) -> str:
        return f"aten::{self.name}"

    def call(self, c, args, kwargs, node):
        args = [c.as_value(a, node) for a in args]
        kwargs = {k: c.as_value(v, node) for k, v in kwargs.items()}
        if self.self_value is not None:
            args = [self.self_value, *args]
        return O.emit_ops(c, self.ops, args, kwargs, node, self.name)


class TensorMethod(Sugared):
    """A hand-written Tensor method (``x.size``): called as Python calls it, at run time."""

    def __init__(self, self_value: Value, name: str):
        self.self_value, self.name = self_value, name

    def call(self, c, args, kwargs, node):
        args = [c.as_value(a, node) for a in args]
        kwargs = {k: c.as_value(v, node) for k, v in kwargs.items()}
        return O.emit_tensor_method(c, self.self_value, self.name, args, kwargs, node)


class ModuleValue(Sugared):
    """An ``nn.Module`` (``self`` or a submodule): parameters, buffers and submodules read with ``prim::GetAttr``."""

    kind = "module"

    def __init__(self, module, value: Value):
        self.module, self.value = module, value

    def describe(self) -> str:
        return type(self.module).__name__

    def attr(self, c, name: str, node):
        return c.module_attr(self, name, node)

    def call(self, c, args, kwargs, node):
        return c.call_module(self, args, kwargs, node)

    def iterate(self, c, node):
        m = self.module
        if isinstance(m, (ModuleList, Sequential)):
            return Unrolled([c.module_attr(self, k, node) for k in m._modules])
        if isinstance(m, ModuleDict):
            return Unrolled([c.const(k, node) for k in m._modules])
        return super().iterate(c, node)

    def as_value(self, c, node):
        return self.value

    def length(self) -> int | None:
        return len(self.module._modules)


class MethodValue(Sugared):
    """A method of a module: compiled inline with ``self`` bound."""

    def __init__(self, mv: ModuleValue, fn, name: str, owner: type):
        self.mv, self.fn, self.name, self.owner = mv, fn, name, owner

    def call(self, c, args, kwargs, node):
        return c.call_method(self, args, kwargs, node)


class SuperValue(Sugared):
    """``super()`` inside a method: attribute lookup starts after the class that defines the method."""

    def __init__(self, mv: ModuleValue, owner: type):
        self.mv, self.owner = mv, owner

    def attr(self, c, name, node):
        mro = type(self.mv.module).__mro__
        for cls in mro[mro.index(self.owner) + 1:]:
            if name in cls.__dict__:
                fn = c.unwrap_method(cls.__dict__[name])
                if callable(fn):
                    return MethodValue(self.mv, fn, name, cls)
        raise c.error(f"super() has no method '{name}'", node)


class Unrolled(Sugared):
    """A sequence known at compile time (tuple elements, a ModuleList's modules): loops over it are unrolled."""

    def __init__(self, items: list):
        self.items = items

    def iterate(self, c, node):
        return self

    def length(self) -> int:
        return len(self.items)


class RangeValue(Sugared):
    """``range(start, stop, step)`` in a ``for``: a ``prim::Loop`` with the counter derived from the trip index."""

    def __init__(self, start: Value, stop: Value, step: Value):
        self.start, self.stop, self.step = start, stop, step

    def iterate(self, c, node):
        return self


class ZipValue(Sugared):
    def __init__(self, parts: list):
        self.parts = parts

    def iterate(self, c, node):
        return self


class EnumerateValue(Sugared):
    def __init__(self, it, start: int):
        self.it, self.start = it, start

    def iterate(self, c, node):
        return self


class Builtin(Sugared):
    """A Python builtin with a script meaning (``print``, ``len``, ``range``, ``isinstance``...)."""

    kind = "builtin"

    def __init__(self, name: str):
        self.name = name

    def describe(self) -> str:
        return self.name

    def call(self, c, args, kwargs, node):
        return c.call_builtin(self.name, args, kwargs, node)


SCRIPT_BUILTINS = frozenset((
    "print", "len", "range", "zip", "enumerate", "int", "float", "bool", "str", "isinstance", "min", "max", "abs",
    "getattr", "hasattr", "list", "tuple", "super", "sorted", "sum", "divmod", "round", "any", "all",
))
