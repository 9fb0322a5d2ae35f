"""Calls to registry ops from scripted code: pick the overload the argument types fit and bind arguments
by the schema (defaults filled in as constants), as eager dispatch binds them at run time.

Python operators on tensors resolve exactly as ``Tensor``'s dunders do (``2 - x``
is ``rsub(x, 2)``, ``2 / x`` is ``reciprocal(x) * 2``); Tensor methods resolve to
the overloads ``Tensor`` binds, and hand-written methods (``size``, ``item``) to
a ``prim::TensorMethod`` node that calls the method itself.
"""

from __future__ import annotations

import inspect

from .... import dispatch
from ....ops import registry as R
from ....ops.runtime import REFLECTED_TENSOR_FIRST as _REFLECTED_OPERATORS
from ....tensor import Tensor as _Tensor
from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Value
from ...ir.propagate import infer_node
from ...kinds import effects as _effects
from ...kinds.builtins import METHOD_KINDS

_METHODS: dict | None = None
_DUNDERS: dict | None = None
# ``2 * x`` compiles as Tensor runs it: operators whose reflected form takes the tensor first (``mul(x, 2)``).
REFLECTED_TENSOR_FIRST = frozenset(r[1:] for r in _REFLECTED_OPERATORS)


def method_ops(name: str) -> list | None:
    """The registry overloads ``Tensor.<name>`` calls, or None for a hand-written method."""
    global _METHODS
    if _METHODS is None:
        _METHODS = {}
        for d in R.all_ops():
            if d.method:
                _METHODS.setdefault(d.method if isinstance(d.method, str) else d.name, []).append(d)
    fn = _Tensor.__dict__.get(name)
    if fn is not None and not getattr(fn, "_from_registry", False):
        return None
    return _METHODS.get(name)


def dunder_ops(dunder: str) -> list:
    """Overloads behind ``Tensor.__<dunder>__`` (``add``, ``iadd`` for the in-place form)."""
    global _DUNDERS
    if _DUNDERS is None:
        _DUNDERS = {}
        for d in R.all_ops():
            for du in d.dunders:
                if du in _DUNDERS:
                    continue
                ops = [o for o in R.overloads(d.name) if o.dunders]
                if du.startswith("i") and du[1:] in d.dunders:
                    _DUNDERS[du] = [o.inplace_variant for o in ops if o.inplace_variant is not None]
                else:
                    _DUNDERS[du] = ops
    return _DUNDERS.get(dunder, [])


def constant_of(v: Value):
    """The compile-time value of ``v`` (a constant, or a list/tuple of constants), else raise LookupError."""
    n = v.node
    if n is None:
        raise LookupError
    if n.kind == K.CONSTANT:
        return n.attributes.get("value")
    if n.kind in (K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT):
        if n.kind == K.LIST_CONSTRUCT and any(_effects.is_mutating(u.user) for u in v.uses):
            raise LookupError  # a list that is appended to (or otherwise written) later is no constant
        vals = [constant_of(e) for e in n.inputs]
        return vals if n.kind == K.LIST_CONSTRUCT else tuple(vals)
    raise LookupError


def is_constant(v: Value) -> bool:
    try:
        constant_of(v)
        return True
    except LookupError:
        return False


def _is_number(t) -> bool:
    return isinstance(t, (T.IntType, T.FloatType, T.BoolType))


