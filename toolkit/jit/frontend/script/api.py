"""``toolkit.jit.script`` and its decorators; compiled functions and modules.

Example::

    @toolkit.jit.script
    def script_fn(x):
        for i in range(5):
            x = x * x
        return x

    class RNN(toolkit.jit.ScriptModule):
        @toolkit.jit.script_method
        def forward(self, x, h): ...
"""

from __future__ import annotations

import functools
import inspect

from ....nn.modules.module import Module
from ...ir import types as T
from ...ir.graph import Graph
from ...ir.verify import verify
from ...passes import run_passes
from ...runtime.executor import ProfilingExecutor
from ...script_module import ScriptFunction
from ...script_module import ScriptModule as _TracedModule
from ...serialization.code import graph_to_code
from . import sugar as S
from .annotations import Attribute
from .attributes import module_attribute_type, unwrap_attribute, unwrap_attributes
from .cleanup import pool_constants
from .compiled import CompiledFunction, bind_arguments, run_graph
from .compiler import Context, FunctionCompiler
from .constants import check_constants, constant_value, is_constant
from .errors import FrontendError
from .marks import EXPORT_ATTR, IGNORE_ATTR, SCRIPT_METHOD_ATTR, UNUSED_ATTR, ScriptMethod
from .source import closure_vars, parse_function
from .typing_rules import from_annotation


# -- decorators ---------------------------------------------------------------------------------------
def ignore(drop=False, **kwargs):
    """Leave a function in Python: compiled code calls it through a ``prim::PythonOp`` node."""
    if callable(drop):
        setattr(drop, IGNORE_ATTR, True)
        return drop

    def deco(fn):
        setattr(fn, IGNORE_ATTR, True)
        return fn

    return deco


def unused(fn):
    """Do not compile a function: calling it from compiled code raises; Python calls still work."""
    setattr(fn, UNUSED_ATTR, True)
    return fn


def export(fn):
    """Compile this method too when its module is scripted (callable on the scripted module)."""
    setattr(fn, EXPORT_ATTR, True)
    return fn


def script_method(fn):
    """Mark a method of a ``toolkit.jit.ScriptModule`` subclass to be compiled (the seed's spelling)."""
    setattr(fn, SCRIPT_METHOD_ATTR, True)
    return fn


# -- compiling ----------------------------------------------------------------------------------------
def _compile(fn, fallback: bool = False, self_module=None, name: str | None = None):
    """(graph, parameter names, parameter types) of ``fn`` compiled on its own (``self`` bound to ``self_module``)."""
    fdef, info = parse_function(fn)
    a = fdef.args
    if a.vararg is not None or a.kwarg is not None:
        where = a.vararg or a.kwarg
        raise info.error("a compiled function cannot take *args or **kwargs itself (its helpers can)", where)
    g = Graph()
    ctx = Context(g, fallback)
    c = FunctionCompiler(ctx, fn, fdef, info, fn.__globals__, closure_vars(fn), owner=None)
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    nodes = {p.arg: p for p in a.posonlyargs + a.args + a.kwonlyargs}
    types = []
    for i, p in enumerate(params):
        if self_module is not None and i == 0:
            v = g.add_input("self", T.ModuleType(type(self_module)))
            c.self_mv = S.ModuleValue(self_module, v)
            c.owner = _owner_of(type(self_module), fn)
            c.env[p] = c.self_mv
            continue
        ann = fn.__annotations__.get(p)
        t = T.TENSOR if ann is None else from_annotation(ann, fn.__globals__)
        if t is None:
            raise info.error(f"unsupported type annotation for '{p}'", nodes[p].annotation or nodes[p])
        c.env[p] = g.add_input(p, t)
        types.append(t)
    ctx.stack.append(fn)
    out = c.compile_body()
    g.register_output(c.as_value(out, fdef))
    run_passes(g, ["dce"])
    pool_constants(g)
    verify(g)
    return g, params[1:] if self_module is not None else params, types


def _owner_of(cls, fn):
    for k in cls.__mro__:
        for v in k.__dict__.values():
            if v is fn or getattr(v, "fn", None) is fn:
                return k
    return cls


