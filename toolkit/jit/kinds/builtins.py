"""How the interpreter runs the nodes scripted code adds: scalar arithmetic, list and dict operations,
``prim::Print``, ``prim::RaiseException``, ``prim::PythonOp`` (Python fallback) and friends.

Each kind maps to one handler ``handler(node, env)``; ``register()`` declares the ``aten::`` kinds in the
registry of kinds (``ir.kinds``, where the ``prim::`` ones are declared) with their handler and function,
which the interpreter and compiled plans share, and tells the verifier these ``aten::`` kinds are builtins (they
have no op registry entry: they act on Python values, not tensors). ``SCHEMAS`` gives each kind a graph loaded
from an archive may use the argument types it accepts (``toolkit.jit.serialization.builtin_schema``); a kind
without one never loads. An argument a kind writes is annotated ``(a!)`` there, which is how ``kinds.effects``
knows it (``aten::append``: ``t[](a!) self``).
"""

from __future__ import annotations

import builtins
import operator
import string
import warnings

import numpy as np

from ...ops import registry
from ...tensor import wrap
from ..ir import kinds as K
from ..ir.graph import Node
from ..ir.verify import BUILTIN_KINDS

# kind -> Python function of the node's input values, returning its one output (or None for no output)
FUNCTIONS: dict = {}


def _binary(name: str, fn, suffixes=("int", "float", "bool", "Scalar", "str", "t")) -> None:
    for s in suffixes:
        FUNCTIONS[f"aten::{name}.{s}"] = fn


# Python's binary operators on plain values, by the name Tensor's dunders use: (builtin kind as TorchScript
# spells it, the function). The compiler folds constants with the same functions the interpreter runs.
SCALAR_OPERATORS = {
    "add": ("add", operator.add), "sub": ("sub", operator.sub), "mul": ("mul", operator.mul),
    "truediv": ("div", operator.truediv), "floordiv": ("floordiv", operator.floordiv),
    "mod": ("remainder", operator.mod), "pow": ("pow", operator.pow), "lt": ("lt", operator.lt),
    "le": ("le", operator.le), "gt": ("gt", operator.gt), "ge": ("ge", operator.ge), "eq": ("eq", operator.eq),
    "ne": ("ne", operator.ne), "and": ("__and__", operator.and_), "or": ("__or__", operator.or_),
    "xor": ("__xor__", operator.xor), "lshift": ("__lshift__", operator.lshift),
    "rshift": ("__rshift__", operator.rshift),
}
for _kind, _fn in SCALAR_OPERATORS.values():
    _binary(_kind, _fn)


def _extend(lst, other):
    lst.extend(other)
    return lst


def _append(lst, x):
    lst.append(x)
    return lst


def _set_item(obj, i, v):
    obj[i] = v


def _insert(lst, i, x):
    lst.insert(i, x)


def _range_length(lo, hi, step):
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return len(range(lo, hi, step))


_FORMATTER = string.Formatter()


def check_format(fmt: str) -> None:
    """Raise ValueError unless every field of ``fmt`` is automatic (``{}``, ``{!r}``, ``{:.3f}``), as TorchScript's
    ``aten::format`` requires: a field naming an argument (``{0.__class__}``, ``{x[k]}``) reads attributes and
    items of the arguments, and a spec nesting another field does too."""
    for _, field, spec, _ in _FORMATTER.parse(fmt):
        if field is not None and (field != "" or "{" in (spec or "")):
            raise ValueError(f"format(): only '{{}}' fields are supported, got '{{{field}' in {fmt!r:.80}")


def _format(fmt, *args):
    if not isinstance(fmt, str):
        raise TypeError(f"format() expects a str, got {type(fmt).__name__}")
    check_format(fmt)
    return fmt.format(*args)


def _num_to_tensor(a):
    """``prim::NumToTensor``: a number made a 0-dim tensor of its kind (an int a ``Long`` one, as a traced size)."""
    return wrap(np.asarray(a))


def _setitem_tensor(t, idx, v):
    t[idx] = v
    return t


