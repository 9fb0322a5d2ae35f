"""Binding a call's arguments to an op's schema, as PyTorch's argument parser does.

Each op gets a plan once (which positions are tensors, numbers, lists, defaults); ``bind`` then checks and
normalizes the arguments against it and returns them as one list in schema order.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._core import dtypes as _dt
from .._core.device import as_device
from ..ops.registry import OpDef
from ..tensor import Tensor

NUMBER = (int, float, bool, complex, np.number, np.bool_)
# ``hook(tensor) -> int`` for an integer tensor passed where an op takes an int (``x.view(s, -1)``), the last
# one answering: the tracer's records where the int came from. Consulted on that path alone, never per call.
TENSOR_INT_HOOKS: list = []


class _BindError(TypeError):
    pass


def type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _as_int(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, Tensor):
        if v.numel() == 1 and not v.dtype.is_floating_point:
            return TENSOR_INT_HOOKS[-1](v) if TENSOR_INT_HOOKS else int(v.item())
        raise _BindError("Tensor")
    try:
        return v.__index__()
    except (AttributeError, TypeError):
        raise _BindError(type(v).__name__) from None


def takes_number(op: OpDef, arg, pos: int) -> bool:
    """Whether tensor parameter ``arg`` at ``pos`` accepts a Python number: only a plain ``Tensor`` of an op
    that takes numbers as tensors, and as ``self`` only where PyTorch has a Scalar_Self overload."""
    return arg.type == "Tensor" and op.scalar_tensors and bool(pos or op.scalar_self)


def check_arg(op: OpDef, arg, v, pos: int):
    """Validate and normalize one argument; raise PyTorch's kind of TypeError when it does not fit."""
    t = arg.type
    try:
        return (_CHECKS.get(t) or _check_for(t))(op, arg, v, pos, t)
    except _BindError as e:
        raise TypeError(
            f"{op.name}(): argument '{arg.name}' (position {pos + 1}) must be {t}, not {e.args[0]}"
        ) from None


# One check per schema type, found by the type's name (a chain of name tests cost more than most checks): each
# takes (op, arg, v, pos, type) and returns the normalized value or raises _BindError naming what it got.
def _none(arg, t: str):
    if t.endswith("?") or (arg.has_default and arg.default is None):
        return None
    raise _BindError("NoneType")


def _tensor(op, arg, v, pos, t):
    if isinstance(v, Tensor):
        return v
    if isinstance(v, NUMBER) and takes_number(op, arg, pos):
        return v
    raise _BindError(type_name(v))


def _optional_tensor(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, Tensor):
        return v
    raise _BindError(type_name(v))