class CompiledMethod:
    """A compiled method bound to its module: ``module.forward(x)`` runs the graph with ``self`` = the module."""

    def __init__(self, module, fn, name: str, fallback: bool = False):
        self.module = module
        self.name = name
        self.graph, _, self._types = _compile(fn, fallback, self_module=module)
        sig = inspect.signature(fn)
        self._signature = sig.replace(parameters=list(sig.parameters.values())[1:])
        self._executor = ProfilingExecutor(self.graph, name)

    def _bind(self, args, kwargs) -> list:
        return bind_arguments(self.name, self._signature, self._types, args, kwargs)

    def __call__(self, *args, **kwargs):
        return run_graph(self.graph, self._executor, [self.module, *self._bind(args, kwargs)])

    def graph_for(self, *args):
        return self._executor.graph_for([self.module, *args])

    @property
    def code(self) -> str:
        return graph_to_code(self.graph, self.name)


# -- modules ------------------------------------------------------------------------------------------
class _ScriptModuleMeta(type):
    """``isinstance(traced, toolkit.jit.ScriptModule)`` holds for traced modules too, as in PyTorch."""

    def __instancecheck__(cls, inst):
        if cls is ScriptModule:
            return isinstance(inst, _TracedModule)
        return super().__instancecheck__(inst)


class ScriptMethodDescriptor(ScriptMethod):
    """A ``@script_method`` on a ScriptModule subclass: compiled for each instance, at the end of ``__init__``."""

    def __get__(self, inst, owner=None):
        if inst is None:
            return self
        return _compiled(inst, self.name, self.fn)


def _compiled(inst, name: str, fn) -> CompiledMethod:
    cache = inst.__dict__.setdefault("_compiled_methods", {})
    m = cache.get(name)
    if m is None:
        m = cache[name] = CompiledMethod(inst, fn, name)
    return m


class ScriptModule(_TracedModule, metaclass=_ScriptModuleMeta):
    """Base class of compiled modules: subclass it and mark methods with ``@toolkit.jit.script_method``.

    ``ScriptModule(original, graph)`` (two arguments) is the traced form that ``toolkit.jit.trace`` builds.
    """

    def __init__(self, original=None, graph=None):
        if original is not None:
            super().__init__(original, graph)
            return
        Module.__init__(self)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for k, v in list(cls.__dict__.items()):
            if getattr(v, SCRIPT_METHOD_ATTR, False) and inspect.isfunction(v):
                setattr(cls, k, ScriptMethodDescriptor(v, k))
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__name__ != "RecursiveScriptModule":
            @functools.wraps(init)
            def __init__(self, *args, __init=init, __cls=cls, **kw):
                __init(self, *args, **kw)
                if type(self) is __cls:
                    _compile_script_methods(self)

            cls.__init__ = __init__

    def _traced(self) -> bool:
        return "_original" in self.__dict__

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Attribute):  # ``self.x = toolkit.jit.Attribute(value, type)`` in ``__init__``
            value = unwrap_attribute(self, name, value)
        super().__setattr__(name, value)

    def forward(self, *args, **kwargs):
        if self._traced():
            return super().forward(*args, **kwargs)
        raise NotImplementedError(f"{type(self).__name__} has no forward marked @toolkit.jit.script_method")

    @property
    def graph(self) -> Graph:
        if self._traced():
            return self.__dict__["graph"]
        return self.forward.graph

    @property
    def code(self) -> str:
        if self._traced():
            return super().code
        return self.forward.code

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    @property
    def original_name(self) -> str:
        return self.__dict__["original_name"] if self._traced() else type(self).__name__

    def graph_for(self, *args):
        if self._traced():
            return super().graph_for(*args)
        return self.forward.graph_for(*args)

    def train(self, mode: bool = True):
        if self._traced():
            return super().train(mode)
        return Module.train(self, mode)

    def _get_name(self) -> str:
        return super()._get_name() if self._traced() else Module._get_name(self)

    def extra_repr(self) -> str:
        return super().extra_repr() if self._traced() else Module.extra_repr(self)