def _fits(c, v: Value, arg, op, pos: int) -> bool:
    """Whether value ``v`` (by its type) may be passed as schema argument ``arg``."""
    t, vt = arg.type, v.type
    if isinstance(vt, T.AnyType):
        return True
    if t.endswith("?") and isinstance(vt, T.NoneType):
        return True
    if t.endswith("?") and not t.endswith("[]?"):
        t = t[:-1]
    if isinstance(vt, T.OptionalType):  # None or an element: an optional argument taking that element
        if not arg.type.endswith("?"):
            return False
        if t.startswith("Tensor"):
            return isinstance(vt.elem, T.TensorType)
        t, vt = t.removesuffix("?"), vt.elem
    if t == "Tensor":
        return isinstance(vt, T.TensorType) or (op.scalar_tensors and _is_number(vt) and (pos or op.scalar_self))
    if t in ("Tensor[]", "Tensor?[]"):
        if isinstance(vt, T.ListType):
            return isinstance(vt.elem, (T.TensorType, T.OptionalType, T.AnyType))
        return isinstance(vt, T.TupleType) and all(isinstance(e, T.TensorType) for e in vt.elems)
    if t in ("int", "SymInt"):
        return isinstance(vt, T.IntType)
    if t.startswith(("int[", "SymInt[")):
        if isinstance(vt, T.ListType):
            return isinstance(vt.elem, (T.IntType, T.AnyType))
        if isinstance(vt, T.TupleType):
            return all(isinstance(e, T.IntType) for e in vt.elems)
        return isinstance(vt, T.IntType)
    if t == "float":
        return isinstance(vt, (T.FloatType, T.IntType))
    if t.startswith("float["):
        return isinstance(vt, (T.ListType, T.TupleType, T.FloatType, T.IntType))
    if t == "Scalar":
        return _is_number(vt)
    if t == "bool":
        return isinstance(vt, T.BoolType)
    if t == "str":
        return isinstance(vt, T.StrType)
    if t == "ScalarType":  # a dtype (an int in scripted code), never a list: x.view(sizes) is view(int[])
        return isinstance(vt, T.IntType) or isinstance(vt, T.OtherType) and vt.name == "ScalarType"
    if isinstance(vt, T.TensorType):
        return False
    return True


def _normalize(c, v: Value, arg, op, pos: int, node) -> Value | None:
    """A constant argument as eager binding normalizes it (``int[2]`` from one int, dtypes); None if refused."""
    try:
        value = constant_of(v)
    except LookupError:
        if arg.type.startswith("Tensor[") and isinstance(v.type, T.TupleType):
            return c.to_list(v, node)
        return v
    if isinstance(value, _Tensor):
        return v
    try:
        norm = dispatch.check_arg(op, arg, value, pos)
    except (TypeError, ValueError):
        return None
    if norm is value or (type(norm) is type(value) and norm == value and not isinstance(value, (list, tuple))):
        return v
    if arg.type.startswith("Tensor["):
        return c.to_list(v, node) if isinstance(v.type, T.TupleType) else v
    return c.const(norm, node)


def bind_op(c, op, args: list, kwargs: dict, node) -> list | None:
    """Schema-ordered input values for ``op``, or None when the arguments do not fit it."""
    params = op.args
    positional = [p for p in params if not p.kwarg_only]
    args = list(args)
    if len(args) > len(positional) and positional and positional[-1].type.startswith(("int[", "SymInt[")):
        k = len(positional) - 1
        if all(isinstance(a.type, T.IntType) for a in args[k:]):
            args = args[:k] + [c.list_of(args[k:], T.INT, node)]
    k = op.tensor_varargs
    if k is not None and len(args) > k and all(
            isinstance(a.type, T.TensorType) for a in args[k:]):  # ``broadcast_tensors(a, b)``, as eager packs them
        args = args[:k] + [c.list_of(args[k:], T.TENSOR, node)]
    if len(args) > len(positional):
        return None
    if any(k not in op.arg_names for k in kwargs):
        return None
    out = []
    for i, p in enumerate(params):
        if i < len(args) and not p.kwarg_only:
            if p.name in kwargs:
                return None
            v = args[i]
        elif p.name in kwargs:
            v = kwargs[p.name]
        elif p.has_default:
            out.append(None)
            continue
        else:
            return None
        if not _fits(c, v, p, op, i):
            return None
        out.append(v)
    result = []
    for i, (p, v) in enumerate(zip(params, out)):
        if v is None:
            d = p.default if not p.type.startswith("int[") or p.default is None else dispatch.default_ints(p)
            result.append(c.const(d, node, T.NONE if d is None else None))
            continue
        nv = _normalize(c, v, p, op, i, node)
        if nv is None:
            return None
        result.append(nv)
    return result


def _coerces(op, vals: list) -> bool:
    return any(isinstance(v.type, T.TensorType) and not a.is_tensor for v, a in zip(vals, op.args))


