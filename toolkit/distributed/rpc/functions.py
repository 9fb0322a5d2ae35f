"""Callables by name and errors by value: how a function reaches the callee and how its error comes back.

A function travels as ``(module, qualname)`` and the callee imports it, so only code both sides can import runs
remotely (never a pickled code object). Functions re-exported under a public module (``toolkit.add`` is defined
in ``toolkit.ops``) are named by the first public module that gives back the same object.

An error raised on the callee comes back as its type's name, its ``repr`` and its traceback text; the caller
raises the same type when it can import it and build it from one message, else a ``RuntimeError``, with the
message in PyTorch's shape: ``On WorkerInfo(id=1, name=worker1):\\nValueError('...')\\nTraceback ...``.
"""

from __future__ import annotations

import builtins
import importlib
import os
import threading
import traceback
from collections.abc import Callable

__all__ = ["qualified_name", "resolve", "describe_error", "rebuild_error"]

# Where public callables live when their __module__ is an implementation module.
_PUBLIC_MODULES = ("toolkit", "toolkit.nn.functional", "toolkit.linalg", "toolkit.special", "toolkit.fft",
                   "toolkit.tensor", "operator", "math")

# Frames of these folders (this package, toolkit.futures) lead every callee's traceback: they are left out.
_MACHINERY = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
              os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "futures") + os.sep)

_cache: dict[tuple[str, str], Callable] = {}
_cache_lock = threading.Lock()


def _lookup(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def qualified_name(func) -> tuple[str, str]:
    """``(module, qualname)`` under which the callee can import ``func``; ``TypeError`` when there is none."""
    if not callable(func):
        raise TypeError("function should be callable.")
    qualname = getattr(func, "__qualname__", None)
    module = getattr(func, "__module__", None)
    if isinstance(getattr(func, "__self__", None), type):  # a classmethod: named through its class
        module, qualname = func.__self__.__module__, f"{func.__self__.__qualname__}.{func.__name__}"
    if qualname is None or "<" in qualname:
        raise AttributeError(f"Can't pickle local object '{qualname or repr(func)}': an RPC function must be "
                             "importable by its module and name on the callee (a module-level function, a "
                             "class, a builtin or a toolkit op)")
    candidates = [module] if module else []
    if module is None and getattr(builtins, getattr(func, "__name__", ""), None) is func:
        candidates.append("builtins")
    candidates += [m for m in _PUBLIC_MODULES if m != module]
    for m in candidates:
        for name in (qualname, getattr(func, "__name__", qualname)):
            try:
                if _lookup(m, name) is func:
                    return m, name
            except (ImportError, AttributeError):
                continue
    raise TypeError(f"{func!r} cannot be sent by name: {module}.{qualname} does not import as this object (bound "
                    "methods of instances cannot travel; call a module-level function, or use an RRef and "
                    "rref.rpc_sync().method(...))")


def resolve(module: str, qualname: str) -> Callable:
    """The callable ``module.qualname``, imported on first use and cached."""
    key = (module, qualname)
    func = _cache.get(key)
    if func is None:
        func = _lookup(module, qualname)
        if not callable(func):
            raise TypeError(f"{module}.{qualname} is not callable")
        with _cache_lock:
            _cache[key] = func
    return func


def describe_error(exc: BaseException, where: str) -> dict:
    """What crosses the wire for an error raised on worker ``where`` (a WorkerInfo's text): plain values only.

    The traceback starts at the first frame outside the RPC machinery (the user's function), unless the error
    arose inside the machinery itself."""
    first = exc.__traceback__
    while first is not None and first.tb_frame.f_code.co_filename.startswith(_MACHINERY):
        first = first.tb_next
    tb = "".join(traceback.format_exception(type(exc), exc, first or exc.__traceback__))
    t = type(exc)
    return {"module": t.__module__, "qualname": t.__qualname__, "msg": f"On {where}:\n{exc!r}\n{tb}"}


def rebuild_error(desc: dict) -> BaseException:
    """The caller's exception for a described error: the same type where it can be built, else RuntimeError."""
    msg = desc["msg"]
    try:
        exc_type = _lookup(desc["module"], desc["qualname"])
        if isinstance(exc_type, type) and issubclass(exc_type, Exception):
            exc = exc_type(msg)
            if str(exc) == msg or isinstance(exc, KeyError):
                return exc
    except Exception:  # noqa: BLE001 - an exception type that cannot be imported or built: fall back below
        pass
    return RuntimeError(f"{desc['module']}.{desc['qualname']}: {msg}")
