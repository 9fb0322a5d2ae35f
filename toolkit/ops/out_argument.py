"""PyTorch's ``out=`` argument on the public functions: ``toolkit.add(a, b, out=o)``.

Which ops take it, and how strictly they check out's dtype, is each op's ``out`` rule (``OpDef.out``). The op
computes as usual; the result is then written into ``out`` (resized to the result's shape, with PyTorch's
deprecation warning when a non-empty ``out`` had another shape) and ``out`` itself is returned, so an ``out``
that is also an input works like an in-place op. Only the exported functions (``toolkit.add``) check for
``out``: calls from inside the library (``api.add``) never pay for it, and a public call without ``out`` pays
one truth test of its keywords.

Example::

    o = toolkit.empty(3)
    toolkit.add(a, b, out=o) is o        # True
    toolkit.sort(x, out=(values, indices))
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.state import LOCAL, STATE
from .._core.tensor_base import TensorBase
from . import registry as _registry
from . import runtime as _runtime


def public_function(ops: list, plain: Callable) -> Callable:
    """The exported function of overloads ``ops``: ``plain`` (the internal one) where no overload takes ``out``,
    else a function that writes into ``out`` when it is given."""
    takes = [o for o in ops if o.out is not None]
    if not takes:
        return plain
    if len(ops) == 1:
        o = ops[0]

        def fn(*args, **kwargs):
            if kwargs and "out" in kwargs:
                return call_with_out(ops, takes, args, kwargs)
            try:
                bound = _runtime.bind(o, args, kwargs)
            except TypeError:  # ``names=`` or dims by name: ``call_overloads`` retries them
                return _runtime.call_overloads(ops, args, kwargs)
            return _runtime.execute(o, bound)

    else:

        def fn(*args, **kwargs):
            if kwargs and "out" in kwargs:
                return call_with_out(ops, takes, args, kwargs)
            return _runtime.call_overloads(ops, args, kwargs)

    for attr in ("__name__", "__qualname__", "__doc__", "__wrapped_ops__"):
        setattr(fn, attr, getattr(plain, attr))
    return fn


def call_with_out(ops: list, takes: list, args: tuple, kwargs: dict):
    """Run the first overload among ``takes`` that the arguments fit, and write its result into ``out``."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return _runtime.call_overloads(ops, args, kwargs)
    for o in takes:
        if o.required_kwargs and any(k not in kwargs for k in o.required_kwargs):
            continue
        try:
            bound = _runtime.bind(o, args, kwargs)
        except TypeError:
            continue
        return _write(o, bound, out)
    # No overload with an out variant fits: the dispatcher's error names those overloads.
    return _runtime.call_overloads(takes, args, {**kwargs, "out": out})


def _write(o, bound: list, out):
    outs = _out_tensors(o, out)
    if STATE.grad_enabled and LOCAL.grad_enabled and (any(t.requires_grad for t in outs) or _any_requires_grad(bound)):
        raise RuntimeError(f"{o.name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    rule = o.out
    if "dtype" in o.arg_names:
        i = o.arg_names.index("dtype")
        if bound[i] is not None:
            rule = _registry.OUT_EXACT  # a dtype asked for is the dtype out must have
        elif rule == _registry.OUT_DTYPE:
            bound = [*bound[:i], outs[0].dtype, *bound[i + 1:]]
    result = _runtime.execute(o, bound)
    results = (result,) if o.n_outputs == 1 and not o.returns_list else tuple(result)
    if len(outs) != len(results):
        raise RuntimeError(f"{o.schema.full_name.replace('.', '_')}_out() expected an out= argument of size "
                           f"{len(results)}, got size {len(outs)}")
    for t, r in zip(outs, results):
        _check(rule, t, r)
        if t._extra and r._extra and "names" in t._extra and "names" in r._extra:  # named out, named result
            _names.check_written(t._extra["names"], r._extra["names"])
    copy_ = _registry.get("copy_")
    for t, r in zip(outs, results):
        if tuple(t.shape) != tuple(r.shape):
            if t.numel():
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape {list(t.shape)}, which "
                    f"does not match the required output shape {list(r.shape)}. This behavior is deprecated, and "
                    "in a future PyTorch release outputs will not be resized unless they have zero elements. You "
                    "can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                    "t.resize_(0).", UserWarning, stacklevel=4)
            t.resize_(tuple(r.shape))
        copy_(t, r)
    if o.n_outputs == 1 and not o.returns_list:
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)


def _out_tensors(o, out) -> tuple:
    """``out`` as a tuple of tensors, one per result, refused with PyTorch's TypeError otherwise."""
    if o.n_outputs == 1 and not o.returns_list:
        if not isinstance(out, TensorBase):
            raise TypeError(f"{o.name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return (out,)
    if not isinstance(out, (tuple, list)) or not all(isinstance(t, TensorBase) for t in out):
        raise TypeError(f"{o.name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != o.n_outputs and not o.returns_list:
        raise TypeError(f"expected tuple of {o.n_outputs} elements but got {len(out)}")
    return tuple(out)


def _any_requires_grad(values) -> bool:
    for v in values:
        if isinstance(v, TensorBase):
            if v.requires_grad:
                return True
        elif isinstance(v, (list, tuple)) and _any_requires_grad(v):
            return True
    return False


def _check(rule: str, t, r) -> None:
    """PyTorch's checks of one out tensor against the result it receives, before anything is written."""
    if t.device != r.device:
        raise RuntimeError(f"Expected out tensor to have device {r.device}, but got {t.device} instead")
    if rule == _registry.OUT_CAST and not _dt.can_cast(r.dtype, t.dtype):
        raise RuntimeError(f"result type {_dt.title(r.dtype)} can't be cast to the desired output type "
                           f"{_dt.title(t.dtype)}")
    if rule == _registry.OUT_EXACT and r.dtype != t.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_dt.cpp_name(r.dtype)}, but got {_dt.cpp_name(t.dtype)} "
                           "instead")

