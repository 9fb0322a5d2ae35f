"""Callable functions for registry ops, built on first use: ``api.add(x, y)``.

The package namespaces (``toolkit.add``, ``toolkit.linalg.norm``,
``toolkit.nn.functional.relu``) and derivative rules call ops through here, so
every call takes the one dispatch path.
"""

from __future__ import annotations

from . import out_argument as _out_argument
from . import registry as _registry
from . import runtime as _runtime

_cache: dict = {}
_public_cache: dict = {}  # name -> exported function: the internal one, or one taking ``out=``


def function_for(name: str):
    """The Python-facing function of op ``name``, choosing among its overloads per call."""
    fn = _cache.get(name)
    if fn is not None:
        return fn
    ops = _registry.overloads(name)
    if not ops:
        raise AttributeError(f"no op named {name!r}")
    fn = _runtime.function(ops)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = "\n\n".join(f"{o.schema}\n\n{o.doc}" for o in ops)
    fn.__wrapped_ops__ = ops
    _cache[name] = fn
    return fn


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return function_for(name)


def public_function_for(name: str):
    """The exported function of op ``name``: ``function_for``'s, taking PyTorch's ``out=`` where an overload
    does (``OpDef.out``). Internal calls use ``function_for`` and never check for ``out``."""
    fn = _public_cache.get(name)
    if fn is None:
        fn = _public_cache[name] = _out_argument.public_function(_registry.overloads(name), function_for(name))
    return fn


def exported(namespace: str | None = None) -> dict:
    """Functions exposed in a namespace: ``None`` for ``toolkit``, or ``"linalg"``, ``"nn.functional"``..."""
    out = {}
    for d in _registry.all_ops():
        if not d.function or d.namespace != namespace:
            continue
        public = d.function if isinstance(d.function, str) else d.name
        out[public] = public_function_for(d.name)
    return out
