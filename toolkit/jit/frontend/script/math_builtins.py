"""``math`` functions of one number in script code (``math.sqrt(x)``), as TorchScript's ``aten::sqrt.float``.

Each compiles to one builtin node per argument type (``aten::sqrt.int``, ``aten::sqrt.float``) that runs
Python's own ``math`` function, so compiled code gives the same bits as eager code, and archives load it.

>>> def scale(q, d: int):
...     return q * (1.0 / math.sqrt(d))
"""

from __future__ import annotations

import math
import types as pytypes

from ...ir import types as T
from ...ir.graph import Value
from ...kinds.builtins import add_function

# the functions of one number returning a float, by their TorchScript names
_UNARY = {math.sqrt: "sqrt", math.exp: "exp", math.expm1: "expm1", math.log10: "log10", math.log1p: "log1p",
          math.sin: "sin", math.cos: "cos", math.tan: "tan", math.tanh: "tanh", math.atan: "atan", math.erf: "erf"}

for _fn, _name in _UNARY.items():
    add_function(f"aten::{_name}.float", _fn, ("(float a) -> float",))
    add_function(f"aten::{_name}.int", _fn, ("(int a) -> float",))


def is_math_function(obj) -> bool:
    return isinstance(obj, pytypes.BuiltinFunctionType) and obj in _UNARY


def emit_math(c, fn, args: list, kwargs: dict, node) -> Value:
    """``aten::<name>.<int|float>(x)`` for ``math.<name>(x)``; a located error for other arguments."""
    name = _UNARY[fn]
    if kwargs or len(args) != 1:
        raise c.error(f"math.{name}() takes exactly one argument in script code", node)
    x = c.as_value(args[0], node)
    if isinstance(x.type, T.BoolType) or not isinstance(x.type, (T.IntType, T.FloatType)):
        raise c.error(f"math.{name}() expects an int or a float in script code, got {x.type}", node)
    suffix = "int" if isinstance(x.type, T.IntType) else "float"
    return c.scalar_op(f"aten::{name}.{suffix}", [x], T.FLOAT, node)
