"""Calls: builtins, Python functions (compiled inline), ``@ignore``/``@unused`` functions, modules and their
methods, traced graphs (inlined), and what ``for`` loops iterate over."""

from __future__ import annotations

import builtins
import inspect
import warnings

from ....autograd.grad_mode import is_grad_enabled
from ....nn.modules.module import Module
from ....ops import registry as R
from ....tensor import Tensor as _Tensor
from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Value, _copy_block_into
from ...kinds.builtins import add_function
from ...runtime.fork import fork, wait
from ...script_module import ScriptFunction
from ...script_module import ScriptModule as TracedModule
from ..modes import is_scripting, is_tracing
from . import ops as O
from . import sugar as S
from .attributes import module_attribute_type, written_attributes
from .compiled import CompiledFunction
from .constants import constant_value, is_constant
from .control import destroy_block_nodes
from .errors import FrontendError
from .exprs import _KwargsValue
from .forks import emit_fork, emit_wait
from .marks import IGNORE_ATTR, UNUSED_ATTR, ScriptMethod
from .math_builtins import emit_math, is_math_function
from .refs import ExceptionRef, ModuleRef, PyCallable
from .source import closure_vars, parse_function
from .typing_rules import (
    UNINITIALIZED,
    NamedTupleType,
    builtin_call_error,
    from_annotation,
    is_named_tuple,
    unify,
)

# grad mode is read when the graph runs (TorchScript's aten::is_grad_enabled); without inputs, constant propagation
# never folds it to the value it had at compile time
add_function("aten::is_grad_enabled", is_grad_enabled, ("() -> bool",))

def _self_value(self_mv) -> Value | None:
    """The module value a library method falling back to Python is called on (None for plain functions)."""
    return None if self_mv is None else self_mv.value


def _element_type(t: T.JitType) -> T.JitType:
    """What iterating a value of type ``t`` gives (``sorted`` and ``sum`` of lists, tuples, strs and tensors)."""
    if isinstance(t, T.ListType):
        return t.elem
    if isinstance(t, T.TupleType):
        out = t.elems[0] if t.elems else T.ANY
        for e in t.elems[1:]:
            out = unify(out, e) or T.ANY
        return out
    if isinstance(t, T.StrType):
        return T.STR
    if isinstance(t, T.TensorType):
        return T.TENSOR
    return t if isinstance(t, T.PyObjectType) else T.ANY


def _library(fn) -> bool:
    mod = getattr(fn, "__module__", "") or ""
    return mod == "toolkit" or mod.startswith("toolkit.")


_BUILTIN_CLASSES = {"int": int, "float": float, "bool": bool, "str": str, "list": list, "tuple": tuple, "dict": dict}


def _class_of(sugar):
    """The class an ``isinstance`` argument names (a Python class or a builtin like ``list``), or None."""
    if isinstance(sugar, S.PythonValue):
        return sugar.obj
    if isinstance(sugar, S.Builtin):
        return _BUILTIN_CLASSES.get(sugar.name)
    return None