FUNCTIONS.update({
    "aten::neg.int": operator.neg, "aten::neg.float": operator.neg, "aten::neg.Scalar": operator.neg,
    "aten::__not__": operator.not_, "aten::__is__": operator.is_, "aten::__isnot__": operator.is_not,
    "aten::__contains__": lambda c, x: x in c, K.LEN: len, "aten::Bool": bool, "aten::Int": int,
    "aten::Float": float, "aten::str": str, "aten::list": list, K.MIN: min, K.MAX: max, K.ABS: abs,
    "aten::append": _append, "aten::add_.t": _extend, "aten::extend": _extend, "aten::_set_item": _set_item,
    "aten::insert": _insert, "aten::pop": lambda lst, *i: lst.pop(*i), "aten::clear": lambda c: c.clear(),
    "aten::slice.t": lambda s, a, b, c: s[a:b:c], "aten::__range_length": _range_length,
    "aten::__derive_index": lambda i, start, step: start + i * step, "aten::format": _format,
    "aten::keys": lambda d: list(d.keys()), "aten::values": lambda d: list(d.values()),
    "aten::items": lambda d: list(d.items()), "aten::get": lambda d, k, default=None: d.get(k, default),
    "aten::setitem_.Tensor": _setitem_tensor, "aten::isinstance": isinstance,
    K.UNCHECKED_CAST: lambda x: x, "aten::sorted": sorted, "aten::sum.int": sum,
    K.SLICE: slice, K.ELLIPSIS: lambda: Ellipsis, K.NUM_TO_TENSOR: _num_to_tensor,
})
# hand-written Tensor methods with a builtin kind of their own (loadable from archives, printed as TorchScript does)
METHOD_KINDS = frozenset(("size", "dim", "numel", "item", "contiguous", "is_floating_point"))


def _call_method(name: str):
    return lambda t, *args: getattr(t, name)(*args)


FUNCTIONS.update({f"aten::{m}": _call_method(m) for m in METHOD_KINDS})


def _binary_schemas() -> dict:
    """The schemas of the binary operators, per suffix, as the compiler types them (``exprs.expr_BinOp``)."""
    out = {}
    for name, _ in SCALAR_OPERATORS.values():
        cmp = name in ("lt", "le", "gt", "ge", "eq", "ne")
        bits = name in ("__and__", "__or__", "__xor__")
        number = "float" if name == "div" else "int"

        def r(t: str, cmp=cmp) -> str:
            return "bool" if cmp else t

        out.update({
            f"aten::{name}.int": (f"(int a, int b) -> {r(number)}",),
            f"aten::{name}.bool": (f"(bool a, bool b) -> {r('bool' if bits else number)}",),
            f"aten::{name}.float": (f"(float a, float b) -> {r('float')}",),
            f"aten::{name}.str": (f"(str a, str b) -> {r('str')}",),
            f"aten::{name}.t": (f"(t[] a, t[] b) -> {r('t[]')}",),
            f"aten::{name}.Scalar": (f"(Any a, Any b) -> {r('Any')}",),
        })
    return out


