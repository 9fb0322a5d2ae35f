"""Calling an op with user arguments: bind, then execute; among overloads, the first whose schema fits."""

from __future__ import annotations

from ..ops.registry import OpDef
from ..tensor import Tensor
from .binding import NUMBER, _plan, bind, takes_number, type_name
from .names import retry_named
from .running import execute


def call_op(op: OpDef, args: tuple, kwargs: dict):
    """Call one op (a specific overload) with user arguments."""
    return execute(op, bind(op, args, kwargs))


def call_overloads(ops: list, args: tuple, kwargs: dict):
    """Run the overload ``select_overload`` picks; arguments that fit none may name dimensions of a named
    tensor (``retry_named``)."""
    try:
        op, bound = (ops[0], bind(ops[0], args, kwargs)) if len(ops) == 1 else select_overload(ops, args, kwargs)
    except TypeError as e:
        return retry_named(ops, args, kwargs, e, call_overloads)
    return execute(op, bound)


def call_pair(ops: list, a: Tensor, b):
    """``a <op> b`` for a Tensor ``a`` and a Tensor or Python number ``b`` (Python's operators): where the op
    takes two tensors first and numbers for them, binding would pass both as they are and add the defaults,
    so the bound list is made directly; anything else takes ``call_overloads``."""
    op = ops[0]
    tail = (op._bind_plan or _plan(op))[5]
    if tail is None or len(ops) != 1 or (type(b) is not Tensor and not op.scalar_tensors):
        return call_overloads(ops, (a, b), {})
    return execute(op, [a, b, *tail])


def select_overload(ops: list, args: tuple, kwargs: dict) -> tuple[OpDef, list]:
    """The first overload whose schema the arguments fit, and its bound arguments, as PyTorch's argument parser
    picks: ``ops`` come in the registry's order, where an overload taking a tensor comes before one that would
    turn it into a number (``fill_.Tensor`` before ``fill_.Scalar``), so the first fit is the right one.

    An overload that cannot fit for a reason seen without binding (a number where it takes a tensor, a
    required keyword missing) is passed over without the cost of a failed bind.
    """
    for o in ops:
        if o.required_kwargs and any(k not in kwargs for k in o.required_kwargs):
            continue
        if len(args) > (o._bind_plan or _plan(o))[6] or _number_for_tensor(o, args, kwargs):
            continue
        try:
            return o, bind(o, args, kwargs)
        except TypeError:
            continue
    raise _no_overload_fits(ops, args, kwargs)


def _number_for_tensor(op: OpDef, args: tuple, kwargs: dict) -> bool:
    """Whether an argument is a Python number where ``op`` takes a tensor that binding would refuse
    (``clamp(x, min=0)`` passes over ``clamp.Tensor``)."""
    params = op.args
    for i, v in enumerate(args):
        if i < len(params) and isinstance(v, NUMBER) and params[i].is_tensor and not takes_number(op, params[i], i):
            return True
    if kwargs:
        names = op.arg_names
        for k, v in kwargs.items():
            if isinstance(v, NUMBER) and k in names:
                i = names.index(k)
                if params[i].is_tensor and not takes_number(op, params[i], i):
                    return True
    return False


def _no_overload_fits(ops: list, args: tuple, kwargs: dict) -> TypeError:
    """PyTorch's error naming every overload and why the arguments do not fit it (bound again to say why)."""
    errors = []
    for o in ops:
        missing = [k for k in o.required_kwargs if k not in kwargs]
        if missing:
            errors.append((o, f"{o.name}() missing required keyword argument '{missing[0]}'"))
            continue
        try:
            bind(o, args, kwargs)
        except TypeError as e:
            errors.append((o, str(e)))
    sig = ", ".join([type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in kwargs.items()])
    return TypeError(
        f"{ops[0].name}() received an invalid combination of arguments - got ({sig}), but expected one of:\n"
        + "\n".join(f"  {o.schema}: {e}" for o, e in errors)
    )