def _compile_script_methods(inst) -> None:
    for cls in type(inst).__mro__:
        for k, v in cls.__dict__.items():
            if isinstance(v, ScriptMethodDescriptor):
                _compiled(inst, k, v.fn)


class RecursiveScriptModule(ScriptModule):
    """What ``toolkit.jit.script(module)`` returns: shares the module's parameters, runs compiled methods."""

    def __init__(self, original: Module, methods: dict):
        super().__init__(original, methods["forward"].graph)
        d = self.__dict__
        d["_executor"] = methods["forward"]._executor
        d["_methods"] = methods
        for name, m in methods.items():
            if name != "forward":
                d[name] = m

    def forward(self, *args, **kwargs):
        return self._methods["forward"](*args, **kwargs)

    def graph_for(self, *args):
        return self._methods["forward"].graph_for(*args)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            value = _plain_attribute(self.__dict__.get("_original"), name)
            if value is _MISSING:
                raise
            return value

    def __setattr__(self, name: str, value) -> None:
        """Plain attributes (``count``, ``scale``) live on the original module, where compiled code reads them."""
        orig = self.__dict__.get("_original")
        if orig is not None and is_constant(orig, name):
            raise RuntimeError(f"Can't set constant '{name}' which has value:{constant_value(orig, name)}")
        if name != "training" and _plain_attribute(orig, name) is not _MISSING:
            setattr(orig, name, value)
            return
        super().__setattr__(name, value)


_MISSING = object()


def _plain_attribute(orig, name: str):
    """A constant of ``orig``, or an attribute compiled code can read set on ``orig`` itself (an int, float, bool or
    Tensor, or a list or dict of a declared type; not a parameter, buffer or submodule)."""
    if orig is not None and is_constant(orig, name):
        return constant_value(orig, name)
    if orig is None or name not in orig.__dict__:
        return _MISSING
    return orig.__dict__[name] if module_attribute_type(orig, name) is not None else _MISSING


def _method_fn(cls, name: str):
    for k in cls.__mro__:
        if name in k.__dict__:
            v = k.__dict__[name]
            return v.fn if isinstance(v, ScriptMethodDescriptor) else v
    return None


def script_module(m: Module, fallback: bool = False) -> RecursiveScriptModule:
    """Compile ``m.forward`` and its ``@export``ed methods; the result shares ``m``'s state."""
    names = ["forward"]
    for k in type(m).__mro__:
        for name, v in k.__dict__.items():
            if getattr(v, EXPORT_ATTR, False) and name not in names:
                names.append(name)
    unwrap_attributes(m)
    check_constants(m)
    methods = {}
    for name in names:
        fn = _method_fn(type(m), name)
        if fn is None or not inspect.isfunction(fn):
            raise FrontendError(f"script: {type(m).__name__} has no method '{name}' to compile")
        methods[name] = CompiledMethod(m, fn, name, fallback)
    return RecursiveScriptModule(m, methods)


def script(obj=None, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None, fallback: bool = False):
    """Compile a function or module into a graph that keeps its loops and branches.

    ``fallback=True`` turns statements the compiler cannot handle into Python
    fallback nodes (``prim::PythonOp``) with a warning naming each line, instead
    of failing. Usable as ``@script`` or ``@script(fallback=True)``.
    """
    if obj is None:
        return lambda f: script(f, fallback=fallback)
    if isinstance(obj, (ScriptFunction, _TracedModule)):
        if isinstance(obj, ScriptModule) and not obj._traced():
            _compile_script_methods(obj)
        return obj
    if isinstance(obj, Module):
        return script_module(obj, fallback)
    if inspect.ismethod(obj) and isinstance(obj.__self__, Module):
        return CompiledMethod(obj.__self__, obj.__func__, obj.__name__, fallback)
    if inspect.isfunction(obj):
        graph, _, types = _compile(obj, fallback)
        return CompiledFunction(graph, obj.__name__, obj, types)
    if isinstance(obj, type):
        raise FrontendError(f"script: cannot compile the class {obj.__name__}; script an instance of it")
    raise FrontendError(f"script: cannot compile a {type(obj).__name__}")