# kind -> the overloads (TorchScript-style schemas) a loaded graph may use it with
# (see toolkit.jit.serialization.builtin_schema)
SCHEMAS: dict = {
    **_binary_schemas(),
    "aten::neg.int": ("(int a) -> int",), "aten::neg.float": ("(float a) -> float",),
    "aten::neg.Scalar": ("(Any a) -> Any",), "aten::__not__": ("(bool a) -> bool",),
    "aten::__is__": ("(Any a, Any b) -> bool",), "aten::__isnot__": ("(Any a, Any b) -> bool",),
    "aten::__contains__": ("(Any container, Any el) -> bool",),
    K.LEN: ("(t[] a) -> int", "(Dict(k, v) a) -> int", "(str a) -> int", "(Tensor a) -> int"),
    "aten::Bool": ("(Any a) -> bool",), "aten::Int": ("(Any a) -> int",), "aten::Float": ("(Any a) -> float",),
    "aten::str": ("(Any a) -> str",), "aten::list": ("(t[] a) -> t[]",),
    K.MIN: ("(int a, int b, *int rest) -> int", "(float a, float b, *float rest) -> float", "(t[] a) -> t"),
    K.MAX: ("(int a, int b, *int rest) -> int", "(float a, float b, *float rest) -> float", "(t[] a) -> t"),
    K.ABS: ("(int a) -> int", "(float a) -> float"),
    "aten::append": ("(t[](a!) self, t el) -> ()",), "aten::add_.t": ("(t[](a!) self, t[] other) -> t[]",),
    "aten::extend": ("(t[](a!) self, t[] other) -> ()",),
    "aten::_set_item": ("(t[](a!) l, int idx, t el) -> ()", "(Dict(k, v)(a!) d, k key, v value) -> ()"),
    "aten::insert": ("(t[](a!) self, int idx, t el) -> ()",),
    "aten::pop": ("(t[](a!) self) -> t", "(t[](a!) self, int idx) -> t"),
    "aten::clear": ("(t[](a!) self) -> ()", "(Dict(k, v)(a!) self) -> ()"),
    "aten::slice.t": ("(t[] l, int? start, int? end, int? step) -> t[]",
                      "(str s, int? start, int? end, int? step) -> str"),
    "aten::__range_length": ("(int lo, int hi, int step) -> int",),
    "aten::__derive_index": ("(int index, int start, int step) -> int",),
    "aten::format": ("(str fmt, *Any args) -> str",),
    "aten::keys": ("(Dict(k, v) self) -> k[]",), "aten::values": ("(Dict(k, v) self) -> v[]",),
    "aten::items": ("(Dict(k, v) self) -> (k, v)[]",),
    "aten::get": ("(Dict(k, v) self, k key) -> v?", "(Dict(k, v) self, k key, Any default) -> Any"),
    "aten::setitem_.Tensor": ("(Tensor(a!) self, Any index, Any value) -> Tensor",),
    K.UNCHECKED_CAST: ("(Any a) -> Any",), "aten::sorted": ("(t[] a) -> t[]",),
    "aten::sum.int": ("(t[] a) -> t",), K.SLICE: ("(int? start, int? stop, int? step) -> slice",),
    K.ELLIPSIS: ("() -> ellipsis",),
    "aten::size": ("(Tensor self) -> int[]", "(Tensor self, int dim) -> int"),
    "aten::dim": ("(Tensor self) -> int",), "aten::numel": ("(Tensor self) -> int",),
    "aten::item": ("(Tensor self) -> Any",), "aten::contiguous": ("(Tensor self) -> Tensor",),
    "aten::is_floating_point": ("(Tensor self) -> bool",),
    K.UNINITIALIZED: ("() -> Any",), K.PRINT: ("(*Any args) -> ()",),
    K.NUM_TO_TENSOR: ("(int a) -> Tensor", "(float a) -> Tensor", "(bool a) -> Tensor"),
    "aten::warn": ("(str message, int stacklevel, str category) -> ()",),
}


# kind -> how ``.code`` writes it where TorchScript prints a Python builtin (``Kind.printed_as``); the rest print as
# TorchScript prints them, ``torch.<name>(...)``
PRINTED_AS: dict = {"aten::Bool": "bool()", "aten::Float": "float()", "aten::str": "str()", "aten::sorted": "sorted()"}


def _function_handler(fn):
    def handler(n: Node, env: dict) -> None:
        out = fn(*[env[v] for v in n.inputs])
        if n.outputs:
            env[n.outputs[0]] = out

    return handler


def _uninitialized(n: Node, env: dict) -> None:
    env[n.outputs[0]] = None


def _print(n: Node, env: dict) -> None:
    print(*[env[v] for v in n.inputs])


def _raise(n: Node, env: dict) -> None:
    ref = n.attributes.get("exception")
    exc = ref.cls if ref is not None else RuntimeError
    msg = env[n.inputs[0]] if n.inputs else ""
    err = exc(msg) if msg is not None else exc()
    err._jit_annotated = False
    raise err


def _warn(n: Node, env: dict) -> None:
    """``warnings.warn(message, category, stacklevel)`` in scripted code (TorchScript's ``aten::warn``); the
    category travels as the name of a built-in Warning class so that printed code and archives keep it."""
    message, stacklevel, category = (env[v] for v in n.inputs)
    cls = getattr(builtins, category, None)
    if not (isinstance(cls, type) and issubclass(cls, Warning)):
        cls = UserWarning
    warnings.warn(message, cls, stacklevel=stacklevel)


def _tensor_method(n: Node, env: dict) -> None:
    """A Tensor method without a registry entry (``size``, ``item``, ``tolist``...): called as Python calls it."""
    vals = [env[v] for v in n.inputs]
    names = n.attributes.get("kwargs", ())
    k = len(vals) - len(names)
    out = getattr(vals[0], n["name"])(*vals[1:k], **dict(zip(names, vals[k:])))
    if n.outputs:
        env[n.outputs[0]] = out