def emit_ops(c, ops: list, args: list, kwargs: dict, node, name: str = ""):
    """Emit the first overload the arguments fit; a tuple of results for ops with several outputs."""
    chosen = None
    for op in ops:
        vals = bind_op(c, op, args, kwargs, node)
        if vals is None:
            continue
        chosen = (op, vals)
        break
    if chosen is None:
        sig = ", ".join([str(a.type) for a in args] + [f"{k}={v.type}" for k, v in kwargs.items()])
        schemas = "\n".join(f"  {o.schema}" for o in ops)
        raise c.error(f"Arguments for call are not valid: {name or ops[0].name}() got ({sig}), but expected one "
                      f"of:\n{schemas}\nThe call is", node)
    op, vals = chosen
    return emit_bound(c, op, vals, node)


def emit_bound(c, op, vals: list, node):
    n = c.insert(op.qualified_name, vals, 0, op=op, node=node)
    for r in op.schema.returns:
        n.add_output(T.ListType(T.TENSOR) if r.type == "Tensor[]" else T.schema_type(r.type))
    try:
        types = infer_node(n)
    except Exception:
        types = None
    if types and len(types) == len(n.outputs) and not op.returns_list:
        for o, t in zip(n.outputs, types):
            o.type = t
    if len(n.outputs) == 1:
        return n.outputs[0]
    return c.tuple_of(list(n.outputs), node)


def _check_method_call(c, name: str, args: list, kwargs: dict, node) -> None:
    try:
        sig = inspect.signature(getattr(_Tensor, name))
    except (AttributeError, TypeError, ValueError):  # no Python signature to check against
        return
    try:
        sig.bind(None, *args, **kwargs)
    except TypeError as e:
        got = ", ".join(["Tensor"] + [str(a.type) for a in args] + [f"{k}={v.type}" for k, v in kwargs.items()])
        raise c.error(f"Arguments for call are not valid: {name}() got ({got}): {e}; expected "
                      f"{name}{str(sig).replace('self', 'Tensor self', 1)}\nThe call is", node) from None
    if name in ("size", "stride") and args and not isinstance(args[0].type, T.IntType):
        raise c.error(f"Arguments for call are not valid: {name}() expected a value of type 'int' for argument "
                      f"'dim' but instead found type '{args[0].type}'\nThe call is", node)


# Hand-written Tensor methods and properties: their result types.
_METHOD_TYPES = {
    "dim": T.INT, "numel": T.INT, "item": T.ANY, "tolist": T.ANY, "is_contiguous": T.BOOL, "element_size": T.INT,
    "is_floating_point": T.BOOL, "__len__": T.INT, "nelement": T.INT, "ndimension": T.INT, "get_device": T.INT,
    "is_complex": T.BOOL, "data_ptr": T.INT, "stride": T.ANY, "storage_offset": T.INT, "__bool__": T.BOOL,
    "__int__": T.INT, "__float__": T.FLOAT, "backward": T.NONE,
}
_LIST_METHODS = frozenset(("tensor_split", "hsplit", "vsplit"))  # registry methods (split, chunk) never get here


def emit_tensor_method(c, self_value: Value, name: str, args: list, kwargs: dict, node):
    """A call of a hand-written Tensor method: run by the method itself at run time.

    The call is checked at compile time against the method's own Python signature, so a wrong count or an
    unknown keyword is a located error, as TorchScript's schema check gives it.
    """
    _check_method_call(c, name, args, kwargs, node)
    if name == "size":
        typ = T.INT if args or kwargs else T.ListType(T.INT)
    elif name in _LIST_METHODS:
        typ = T.ListType(T.TENSOR)
    else:
        typ = _METHOD_TYPES.get(name, T.TENSOR)
    if name in METHOD_KINDS and not kwargs:
        n = c.insert(f"aten::{name}", [self_value, *args], 1, node=node)
        n.output().type = typ
        return n.output()
    n = c.insert(K.TENSOR_METHOD, [self_value, *args, *kwargs.values()], 1, node=node)
    n["name"] = name
    if kwargs:
        n["kwargs"] = tuple(kwargs)
    n.output().type = typ
    return n.output()
