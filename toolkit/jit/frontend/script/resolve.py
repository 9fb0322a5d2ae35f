"""What a Python object found by name means in script code: a constant, a builtin, registry ops, a module...

The compile-time values themselves are in ``sugar``; this picks one for an object
the compiler finds in the function's globals, closure or defaults, and so is
the one place that knows every kind of them (``annotate``'s included, from
``annotations``, and the marks ``@ignore``/``@unused`` leave, from ``marks``).
"""

from __future__ import annotations

import builtins
import types as pytypes

from ....nn.modules.module import Module
from ....ops.quantized import PACKED_PARAMS
from ....ops.registry import OpDef
from ....tensor import Tensor as _Tensor
from . import sugar as S
from .annotations import AnnotateCall, annotate
from .marks import IGNORE_ATTR, UNUSED_ATTR


def sugar_object(c, obj, node):
    """What a Python object found by name means in script code."""
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return c.const(obj, node)
    if obj is annotate:
        return AnnotateCall()
    if isinstance(obj, _Tensor):
        return c.const(obj, node)
    if type(obj).__name__ in ("dtype", "qdtype", "device"):
        return c.const(obj, node)
    if isinstance(obj, tuple(cls for cls, _ in PACKED_PARAMS.values())):  # a quantized module's prepacked weight: a constant, as tracing makes it
        return c.const(obj, node)
    if isinstance(obj, OpDef):  # a registry op itself (``quantized_linear.linear_dynamic``)
        return S.OpsValue([obj], obj.name)
    try:
        builtin = _BUILTIN_OBJECTS.get(obj)
    except TypeError:
        builtin = None
    if builtin is not None:
        return S.Builtin(builtin)
    wrapped = getattr(obj, "__wrapped_ops__", None)
    if wrapped is not None and not getattr(obj, IGNORE_ATTR, False) and not getattr(obj, UNUSED_ATTR, False):
        return S.OpsValue(list(wrapped), obj.__name__)
    if isinstance(obj, Module):
        return S.ModuleValue(obj, c.const_module(obj, node))
    if isinstance(obj, pytypes.MethodType) and isinstance(obj.__self__, Module):
        mv = S.ModuleValue(obj.__self__, c.const_module(obj.__self__, node))
        return S.MethodValue(mv, obj.__func__, obj.__name__, type(obj.__self__))
    return S.PythonValue(obj)


_BUILTIN_OBJECTS = {getattr(builtins, n): n for n in S.SCRIPT_BUILTINS}