def _python_op(n: Node, env: dict) -> None:
    """A Python fallback or ``@ignore``d call: the callable gets the input values and returns the outputs."""
    fn = n["callable"]
    out = fn(*[env[v] for v in n.inputs])
    outs = n.outputs
    if len(outs) == 1 and not n.attributes.get("unpack", False):
        env[outs[0]] = out
    elif outs:
        if not isinstance(out, (tuple, list)) or len(out) != len(outs):
            raise RuntimeError(f"{n['name']}: the Python code returned {type(out).__name__}, expected "
                               f"{len(outs)} values")
        for v, x in zip(outs, out):
            env[v] = x


def _setattr(n: Node, env: dict) -> None:
    setattr(env[n.inputs[0]], n["name"], env[n.inputs[1]])


def _named_tuple(n: Node, env: dict) -> None:
    env[n.outputs[0]] = n["cls"](*[env[v] for v in n.inputs])


def _tuple_index(n: Node, env: dict) -> None:
    env[n.outputs[0]] = env[n.inputs[0]][env[n.inputs[1]]]


def _module_constant(n: Node, env: dict) -> None:
    env[n.outputs[0]] = n["value"].module


def _module_call(n: Node, env: dict) -> None:
    """A submodule that is not compiled (a plain ``nn.Module`` with ``@ignore``d forward): called in Python."""
    vals = [env[v] for v in n.inputs]
    env[n.outputs[0]] = vals[0](*vals[1:])


_HANDLERS = {
    K.UNINITIALIZED: _uninitialized, K.PRINT: _print, K.RAISE_EXCEPTION: _raise,
    K.TENSOR_METHOD: _tensor_method, K.PYTHON_OP: _python_op, K.NAMED_TUPLE_CONSTRUCT: _named_tuple,
    K.TUPLE_INDEX: _tuple_index, K.CALL_MODULE: _module_call,
    K.MODULE_CONSTANT: _module_constant, K.SET_ATTR: _setattr, "aten::warn": _warn,
}  # the runtime adds prim::fork and aten::wait (add_handler), which run on its thread pool


def has_kind(kind: str) -> bool:
    return kind in FUNCTIONS or kind in _HANDLERS


def add_function(kind: str, fn, schemas: tuple = ()) -> None:
    """Register a builtin kind run by a plain Python function of its inputs.

    ``schemas`` (TorchScript-style, see ``SCHEMAS``) let graphs loaded from archives use it; without them the kind
    runs in scripted code but never loads.
    """
    if kind not in K.HANDLERS:
        FUNCTIONS[kind] = fn
        if schemas:
            SCHEMAS[kind] = tuple(schemas)
        _declared(kind).function = fn
        K.set_handler(kind, _function_handler(fn))


def add_handler(kind: str, handler) -> None:
    """Register a builtin kind run by ``handler(node, env)`` (the runtime's ``prim::fork`` and ``aten::wait``)."""
    _HANDLERS[kind] = handler
    _declared(kind)
    K.set_handler(kind, handler, replace=False)


def _declared(kind: str) -> K.Kind:
    """The registry's kind ``kind``, declared here for an ``aten::`` builtin the registry does not name: effects
    unknown (passes keep it where it is) except the arguments its ``SCHEMAS`` entry marks written (``(a!)``)."""
    k = K.lookup(kind)
    if k is None:
        overloads = SCHEMAS.get(kind, ("(*Any args) -> Any",))
        k = K.get(K.declare(K.Kind(kind + overloads[0], "A builtin of scripted code.", effects=K.CONSERVATIVE,
                                   printed_as=PRINTED_AS.get(kind, ""))))
    if kind.startswith("aten::"):
        BUILTIN_KINDS.add(kind)
    return k


def _check_no_clash() -> None:
    """A builtin kind must not shadow a registry op's node kind (the interpreter looks kinds up first)."""
    for kind in list(FUNCTIONS) + list(_HANDLERS):
        if kind.startswith("aten::"):
            try:
                registry.get(kind)
            except KeyError:
                continue
            raise RuntimeError(f"builtin kind {kind} clashes with a registry op")


def register() -> None:
    """Declare every scripted-code kind in the registry of kinds, with its handler and function, and add the
    ``aten::`` ones to the verifier's list of builtins."""
    _check_no_clash()
    for kind, fn in FUNCTIONS.items():
        _declared(kind).function = fn
        K.set_handler(kind, _function_handler(fn), replace=False)
    for kind, h in _HANDLERS.items():
        _declared(kind)
        K.set_handler(kind, h, replace=False)
