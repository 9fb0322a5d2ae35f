"""How code below the dispatcher calls it: the one place the dispatcher plugs in.

Ops are defined below the dispatcher and never import it, yet composites and
derivative rules call other ops (``api.mul(g, x)``), ``OpDef`` objects are
callable, a generator hands out its state as a Tensor, and the Tensor class
(also below the dispatcher) gets a method or operator for every registry op
when it is created (``registry_methods``). All of those go through the entry
points ``toolkit.dispatch`` installs when it is imported (``toolkit``'s import
does that before anything can run an op), as PyTorch's kernels reach its
dispatcher through a table filled at load time.

The entry points are this module's globals, so a Tensor method reaches the
dispatcher with a plain global lookup, no dearer than a direct import would be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from . import registry as _registry


class Dispatcher(NamedTuple):
    """The dispatcher's entry points that the layers below it call."""

    bind: Callable[..., list]  # bind(op, args, kwargs) -> bound arguments
    execute: Callable[..., Any]  # execute(op, bound) -> result
    call_op: Callable[..., Any]  # call_op(op, args, kwargs): bind and execute one overload
    call_overloads: Callable[..., Any]  # call_overloads(ops, args, kwargs): the first overload that fits
    call_pair: Callable[..., Any]  # call_pair(ops, tensor, tensor_or_number): an operator's call
    wrap: Callable[..., Any]  # wrap(ndarray) -> Tensor


def _unplugged(*args, **kwargs):
    raise RuntimeError("ops cannot run before toolkit.dispatch is imported; import toolkit first")


class _Unplugged:
    def __getattr__(self, name: str):
        return _unplugged


DISPATCHER: Dispatcher | _Unplugged = _Unplugged()
# The same entry points as module globals, for the hot paths below the dispatcher (Tensor methods, indexing).
bind = execute = call_overloads = call_pair = wrap = _unplugged


def install(dispatcher: Dispatcher) -> None:
    """Called once by ``toolkit.dispatch`` at import."""
    global DISPATCHER, bind, execute, call_overloads, call_pair, wrap
    DISPATCHER = dispatcher
    bind, execute, call_overloads, call_pair, wrap = (
        dispatcher.bind, dispatcher.execute, dispatcher.call_overloads, dispatcher.call_pair, dispatcher.wrap)


def function(ops: list):
    """The function that calls op overloads ``ops`` with user arguments (``toolkit.add`` and the like).

    It reaches the dispatcher through this module's globals when called, so it may be made before the
    dispatcher is installed (a Tensor method made at class creation may hold one).
    """
    if len(ops) == 1:
        o = ops[0]

        def fn(*args, **kwargs):
            try:
                bound = bind(o, args, kwargs)
            except TypeError:  # arguments that fit no schema may be names (``names=``, dims by name): retried there
                return call_overloads(ops, args, kwargs)
            return execute(o, bound)

    else:

        def fn(*args, **kwargs):
            return call_overloads(ops, args, kwargs)

    return fn


# ---------------------------------------------------------------------------------------------
# The Tensor's methods and operators, from the registry
# ---------------------------------------------------------------------------------------------
def registry_methods(cls: type) -> type:
    """Class decorator: a method or operator on ``cls`` for every registry op that declares one.

    An op's ``method`` names its method; its ``dunders`` name Python's operators: ``"add"`` gives
    ``__add__``, ``"radd"`` the reflected form, ``"iadd"`` the in-place variant. A method written in the
    class body or a base class takes precedence over the registry's. Run when the class is created, after every op family
    has registered (the Tensor's module imports ``toolkit.ops`` first).
    """
    grouped: dict[str, list] = {}
    for d in _registry.all_ops():
        if d.method:
            grouped.setdefault(d.method if isinstance(d.method, str) else d.name, []).append(d)
    written = {}  # what the class and its bases (other than object) define: it takes precedence
    for base in reversed(cls.__mro__[:-1]):
        written.update(base.__dict__)
    for name, ops in grouped.items():
        existing = written.get(name)
        if existing is not None and not getattr(existing, "_from_registry", False):
            continue
        setattr(cls, name, _method(f"{cls.__name__}.{name}", name, ops))
    for d in _registry.all_ops():
        if not d.dunders:
            continue
        ops = [o for o in _registry.overloads(d.name) if o.dunders]
        for dunder in d.dunders:
            qual = f"{cls.__name__}.__{dunder}__"
            if dunder.startswith("i") and dunder[1:] in d.dunders:
                fn = _method(qual, f"__{dunder}__", [o.inplace_variant for o in ops if o.inplace_variant is not None])
            elif dunder.startswith("r") and dunder[1:] in d.dunders:
                fn = _reflected(cls, qual, dunder, ops)
            elif dunder in _BINARY_OPERATORS:
                fn = _binary(cls, qual, dunder, ops)
            else:
                fn = _method(qual, f"__{dunder}__", ops)
            setattr(cls, f"__{dunder}__", fn)
    return cls


def _named(fn, qualname: str, name: str, doc: str):
    fn.__name__ = name
    fn.__qualname__ = qualname
    fn.__doc__ = doc
    fn._from_registry = True
    return fn


def _method(qualname: str, name: str, ops: list):
    if len(ops) == 1:
        o = ops[0]

        def method(self, *args, **kwargs):
            try:
                bound = bind(o, (self, *args), kwargs)
            except TypeError:  # dimensions given by name: ``call_overloads`` retries them as positions
                return call_overloads(ops, (self, *args), kwargs)
            return execute(o, bound)

    else:

        def method(self, *args, **kwargs):
            return call_overloads(ops, (self, *args), kwargs)

    return _named(method, qualname, name, ops[0].doc)


_BINARY_OPERATORS = frozenset((
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift",
    "eq", "ne", "lt", "le", "gt", "ge",
))
_OPERANDS = (int, float, bool, complex, np.number, np.bool_)


def _binary(cls: type, qualname: str, name: str, ops: list):
    # Python's protocol: an unsupported operand gives NotImplemented, so ``t == None`` is False and
    # ``t < None`` raises Python's TypeError, as in PyTorch.
    operands = (cls, *_OPERANDS)

    def method(self, other):
        t = type(other)
        if t is cls or t is float or t is int:
            return call_pair(ops, self, other)
        if not isinstance(other, operands):
            if not isinstance(other, np.ndarray):
                return NotImplemented
            other = wrap(other)
        return call_overloads(ops, (self, other), {})

    return _named(method, qualname, f"__{name}__", ops[0].doc)


# ``2 * x`` runs (and traces) as PyTorch's Tensor runs it: commutative operators take the tensor first
# (``mul(x, 2)``), ``2 - x`` is ``rsub(x, 2)``, ``2 / x`` is ``reciprocal(x) * 2``; the others take the
# number first (``pow(2, x)``, ``remainder(2, x)``).
REFLECTED_TENSOR_FIRST = frozenset(("radd", "rmul", "rand", "ror", "rxor"))


def _reflected(cls: type, qualname: str, name: str, ops: list):
    tensor_first = name in REFLECTED_TENSOR_FIRST
    if name == "rsub":
        ops, tensor_first = _registry.overloads("rsub"), True
    operands = (cls, *_OPERANDS)

    def method(self, other):
        if isinstance(other, np.ndarray):
            other = wrap(other)  # numpy defers to us (__array_priority__): result is a Tensor
        elif not isinstance(other, operands):
            return NotImplemented
        if tensor_first:
            return call_pair(ops, self, other)
        if name == "rtruediv":
            return self.reciprocal() * other
        return call_overloads(ops, (other, self), {})

    return _named(method, qualname, f"__{name}__", None)
