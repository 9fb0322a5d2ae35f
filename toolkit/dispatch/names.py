"""Named tensors in the call path: outputs named by each op's ``name_rule``, and dimensions given by name.

Unnamed calls never come here. A tensor's names sit in its ``_extra`` dict, which the dispatcher already checks
for the conjugation bit, so the scan of a call's tensors raises ``NamedCall`` when it meets a name and the call
comes to ``run_named``. Dimension names (``x.sum('C')``) and factories' ``names=`` first fail to bind as ints;
``retry_named`` then translates them, so the binding of unnamed calls pays nothing either.
"""

from __future__ import annotations

from .._core import names as _n
from ..ops import registry as R
from ..ops.registry import OpDef
from ..tensor import Tensor

UNSUPPORTED = (" is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`, "
               "call the op with an unnamed tensor, and set names on the result of the operation.")
_FACTORY_KINDS = (R.FACTORY, R.RANDOM)


class NamedCall(Exception):
    """Raised where a call's scan of its tensors meets a named one (the caller goes on in ``run_named``)."""


def refuse_unnamed(op: OpDef) -> RuntimeError:
    """PyTorch's error for an op without named-tensor support given a named tensor."""
    name = op.qualified_name + (f".{op.overload}" if op.overload else "")
    return RuntimeError(name + UNSUPPORTED)


def _rule(op: OpDef):
    rule = op.name_rule
    if rule is None:
        raise refuse_unnamed(op)
    return _n.STANDARD.get(rule, rule) if isinstance(rule, str) else rule


def run_named(op: OpDef, bound: list, run):
    """Run ``op`` (by ``run(op, bound)``) with names ignored inside, then name its tensor outputs by its rule.
    Rules that need no output (marked ``early``) check the names before anything runs or is written."""
    rule = _rule(op)
    early = getattr(rule, "early", False)
    # An in-place op's self is its result: named already, it must keep its names (PyTorch's out= rule).
    written = _n.names_of(bound[0]) if op.kind == R.INPLACE else None
    names = _names_by(rule, op, bound, -1) if early else None
    if early and written is not None:
        _n.check_written(written, names)
    with _n.names_off():
        out = run(op, bound)
    outputs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, Tensor)]
    if outputs:
        if not early:
            names = _names_by(rule, op, bound, outputs[0].ndim)
            if written is not None:
                _n.check_written(written, names)
        for t in outputs:
            _n.set_names(t, names if names is not None and len(names) == t.ndim else None)
    return out


def _names_by(rule, op: OpDef, bound: list, out_ndim: int):
    """``rule``'s names for the call; a mismatch's error (PyTorch's words) also says the op and the shapes."""
    try:
        return rule(op, bound, out_ndim)
    except RuntimeError as e:
        shapes = " and ".join(str(list(t.shape)) for t in _n.tensors_of(op, bound))
        raise RuntimeError(f"{e} (in {op.qualified_name}, on tensors of shape {shapes})") from None


def _self_names(args: tuple, kwargs: dict) -> tuple | None:
    first = args[0] if args and isinstance(args[0], (list, tuple)) else ()  # cat's list of tensors
    for v in (*args, *first, kwargs.get("self"), kwargs.get("input"), *kwargs.get("tensors", ())):
        if isinstance(v, Tensor) and _n.names_of(v) is not None:
            return v
    return None


def _is_dim_param(arg) -> bool:
    return "dim" in arg.name and arg.type.replace("SymInt", "int").startswith("int")


def _to_positions(t: Tensor, v):
    names, ndim = _n.names_of(t), t.ndim
    if isinstance(v, str):
        return _n.dim_of(names, ndim, v)
    if isinstance(v, (list, tuple)) and any(isinstance(e, str) for e in v):
        return tuple(_n.dim_of(names, ndim, e) if isinstance(e, str) else e for e in v)
    return v


def _by_position(op: OpDef, t: Tensor, args: tuple, kwargs: dict):
    """``args``/``kwargs`` with dimension names as positions for ``op``, or None when none was given by name."""
    args, kwargs, changed = list(args), dict(kwargs), False
    for i, a in enumerate(op.args):
        if not _is_dim_param(a):
            continue
        if i < len(args) and not a.kwarg_only:
            new = _to_positions(t, args[i])
            changed |= new is not args[i]
            args[i] = new
        elif a.name in kwargs:
            new = _to_positions(t, kwargs[a.name])
            changed |= new is not kwargs[a.name]
            kwargs[a.name] = new
    return (tuple(args), kwargs) if changed else None


def retry_named(ops: list, args: tuple, kwargs: dict, error: TypeError, call):
    """A call whose arguments bound to no overload: a factory's ``names=``, or dimensions given by name of a
    named tensor, run as ``call(ops, args, kwargs)`` with positions; anything else raises ``error``."""
    if "names" in kwargs and ops[0].kind in _FACTORY_KINDS:
        rest = {k: v for k, v in kwargs.items() if k != "names"}
        out = call(ops, args, rest)
        _n.set_names(out, _n.check_names(kwargs["names"], out.ndim))
        return out
    t = _self_names(args, kwargs)
    if t is None:
        raise error
    for o in ops:
        form = getattr(o.name_rule, "dimname_form", None)
        if form is not None:
            moved = form(t, args[1:], kwargs)
        else:
            moved = _by_position(o, t, args, kwargs) if o.dim_names else None
        if moved is None:
            continue
        try:
            return call([o], *moved[:2]) if form is None else _named_form(o, call, t, *moved)
        except TypeError:
            continue
    raise error


def _named_form(op: OpDef, call, t: Tensor, args: tuple, kwargs: dict, names: tuple):
    with _n.names_off():
        out = call([op], (t, *args), kwargs)
    _n.set_names(out, _n.check_names(names, out.ndim))
    return out