def _tensor_list(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
        raise _BindError(type_name(v))
    for e in v:
        if not (isinstance(e, Tensor) or (e is None and t == "Tensor?[]")):
            raise _BindError(f"{type(v).__name__} of {type_name(e)}")
    return list(v)


def _int(op, arg, v, pos, t):
    return _none(arg, t) if v is None else _as_int(v)


def _int_list(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, (list, tuple)):
        for e in v:
            if type(e) is not int:
                return tuple(_as_int(e) for e in v)
        return tuple(v)
    return (_as_int(v),) * _list_size(t)


def _float(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return v
    if isinstance(v, Tensor) and v.numel() == 1:
        return v.item()
    raise _BindError(type(v).__name__)


def _float_list(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, (list, tuple)):
        return tuple(float(e) for e in v)
    return (float(v),)


def _scalar(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, NUMBER):
        return v
    if isinstance(v, Tensor) and v.numel() == 1:
        return v.item()
    raise _BindError(type_name(v))


def _bool(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise _BindError(type(v).__name__)


def _str(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, str):
        return v
    raise _BindError(type(v).__name__)


def _scalar_type(op, arg, v, pos, t):
    if v is None:
        return _none(arg, t)
    if isinstance(v, Tensor):  # ``x.view(n)`` with a tensor ``n``: the size overload, as in PyTorch
        raise _BindError("Tensor")
    return _dt.as_dtype(v)


def _device(op, arg, v, pos, t):
    return _none(arg, t) if v is None else as_device(v)


def _unchecked(op, arg, v, pos, t):
    return _none(arg, t) if v is None else v  # Generator?, Any, Layout?: checked by the kernel


_CHECKS = {"Tensor": _tensor, "Tensor?": _optional_tensor, "Tensor[]": _tensor_list, "Tensor?[]": _tensor_list}
for _names, _check in ((("int", "int?", "SymInt", "SymInt?"), _int), (("float", "float?"), _float),
                       (("Scalar", "Scalar?"), _scalar), (("bool", "bool?"), _bool), (("str", "str?"), _str),
                       (("ScalarType", "ScalarType?"), _scalar_type), (("Device", "Device?"), _device)):
    _CHECKS.update(dict.fromkeys(_names, _check))


def _check_for(t: str):
    """The check of a type without an entry yet (lists of a size, ``int[2]``; types checked by the kernel)."""
    check = _int_list if t.startswith(("int[", "SymInt[")) else _float_list if t.startswith("float[") else _unchecked
    _CHECKS[t] = check
    return check


def _plan(op: OpDef):
    """Per-op binding plan, made once: positional range, tensor flags, default values."""
    params = op.args
    positional = [p for p in params if not p.kwarg_only]
    n_min = 0
    for i, p in enumerate(positional):
        if not p.has_default:
            n_min = i + 1
    defaults = []
    for p in params:
        if p.has_default:
            defaults.append(p.default if not p.type.startswith("int[") or p.default is None else default_ints(p))
        else:
            defaults.append(None)
    if op.tensor_varargs is not None:
        n_min = len(positional) + 1  # ``einsum(eq, a, b)``: trailing tensors are packed by _bind_slow
    if op.required_kwargs:
        n_min = len(positional) + 1  # a keyword-only argument without default: no call without keywords binds
    is_tensor = tuple(p.type == "Tensor" for p in params)
    # What follows two leading tensors (an operator's call, ``a + b``) when binding needs nothing else: defaults.
    pair_tail = tuple(defaults[2:]) if n_min <= 2 <= len(positional) and is_tensor[:2] == (True, True) else None
    # The most positional arguments a call may pass: more are packed only into a trailing int list or tensors.
    ints_last = bool(positional) and positional[-1].type.startswith("int[")
    packs = op.tensor_varargs is not None or ints_last
    max_args = float("inf") if packs else len(positional)
    # For calls with keywords: each parameter's position by name, and the positions that have no default.
    index = {p.name: i for i, p in enumerate(params)}
    required = tuple(i for i, p in enumerate(params) if not p.has_default)
    # Whether more positional arguments than the schema's pack into its last one, an int list (``x.view(2, 3)``).
    packs_ints = ints_last and op.tensor_varargs is None and not op.required_kwargs
    plan = (n_min, len(positional), is_tensor, tuple(defaults), len(params), pair_tail, max_args, index, required,
            packs_ints)
    op._bind_plan = plan
    return plan


def bind(op: OpDef, args: tuple, kwargs: dict) -> list:
    """Arguments in schema order with defaults filled in, validated."""
    plan = op._bind_plan or _plan(op)
    n = len(args)
    if n > plan[1] and plan[9] and not kwargs:
        k = plan[1] - 1  # the trailing ints are the list (``_bind_slow`` packs them alike)
        args, n = (*args[:k], args[k:]), plan[1]
    if not kwargs and plan[0] <= n <= plan[1]:
        is_tensor, params = plan[2], op.args
        out = []
        for i in range(n):
            v = args[i]
            out.append(v if is_tensor[i] and type(v) is Tensor else check_arg(op, params[i], v, i))
        if n < plan[4]:
            out.extend(plan[3][n:])
        return out
    if kwargs and n <= plan[1] and op.tensor_varargs is None:
        return _bind_keywords(op, plan, args, kwargs)
    return _bind_slow(op, args, kwargs)


def _bind_keywords(op: OpDef, plan: tuple, args: tuple, kwargs: dict) -> list:
    """``bind`` for a call with keywords and no more positional arguments than the schema has. A call that
    cannot bind (an unknown or repeated keyword, a required argument missing) takes ``_bind_slow`` for its
    error; otherwise the values are checked in schema order, as there, so a bad one raises the same error."""
    index, n = plan[7], len(args)
    given = []
    for k, v in kwargs.items():
        i = index.get(k)
        if i is None or i < n:
            return _bind_slow(op, args, kwargs)
        given.append((i, v))
    for i in plan[8]:
        if i >= n and op.args[i].name not in kwargs:
            return _bind_slow(op, args, kwargs)
    is_tensor, params = plan[2], op.args
    out = [v if is_tensor[i] and type(v) is Tensor else check_arg(op, params[i], v, i) for i, v in enumerate(args)]
    out.extend(plan[3][n:])
    if len(given) > 1:
        given.sort(key=_first)
    for i, v in given:
        out[i] = v if is_tensor[i] and type(v) is Tensor else check_arg(op, params[i], v, i)
    return out


def _first(pair: tuple):
    return pair[0]


def _bind_slow(op: OpDef, args: tuple, kwargs: dict) -> list:
    params = op.args
    positional = [p for p in params if not p.kwarg_only]
    k = op.tensor_varargs
    if k is not None and len(args) > k and all(isinstance(a, Tensor) for a in args[k:]):
        args = tuple(args[:k]) + (list(args[k:]),)  # tensors passed as separate arguments, as torch.einsum allows
    if len(args) > len(positional):
        last = positional[-1] if positional else None
        if last is not None and last.type.startswith("int[") and len(args) > len(positional):
            k = len(positional) - 1
            args = tuple(args[:k]) + (tuple(args[k:]),)
        else:
            raise TypeError(
                f"{op.name}() takes {len(positional)} positional arguments but {len(args)} were given"
            )
    out = []
    for i, p in enumerate(params):
        if i < len(args) and not p.kwarg_only:
            if p.name in kwargs:
                raise TypeError(f"{op.name}() got multiple values for argument '{p.name}'")
            out.append(check_arg(op, p, args[i], i))
        elif p.name in kwargs:
            out.append(check_arg(op, p, kwargs[p.name], i))
        elif p.has_default:
            out.append(p.default if not p.type.startswith("int[") or p.default is None else default_ints(p))
        else:
            raise TypeError(f"{op.name}() missing required argument '{p.name}' (pos {i + 1})")
    if kwargs:
        for k in kwargs:
            if k not in op.arg_names:
                raise TypeError(f"{op.name}() got an unexpected keyword argument '{k}'")
    return out


def default_ints(p):
    d = p.default
    return tuple(d) if isinstance(d, (list, tuple)) else (d,) * _list_size(p.type)


_LIST_SIZES: dict = {}


def _list_size(t: str) -> int:
    """``int[2]``'s 2: one int stands for that many, as in PyTorch (``kernel_size=2`` is ``[2, 2]``)."""
    n = _LIST_SIZES.get(t)
    if n is None:
        size = t.partition("[")[2].partition("]")[0]
        n = _LIST_SIZES[t] = int(size) if size.isdigit() else 1
    return n


def is_number(v) -> bool:
    return isinstance(v, numbers.Number)