class Calls:
    """Mixin of the function compiler: everything that is called or iterated."""

    # -- Python objects ------------------------------------------------------------------------------
    def call_python(self, obj, args, kwargs, node):
        if isinstance(obj, CompiledFunction):
            return self.inline_function(obj._py_fn, args, kwargs, node)
        if isinstance(obj, ScriptFunction):
            vals = [self.as_value(a, node) for a in args]
            if kwargs:
                raise self.error("keyword arguments to a traced function are not supported", node)
            return self.inline_graph(obj.graph, vals, node)[0]
        if obj is warnings.warn:
            return self.emit_warn(args, kwargs, node)
        if obj is fork:
            return emit_fork(self, args, kwargs, node)
        if obj is wait:
            return emit_wait(self, args, kwargs, node)
        if is_math_function(obj):
            return emit_math(self, obj, args, kwargs, node)
        if obj is is_grad_enabled:
            if args or kwargs:
                raise self.error("is_grad_enabled() takes no arguments", node)
            return self.scalar_op("aten::is_grad_enabled", [], T.BOOL, node)
        if obj is is_scripting or obj is is_tracing:
            if args or kwargs:
                raise self.error(f"{obj.__name__}() takes no arguments", node)
            return self.const(obj is is_scripting, node, T.BOOL)
        if getattr(obj, UNUSED_ATTR, False):
            return self.unused_call(obj, node)
        if getattr(obj, IGNORE_ATTR, False):
            return self.python_call(obj, args, kwargs, node)
        if is_named_tuple(obj):
            typ = from_annotation(obj)
            vals = [self.as_value(a, node) for a in args]
            names = list(obj._fields)
            for k, v in kwargs.items():
                while len(vals) <= names.index(k):
                    vals.append(None)
                vals[names.index(k)] = self.as_value(v, node)
            defaults = getattr(obj, "_field_defaults", {})
            for i, f in enumerate(names):
                if i >= len(vals):
                    vals.append(None)
                if vals[i] is None:
                    if f not in defaults:
                        raise self.error(f"{obj.__name__}() missing field '{f}'", node)
                    vals[i] = self.as_value(self.sugar(defaults[f], node), node)
            elems = [unify(t, v.type) or v.type if not isinstance(t, T.TensorType) else v.type
                     for t, v in zip(typ.elems, vals)]
            n = self.insert(K.NAMED_TUPLE_CONSTRUCT, vals, 1, node=node)
            n["cls"] = obj
            n.output().type = NamedTupleType(obj, elems)
            return n.output()
        if isinstance(obj, type) and issubclass(obj, BaseException):
            raise self.error("exceptions can only be raised in script code", node)
        if inspect.isfunction(obj):
            return self.inline_function(obj, args, kwargs, node)
        if inspect.ismethod(obj) and isinstance(obj.__self__, Module):
            mv = S.ModuleValue(obj.__self__, self.const_module(obj.__self__, node))
            return self.call_method(S.MethodValue(mv, obj.__func__, obj.__name__, type(obj.__self__)), args, kwargs,
                                    node)
        if self.ctx.fallback or _library(obj):
            return self.python_call(obj, args, kwargs, node)
        raise self.error(f"Python object '{getattr(obj, '__qualname__', obj)}' cannot be called in script code "
                         "(decorate it with @toolkit.jit.ignore to call it in Python)", node)

    def emit_warn(self, args, kwargs, node):
        """``warnings.warn(message, category=UserWarning, stacklevel=1)``: an ``aten::warn`` node (a side effect)."""
        names = ["message", "category", "stacklevel"]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if "message" not in bound or set(bound) - set(names):
            raise self.error("warnings.warn(message, category, stacklevel) takes these arguments only", node)
        category = UserWarning
        if "category" in bound:
            c = bound["category"]
            if not (isinstance(c, S.PythonValue) and isinstance(c.obj, type) and issubclass(c.obj, Warning)
                    and getattr(builtins, c.obj.__name__, None) is c.obj):
                raise self.error("the category of warnings.warn in script code must be a built-in Warning class",
                                 node)
            category = c.obj
        stacklevel = self.as_value(bound["stacklevel"], node) if "stacklevel" in bound else self.const(2, node)
        inputs = [self.as_value(bound["message"], node), stacklevel, self.const(category.__name__, node)]
        self.insert("aten::warn", inputs, 0, node=node)
        return self.const(None, node, T.NONE)

    def python_call(self, fn, args, kwargs, node, self_value: Value | None = None):
        """A ``prim::PythonOp`` calling ``fn`` with the values at run time; its result type from the annotation."""
        vals = [self.as_value(a, node) for a in args]
        kvals = [self.as_value(v, node) for v in kwargs.values()]
        inputs = ([self_value] if self_value is not None else []) + vals + kvals
        ann = getattr(fn, "__annotations__", {}).get("return", inspect.Signature.empty)
        typ = T.TENSOR if ann is inspect.Signature.empty else (from_annotation(ann, getattr(fn, "__globals__", {}))
                                                                or T.ANY)
        if ann is inspect.Signature.empty and self.ctx.fallback and not _library(fn) \
                and not getattr(fn, IGNORE_ATTR, False):
            typ = T.PYOBJECT  # any Python callable under fallback=True: its result is an opaque Python object
        n = self.insert(K.PYTHON_OP, inputs, 1, node=node)
        name = getattr(fn, "__qualname__", type(fn).__name__)
        n["name"] = name
        n["callable"] = PyCallable(fn, name, kwargs.keys())
        n.output().type = typ
        return n.output()

    def unused_call(self, fn, node):
        msg = self.const(f"Python function '{fn.__qualname__}' is marked @toolkit.jit.unused and cannot be called "
                         "from compiled code", node)
        n = self.insert(K.RAISE_EXCEPTION, [msg], 0, node=node)
        n["exception"] = ExceptionRef(RuntimeError)
        ann = fn.__annotations__.get("return")
        return self.uninitialized(from_annotation(ann, fn.__globals__) or T.TENSOR if ann else T.TENSOR, node)

    def inline_graph(self, graph, inputs: list, node) -> list:
        """Copy a compiled or traced graph here with its inputs bound to ``inputs``; returns its outputs."""
        if len(inputs) != len(graph.inputs):
            raise self.error(f"the called graph takes {len(graph.inputs)} inputs, got {len(inputs)}", node)
        env = dict(zip(graph.inputs, inputs))
        block, before = self.graph._insert
        if before is not None:
            raise self.error("internal: inlining needs the end of a block", node)
        _copy_block_into(graph.block, block, env, self.graph)
        return [env[o] for o in graph.outputs]

    def inline_function(self, fn, args, kwargs, node, self_mv=None, owner=None):
        """Compile ``fn``'s body here with its parameters bound to the arguments; returns its result."""
        if any(f is fn for f in self.ctx.stack):
            raise self.error(f"recursive call of '{fn.__qualname__}' is not supported in script code", node)
        try:
            fdef, info = parse_function(fn)
        except FrontendError:
            if _library(fn):
                return self.python_call(fn, args, kwargs, node, self_value=_self_value(self_mv))
            raise
        # Calls is a mixin of the function compiler: ``type(self)`` is the compiler class, which compiles the callee
        sub = type(self)(self.ctx, fn, fdef, info, fn.__globals__, closure_vars(fn), self_mv, owner)
        block, _ = self.graph._insert
        start = len(block.nodes)
        sub.env.update(self.bind_parameters(fn, fdef, args, kwargs, node, self_mv))
        self.ctx.stack.append(fn)
        try:
            return sub.compile_body()
        except FrontendError as e:
            if _library(fn):
                destroy_block_nodes(block, start)
                return self.python_call(fn, args, kwargs, node, self_value=_self_value(self_mv))
            if getattr(e, "_called_from", None) is None:
                e._called_from = True
                e.args = (e.args[0] + f"\n'{fn.__qualname__}' is being compiled since it was called from "
                          f"'{self.info.name}':\n{self.info.render(node)}",)
            raise
        finally:
            self.ctx.stack.pop()

    def bind_parameters(self, fn, fdef, args: list, kwargs: dict, node, self_mv=None) -> dict:
        a = fdef.args
        names = [p.arg for p in a.posonlyargs + a.args]
        args = list(args)
        if self_mv is not None:
            args = [self_mv] + args
        defaults = list(fn.__defaults__ or ())
        first_default = len(names) - len(defaults)
        kwdefaults = fn.__kwdefaults__ or {}
        kwargs = dict(kwargs)
        env = {}
        for i, name in enumerate(names):
            if i < len(args):
                if name in kwargs:
                    raise self.error(f"{fn.__qualname__}() got multiple values for argument '{name}'", node)
                v = args[i]
            elif name in kwargs:
                v = kwargs.pop(name)
            elif i >= first_default:
                v = self.sugar(defaults[i - first_default], node)
            else:
                raise self.error(f"{fn.__qualname__}() missing required argument '{name}'", node)
            env[name] = self._check_param(fn, name, v, node)
        extra = args[len(names):]
        if a.vararg is not None:
            if all(isinstance(x, Value) for x in extra):
                env[a.vararg.arg] = self.tuple_of(list(extra), node)
            else:
                env[a.vararg.arg] = S.Unrolled(extra)
        elif extra:
            raise self.error(f"{fn.__qualname__}() takes {len(names)} positional arguments but {len(args)} were "
                             "given", node)
        for p in a.kwonlyargs:
            if p.arg in kwargs:
                env[p.arg] = self._check_param(fn, p.arg, kwargs.pop(p.arg), node)
            elif p.arg in kwdefaults:
                env[p.arg] = self.sugar(kwdefaults[p.arg], node)
            else:
                raise self.error(f"{fn.__qualname__}() missing keyword argument '{p.arg}'", node)
        if a.kwarg is not None:
            env[a.kwarg.arg] = _KwargsValue(kwargs)
        elif kwargs:
            raise self.error(f"{fn.__qualname__}() got an unexpected keyword argument '{next(iter(kwargs))}'", node)
        return env

    def _check_param(self, fn, name, v, node):
        ann = getattr(fn, "__annotations__", {}).get(name)
        if ann is None:
            return v
        t = from_annotation(ann, fn.__globals__)
        if t is None:
            return v
        if isinstance(t, T.ListType):  # a tuple passed for a List parameter becomes a list, as in TorchScript
            tv = v if isinstance(v, Value) else None
            if tv is None and isinstance(v, S.PythonValue) and isinstance(v.obj, tuple):
                tv = self.as_value(v, node)
            if tv is not None and isinstance(tv.type, T.TupleType) \
                    and all(e.is_subtype_of(t.elem) for e in tv.type.elems):
                return self.list_of(self.tuple_elements(tv, node), t.elem, node)
        if not isinstance(v, Value):
            return v
        if isinstance(t, T.OptionalType) and not isinstance(v.type, T.OptionalType) \
                and not isinstance(v.type, T.NoneType):
            n = self.insert(K.UNCHECKED_CAST, [v], 1, node=node)
            n.output().type = t
            return n.output()
        if not v.type.is_subtype_of(t) and unify(v.type, t) != t and not (
                isinstance(t, T.FloatType) and isinstance(v.type, T.IntType)):
            raise self.error(f"{fn.__qualname__}(): argument '{name}' must be {t}, got {v.type}", node)
        return v

    # -- builtins ------------------------------------------------------------------------------------
    def call_builtin(self, name: str, args, kwargs, node):
        why = builtin_call_error(name, [a.type if isinstance(a, Value) else None for a in args], kwargs)
        if why is not None:
            raise self.error(why, node)
        if name == "print":
            vals = [self.as_value(a, node) for a in args]
            self.insert(K.PRINT, vals, 0, node=node)
            return self.const(None, node, T.NONE)
        if name == "range":
            vals = [self.as_value(a, node) for a in args]
            if not 1 <= len(vals) <= 3 or not all(isinstance(v.type, T.IntType) for v in vals):
                raise self.error("range() takes 1 to 3 ints in script code", node)
            if len(vals) == 1:
                return S.RangeValue(self.const(0, node), vals[0], self.const(1, node))
            return S.RangeValue(vals[0], vals[1], vals[2] if len(vals) == 3 else self.const(1, node))
        if name == "zip":
            return S.ZipValue(list(args))
        if name == "enumerate":
            if "start" in kwargs:
                args = [args[0], kwargs["start"]]
            start = O.constant_of(self.as_value(args[1], node)) if len(args) > 1 else 0
            return S.EnumerateValue(args[0], start)
        if name == "super":
            if self.self_mv is None or self.owner is None:
                raise self.error("super() is only supported in module methods", node)
            return S.SuperValue(self.self_mv, self.owner)
        if name == "len":
            x = args[0]
            if isinstance(x, S.Unrolled):
                return self.const(len(x.items), node)
            if isinstance(x, S.ModuleValue):
                return self.const(len(x.module._modules), node)
            if isinstance(x, S.PythonValue) and hasattr(x.obj, "__len__"):
                return self.const(len(x.obj), node)
            v = self.as_value(x, node)
            if isinstance(v.type, T.TupleType):
                return self.const(len(v.type.elems), node)
            return self.scalar_op(K.LEN, [v], T.INT, node)
        if name == "isinstance":
            return self.const(self._isinstance(args[0], args[1], node), node)
        if name == "hasattr":
            key = O.constant_of(self.as_value(args[1], node))
            x = args[0]
            if isinstance(x, S.ModuleValue):
                return self.const(hasattr(x.module, key), node)
            if isinstance(x, S.PythonValue):
                return self.const(hasattr(x.obj, key), node)
            raise self.error("hasattr() needs a module or Python object in script code", node)
        if name == "getattr":
            key = O.constant_of(self.as_value(args[1], node))
            x = args[0]
            try:
                if isinstance(x, Value):
                    return self.value_attr(x, key, node)
                return x.attr(self, key, node)
            except FrontendError:
                if len(args) > 2:
                    return args[2]
                raise
        if name in ("int", "float", "bool", "str"):
            v = self.as_value(args[0], node) if args else self.const({"int": 0, "float": 0.0, "bool": False,
                                                                     "str": ""}[name], node)
            py = {"int": int, "float": float, "bool": bool, "str": str}[name]
            try:
                c = O.constant_of(v)
                if not isinstance(c, _Tensor):
                    return self.const(py(c), node)
            except LookupError:
                pass
            kind = {"int": "aten::Int", "float": "aten::Float", "bool": "aten::Bool", "str": "aten::str"}[name]
            return self.scalar_op(kind, [v], {"int": T.INT, "float": T.FLOAT, "bool": T.BOOL, "str": T.STR}[name],
                                  node)
        if name in ("min", "max", "abs"):
            vals = [self.as_value(a, node) for a in args]
            if any(isinstance(v.type, T.TensorType) for v in vals):
                op = {"min": "minimum", "max": "maximum", "abs": "abs"}[name] if len(vals) > 1 or name == "abs" \
                    else name
                return O.emit_ops(self, R.overloads(op), vals, {}, node, op)
            try:
                return self.const({"min": min, "max": max, "abs": abs}[name](*[O.constant_of(v) for v in vals]), node)
            except LookupError:
                pass
            t = vals[0].type
            for v in vals[1:]:
                t = T.FLOAT if isinstance(v.type, T.FloatType) else t
            if len(vals) == 1 and isinstance(t, T.ListType):
                t = t.elem
            return self.scalar_op(K.prim(name), vals, t, node)
        if name in ("list", "tuple"):
            x = args[0]
            if isinstance(x, S.PythonValue) and isinstance(x.obj, tuple):  # a constant tuple: its elements
                x = self.as_value(x, node)
            if isinstance(x, S.Unrolled) or (isinstance(x, Value) and isinstance(x.type, T.TupleType)):
                items = x.items if isinstance(x, S.Unrolled) else self.tuple_elements(x, node)
                vals = [self.as_value(i, node) for i in items]
                if name == "tuple":
                    return self.tuple_of(vals, node)
                return self.to_list(self.tuple_of(vals, node), node)
            if name == "list" and isinstance(x, (S.RangeValue, S.ZipValue, S.EnumerateValue)):
                return self._list_of_iteration(x, node)
            v = self.as_value(x, node)
            if name == "list" and isinstance(v.type, T.ListType):
                return self.scalar_op("aten::list", [v], v.type, node)
            raise self.error(f"{name}() of a {v.type} is not supported in script code", node)
        if name in ("sorted", "sum"):
            v = self.as_value(args[0], node)
            kind = "aten::sorted" if name == "sorted" else "aten::sum.int"
            elem = _element_type(v.type)
            return self.scalar_op(kind, [v], T.ListType(elem) if name == "sorted" else elem, node)
        raise self.error(f"builtin '{name}' is not supported in script code", node)

    def for_each(self, spec, node, body) -> None:
        """``body(element)`` for each element of an ``iteration`` spec: unrolled, or in one ``prim::Loop``."""
        if spec[0] == "unrolled":
            for item in spec[1]:
                body(item)
        else:
            _, trip, element = spec
            self.emit_loop(node, trip, self.const(True, node), lambda idx: body(element(idx)), set())

    def _list_of_iteration(self, it, node) -> Value:
        """``list(range(n))``, ``list(zip(a, b))``, ``list(enumerate(xs))``: a loop appending each element."""
        lst = self.list_of([], T.ANY, node)
        types = []

        def add(item):
            if isinstance(item, S.Unrolled):  # zip's and enumerate's elements: tuples
                v = self.tuple_of([self.as_value(i, node) for i in item.items], node)
            else:
                v = self.as_value(item, node)
            types.append(v.type)
            self.scalar_op("aten::append", [lst, v], None, node)

        self.for_each(self.iteration(it, node), node, add)
        elem = types[0] if types else T.INT
        for t in types[1:]:
            elem = unify(elem, t) or T.ANY
        lst.type = T.ListType(elem)
        return lst

    def _isinstance(self, x, cls, node) -> bool:
        classes = _class_of(cls)
        if isinstance(cls, S.Unrolled):
            classes = tuple(_class_of(c) for c in cls.items)
            classes = None if None in classes else classes
        if classes is None:
            raise self.error("isinstance() needs a class in script code", node)
        if not isinstance(classes, tuple):
            classes = (classes,)
        if not isinstance(x, Value):
            if isinstance(x, S.ModuleValue):
                return isinstance(x.module, classes)
            return isinstance(getattr(x, "obj", None), classes)
        t = x.type
        table = {T.TensorType: _Tensor, T.IntType: int, T.FloatType: float, T.BoolType: bool, T.StrType: str,
                 T.ListType: list, T.TupleType: tuple, T.DictType: dict, T.NoneType: type(None)}
        py = table.get(type(t))
        if py is None:
            raise self.error(f"isinstance() cannot decide for a value of type {t}", node)
        return any(isinstance(c, type) and issubclass(py, c) for c in classes) or (py is bool and int in classes)

    # -- modules -------------------------------------------------------------------------------------
    def const_module(self, m, node) -> Value:
        n = self.insert(K.MODULE_CONSTANT, [], 1, node=node)
        n["value"] = ModuleRef(m)
        n.output().type = T.ModuleType(type(m))
        return n.output()

    def _getattr(self, v: Value, name: str, typ, node) -> Value:
        n = self.insert(K.GET_ATTR, [v], 1, node=node)
        n["name"] = name
        n.output().type = typ
        if name.isidentifier():
            n.output().set_debug_name(name)
        return n.output()

    @staticmethod
    def unwrap_method(obj):
        """The Python function behind a class attribute (script_method wrappers, staticmethods)."""
        if isinstance(obj, ScriptMethod):
            return obj.fn
        if isinstance(obj, (staticmethod, classmethod)):
            return obj.__func__
        return obj

    def module_attr(self, mv, name: str, node):
        m = mv.module
        d = m.__dict__
        if name in d.get("_parameters", {}) or name in d.get("_buffers", {}):
            p = d["_parameters"].get(name) if name in d["_parameters"] else d["_buffers"].get(name)
            if p is None:
                return self.const(None, node, T.NONE)
            return self._getattr(mv.value, name, T.TENSOR, node)
        if name in d.get("_modules", {}):
            sub = d["_modules"][name]
            if sub is None:
                return self.const(None, node, T.NONE)
            return S.ModuleValue(sub, self._getattr(mv.value, name, T.ModuleType(type(sub)), node))
        if name == "training":
            return self._getattr(mv.value, "training", T.BOOL, node)
        if is_constant(m, name):  # __constants__ or Final: folded into the graph
            return self.sugar(constant_value(m, name), node)
        for cls in type(m).__mro__:
            if name in cls.__dict__:
                attr = cls.__dict__[name]
                if isinstance(attr, property):
                    return self.inline_function(attr.fget, [], {}, node, self_mv=mv, owner=cls)
                fn = self.unwrap_method(attr)
                if inspect.isfunction(fn):
                    if isinstance(attr, staticmethod):
                        return S.PythonValue(fn)
                    return S.MethodValue(mv, fn, name, cls)
                break
        if name in d:
            val = d[name]
            if isinstance(val, _Tensor):
                return self._getattr(mv.value, name, T.TENSOR, node)
            typ = module_attribute_type(m, name)
            if typ is not None and (name in written_attributes(type(m))  # assigned by scripted code: read at run time
                                    or isinstance(typ, (T.ListType, T.DictType))):  # or mutable (Attribute, List[T])
                return self._getattr(mv.value, name, typ, node)
            return self.sugar(val, node)
        try:
            val = getattr(m, name)
        except AttributeError:
            raise self.error(f"Module '{type(m).__name__}' has no attribute '{name}'", node) from None
        return self.sugar(val, node)

    def call_module(self, mv, args, kwargs, node):
        m = mv.module
        if isinstance(m, TracedModule) and "_original" in m.__dict__:
            vals = [self.as_value(a, node) for a in args]
            if kwargs:
                raise self.error("keyword arguments to a compiled submodule are not supported", node)
            return self.inline_graph(m.inlined_graph, [mv.value, *vals], node)[0]
        for cls in type(m).__mro__:
            if "forward" in cls.__dict__:
                fn = self.unwrap_method(cls.__dict__["forward"])
                return self.call_method(S.MethodValue(mv, fn, "forward", cls), args, kwargs, node)
        raise self.error(f"Module '{type(m).__name__}' has no forward", node)

    def call_method(self, meth, args, kwargs, node):
        fn = meth.fn
        if getattr(fn, UNUSED_ATTR, False):
            return self.unused_call(fn, node)
        if getattr(fn, IGNORE_ATTR, False):
            if meth.name == "forward":
                vals = [self.as_value(a, node) for a in args]
                n = self.insert(K.CALL_MODULE, [meth.mv.value, *vals], 1, node=node)
                ann = fn.__annotations__.get("return")
                n.output().type = (from_annotation(ann, fn.__globals__) if ann else None) or T.TENSOR
                return n.output()
            return self.python_call(fn, args, kwargs, node, self_value=meth.mv.value)
        return self.inline_function(fn, args, kwargs, node, self_mv=meth.mv, owner=meth.owner)

    # -- iteration -----------------------------------------------------------------------------------
    def iteration(self, it, node):
        """("unrolled", items) or ("loop", trip count, element(index) -> value)."""
        if isinstance(it, (S.ModuleValue, S.PythonValue)):
            it = it.iterate(self, node)
        if isinstance(it, S.Unrolled):
            return ("unrolled", list(it.items))
        if isinstance(it, S.RangeValue):
            return self._range_iter(it, node)
        if isinstance(it, S.ZipValue):
            specs = [self.iteration(p, node) for p in it.parts]
            if all(s[0] == "unrolled" for s in specs):
                n = min(len(s[1]) for s in specs)
                return ("unrolled", [S.Unrolled([s[1][i] for s in specs]) for i in range(n)])
            if any(s[0] == "unrolled" for s in specs):
                raise self.error("zip() of a tuple and a run-time sequence is not supported in script code", node)
            trip = specs[0][1]
            for s in specs[1:]:
                trip = self.scalar_op(K.MIN, [trip, s[1]], T.INT, node)
            return ("loop", trip, lambda i: S.Unrolled([s[2](i) for s in specs]))
        if isinstance(it, S.EnumerateValue):
            spec = self.iteration(it.it, node)
            if spec[0] == "unrolled":
                return ("unrolled", [S.Unrolled([self.const(k + it.start, node), x]) for k, x in enumerate(spec[1])])

            def element(i):
                k = i if it.start == 0 else self.binary("add", i, self.const(it.start, node), node)
                return S.Unrolled([k, spec[2](i)])

            return ("loop", spec[1], element)
        v = self.as_value(it, node)
        t = v.type
        if isinstance(t, T.PyObjectType):  # a fallback's value: Python iterates it once, into a list
            return self.iteration(self.scalar_op("aten::list", [v], T.ListType(T.PYOBJECT), node), node)
        if isinstance(t, T.TupleType):
            return ("unrolled", self.tuple_elements(v, node))
        if isinstance(t, (T.ListType, T.StrType)):
            trip = self.scalar_op(K.LEN, [v], T.INT, node)
            elem = t.elem if isinstance(t, T.ListType) else T.STR

            def element(i):
                n = self.insert(K.GETITEM, [v, i], 1, node=node)
                n.output().type = elem
                return n.output()

            return ("loop", trip, element)
        if isinstance(t, T.DictType):
            keys = self.scalar_op("aten::keys", [v], T.ListType(t.key), node)
            return self.iteration(keys, node)
        if isinstance(t, T.TensorType):
            trip = O.emit_tensor_method(self, v, "size", [self.const(0, node)], {}, node)
            return ("loop", trip, lambda i: O.emit_ops(self, R.overloads("select"), [v, self.const(0, node), i], {},
                                                       node, "select"))
        raise self.error(f"'{t}' object is not iterable", node)

    def _range_iter(self, r, node):
        try:
            start, step = O.constant_of(r.start), O.constant_of(r.step)
        except LookupError:
            start = step = None
        if start == 0 and step == 1:
            return ("loop", r.stop, lambda i: i)
        trip = self.scalar_op("aten::__range_length", [r.start, r.stop, r.step], T.INT, node)
        return ("loop", trip, lambda i: self.scalar_op("aten::__derive_index", [i, r.start, r.step], T.INT, node))


__all__ = ["Calls", "UNINITIALIZED"]
