"""Calling an op with user arguments: bind, then execute; among overloads, the first whose schema fits."""

from __future__ import annotations

from ..ops import registry as R
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
    key = (id(ops), *map(type, args), *kwargs, *map(type, kwargs.values())) if kwargs else (id(ops), *map(type, args))
    hit = _CANDIDATES.get(key)
    if hit is None or hit[0] is not ops:  # (a list no longer alive may have left its id to this one)
        hit = _CANDIDATES[key] = (ops, _candidates(ops, args, kwargs))
        if len(_CANDIDATES) > _CANDIDATES_KEPT:
            _CANDIDATES.clear()
            _CANDIDATES[key] = hit
    for o in hit[1]:
        try:
            return o, bind(o, args, kwargs)
        except TypeError:
            continue
    raise _no_overload_fits(ops, args, kwargs)


# The overloads a call may fit, by the list of overloads called and the types of the call's arguments (and its
# keywords): what passes an overload over without binding follows from those alone.
_CANDIDATES: dict = {}
_CANDIDATES_KEPT = 4096
R.overload_listeners.append(_CANDIDATES.clear)  # an overload registered into a list already called


def _candidates(ops: list, args: tuple, kwargs: dict) -> tuple:
    """The overloads of ``ops`` that a call with these arguments' types may fit, in order: not those a required
    keyword is missing from, that take fewer positional arguments, or that take a tensor where a number is
    given (``_number_for_tensor``)."""
    fit = []
    for o in ops:
        if o.required_kwargs and any(k not in kwargs for k in o.required_kwargs):
            continue
        if len(args) > (o._bind_plan or _plan(o))[6] or _number_for_tensor(o, args, kwargs):
            continue
        fit.append(o)
    return tuple(fit)


def _number_for_tensor(op: OpDef, args: tuple, kwargs: dict) -> bool:
    """Whether an argument is a number where ``op`` takes a tensor that binding would refuse (``clamp(x, min=0)``
    passes over ``clamp.Tensor``), or a Python number where it takes a dtype (``x.view(6)`` over ``view.dtype``)."""
    params = op.args
    for i, v in enumerate(args):
        if i < len(params) and isinstance(v, NUMBER) and _refuses_number(op, params[i], i, v):
            return True
    if kwargs:
        names = op.arg_names
        for k, v in kwargs.items():
            if isinstance(v, NUMBER) and k in names:
                i = names.index(k)
                if _refuses_number(op, params[i], i, v):
                    return True
    return False


def _refuses_number(op: OpDef, param, i: int, v) -> bool:
    if param.is_tensor:
        return not takes_number(op, param, i)
    return param.type in ("ScalarType", "ScalarType?") and type(v) in _PYTHON_NUMBERS  # never a dtype


_PYTHON_NUMBERS = (int, float, bool, complex)


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
