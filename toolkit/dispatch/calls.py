"""Calling an op with user arguments: bind, then execute; among overloads, the first whose schema fits."""

from __future__ import annotations

from ..ops.registry import OpDef
from ..tensor import Tensor
from .binding import bind, type_name
from .running import execute


def call_op(op: OpDef, args: tuple, kwargs: dict):
    """Call one op (a specific overload) with user arguments."""
    return execute(op, bind(op, args, kwargs))


def call_overloads(ops: list, args: tuple, kwargs: dict):
    """Pick the first overload whose schema the arguments fit, as PyTorch's argument parser does.

    An overload that takes a tensor where a tensor is passed wins over one that
    would turn that tensor into a number (``fill_(Tensor)`` over ``fill_(Scalar)``).
    """
    if len(ops) == 1:
        return execute(ops[0], bind(ops[0], args, kwargs))
    errors = []
    fallback = None
    for o in ops:
        try:
            bound = bind(o, args, kwargs)
        except TypeError as e:
            errors.append((o, str(e)))  # the message only: keeping e would hold this frame in a cycle
            continue
        if _coerces_tensor(o, args, kwargs):
            if fallback is None:
                fallback = (o, bound)
            continue
        return execute(o, bound)
    if fallback is not None:
        return execute(*fallback)
    sig = ", ".join([type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in kwargs.items()])
    raise TypeError(
        f"{ops[0].name}() received an invalid combination of arguments - got ({sig}), but expected one of:\n"
        + "\n".join(f"  {o.schema}: {e}" for o, e in errors)
    )


def _coerces_tensor(op: OpDef, args: tuple, kwargs: dict) -> bool:
    params = op.args
    for i, v in enumerate(args):
        if i < len(params) and isinstance(v, Tensor) and not params[i].is_tensor:
            return True
    for k, v in kwargs.items():
        if isinstance(v, Tensor) and k in op.arg_names and not params[op.arg_names.index(k)].is_tensor:
            return True
    return False
