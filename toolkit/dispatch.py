"""The single call path of every op: bind, promote, pick a kernel, run, wrap, record.

Eager calls, Tensor methods and operators all arrive here. Autograd records
here, and the tracer and profiler observe here, each through one hook that
costs a single check while it is inactive.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._core import dtypes as _dt
from ._core.device import CPU
from ._core.fp_errors import ignore_fp_errors
from ._core.overlap import (
    FULL,
    INTERNAL_OVERLAP_MESSAGE,
    PARTIAL,
    PARTIAL_OVERLAP_MESSAGE,
    has_internal_overlap,
    overlap_status,
    writable_alias,
)
from ._core.shape import fmt_shape
from ._core.state import LOCAL, STATE
from .ops import registry as R
from .ops import runtime as _runtime
from .ops.registry import OpDef
from .tensor import Tensor, _wrap

_ELEMENTWISE_KINDS = (R.ELEMENTWISE, R.COMPARISON)
_NUMBER = (int, float, bool, np.number, np.bool_)


# ---------------------------------------------------------------------------------------------
# Binding arguments to a schema
# ---------------------------------------------------------------------------------------------
class _BindError(TypeError):
    pass


def _type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _as_int(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, Tensor):
        if v.numel() == 1 and not v.dtype.is_floating_point:
            return int(v.item())
        raise _BindError("Tensor")
    try:
        return v.__index__()
    except (AttributeError, TypeError):
        raise _BindError(type(v).__name__) from None


# Ops PyTorch lets take a number as ``self`` (Scalar_Self overloads) besides those with a reflected operator.
def _check(op: OpDef, arg, v, pos: int):
    """Validate and normalize one argument; raise PyTorch's kind of TypeError when it does not fit."""
    t = arg.type
    try:
        if t == "Tensor":
            if isinstance(v, Tensor):
                return v
            if op.scalar_tensors and isinstance(v, _NUMBER) and (pos or op.scalar_self):
                return v
            raise _BindError(_type_name(v))
        if v is None:
            if t.endswith("?") or (arg.has_default and arg.default is None):
                return None
            raise _BindError("NoneType")
        if t == "Tensor?":
            if isinstance(v, Tensor):
                return v
            raise _BindError(_type_name(v))
        if t in ("Tensor[]", "Tensor?[]"):
            if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
                raise _BindError(_type_name(v))
            for e in v:
                if not (isinstance(e, Tensor) or (e is None and t == "Tensor?[]")):
                    raise _BindError(f"{type(v).__name__} of {_type_name(e)}")
            return list(v)
        if t in ("int", "int?", "SymInt", "SymInt?"):
            return _as_int(v)
        if t.startswith("int[") or t.startswith("SymInt["):
            if isinstance(v, (list, tuple)):
                return tuple(_as_int(e) for e in v)
            return (_as_int(v),) * _list_size(t)
        if t in ("float", "float?"):
            if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
                return v
            if isinstance(v, Tensor) and v.numel() == 1:
                return v.item()
            raise _BindError(type(v).__name__)
        if t.startswith("float["):
            if isinstance(v, (list, tuple)):
                return tuple(float(e) for e in v)
            return (float(v),)
        if t in ("Scalar", "Scalar?"):
            if isinstance(v, _NUMBER):
                return v
            if isinstance(v, Tensor) and v.numel() == 1:
                return v.item()
            raise _BindError(_type_name(v))
        if t in ("bool", "bool?"):
            if isinstance(v, (bool, np.bool_)):
                return bool(v)
            raise _BindError(type(v).__name__)
        if t in ("str", "str?"):
            if isinstance(v, str):
                return v
            raise _BindError(type(v).__name__)
        if t in ("ScalarType", "ScalarType?"):
            return _dt.as_dtype(v)
        if t in ("Device", "Device?"):
            from ._core.device import as_device

            return as_device(v)
        return v  # Generator?, Any, Layout?: checked by the kernel
    except _BindError as e:
        raise TypeError(
            f"{op.name}(): argument '{arg.name}' (position {pos + 1}) must be {t}, not {e.args[0]}"
        ) from None


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
            defaults.append(p.default if not p.type.startswith("int[") or p.default is None else _default_ints(p))
        else:
            defaults.append(None)
    if op.tensor_varargs is not None:
        n_min = len(positional) + 1  # ``einsum(eq, a, b)``: trailing tensors are packed by _bind_slow
    plan = (n_min, len(positional), tuple(p.type == "Tensor" for p in params), tuple(defaults), len(params))
    op._bind_plan = plan
    return plan


def bind(op: OpDef, args: tuple, kwargs: dict) -> list:
    """Arguments in schema order with defaults filled in, validated."""
    plan = op._bind_plan or _plan(op)
    n = len(args)
    if not kwargs and plan[0] <= n <= plan[1]:
        is_tensor, params = plan[2], op.args
        out = []
        for i in range(n):
            v = args[i]
            out.append(v if is_tensor[i] and type(v) is Tensor else _check(op, params[i], v, i))
        if n < plan[4]:
            out.extend(plan[3][n:])
        return out
    return _bind_slow(op, args, kwargs)


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
            out.append(_check(op, p, args[i], i))
        elif p.name in kwargs:
            out.append(_check(op, p, kwargs[p.name], i))
        elif p.has_default:
            out.append(p.default if not p.type.startswith("int[") or p.default is None else _default_ints(p))
        else:
            raise TypeError(f"{op.name}() missing required argument '{p.name}' (pos {i + 1})")
    if kwargs:
        for k in kwargs:
            if k not in op.arg_names:
                raise TypeError(f"{op.name}() got an unexpected keyword argument '{k}'")
    return out


def _default_ints(p):
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
    sig = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
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


# ---------------------------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------------------------
def execute(op: OpDef, bound: list):
    """Run a bound op: observers (tracer, profiler) see it when any is active."""
    if STATE.observers:
        return _observed(op, bound, 0)
    return _run(op, bound)


def _observed(op: OpDef, bound: list, i: int):
    obs = STATE.observers
    if i == len(obs):
        return _run(op, bound)
    return obs[i].on_call(op, bound, lambda: _observed(op, bound, i + 1))


_promo_cache: dict = {}
_dt.default_dtype_listeners.append(_promo_cache.clear)  # Python floats promote to the default dtype


def _promotion(op: OpDef, bound: list):
    """Compute dtype and result dtype of an elementwise op (cached on the input dtype signature)."""
    key = [op.promotion_tag if op.mode_arg is None else op.promotion_key(bound)]
    for i in op.promote_args:
        v = bound[i]
        if isinstance(v, Tensor):
            a = v._data
            key.append(a.dtype)
            key.append(a.ndim == 0)
        elif v is not None:
            key.append(type(v))
    key = tuple(key)
    r = _promo_cache.get(key)
    if r is None:
        r = _promo_cache[key] = _compute_promotion(op, bound)
    return r


def _compute_promotion(op: OpDef, bound: list):
    dims, zeros, scalars = [], [], []
    for i in op.promote_args:
        v = bound[i]
        if isinstance(v, Tensor):
            (zeros if v._data.ndim == 0 else dims).append(v.dtype)
        elif v is not None:
            scalars.append(v)
    return promotion_for(op, dims, zeros, scalars, op.promotion_of(bound))


def promotion_for(op: OpDef, dims: list, zeros: list, scalars: list, policy: str | None = None):
    """(compute dtype, result dtype) of an elementwise op from its tensors' dtypes (dimensioned and 0-dim)
    and its Python scalars: dispatch's rule, which compiled plans apply ahead of time. ``policy`` overrides
    the op's promotion policy (``OpDef.promotion_of`` gives a call's)."""
    if op.check_dtypes is not None:
        op.check_dtypes(dims + zeros + [_dt.scalar_default_dtype(v) for v in scalars])
    common = _dt.result_type_from(dims, zeros, scalars)
    p = op.promotion if policy is None else policy
    if p == R.PROMOTE_INT_TO_FLOAT:
        if not common.is_floating_point:
            common = _dt.get_default_dtype()
        return common, common
    if p == R.PROMOTE_BOOL_OUT:
        return common, _dt.bool
    if p == R.PROMOTE_ALWAYS_BOOL:
        return _dt.bool, _dt.bool
    return common, common


def _arrays(op: OpDef, bound: list, compute):
    """Replace tensors by their arrays (cast to the compute dtype for elementwise ops)."""
    arrays = list(bound)
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            a = v._data
            if compute is not None and a.dtype != compute.np and i in op.promote_args:
                a = a.astype(compute.np)
            arrays[i] = a
        elif isinstance(v, list):
            arrays[i] = [None if e is None else e._data for e in v]
        elif compute is not None and v is not None and i in op.promote_args:
            arrays[i] = _scalar_as(v, compute)
    return arrays


def _scalar_as(v, d):
    if d is _dt.bool:
        return bool(v)
    if d.is_floating_point:
        return float(v)
    if isinstance(v, float):
        return v
    iv = int(v)
    info = np.iinfo(d.np)
    if info.min <= iv <= info.max:
        return iv
    return np.array(iv).astype(d.np)[()]  # wraps around as PyTorch's integer arithmetic does


def _device_of(op: OpDef, bound: list):
    dev = None
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            d = v._storage.device
            if dev is None:
                dev = d
            elif d != dev:
                raise RuntimeError(
                    f"{op.name}: Expected all tensors to be on the same device, but found at least two devices, "
                    f"{dev} and {d}!"
                )
        elif isinstance(v, list):
            for e in v:
                if e is not None:
                    d = e._storage.device
                    if dev is None:
                        dev = d
                    elif d != dev:
                        raise RuntimeError(
                            f"{op.name}: Expected all tensors to be on the same device, but found at least two "
                            f"devices, {dev} and {d}!"
                        )
    return dev or CPU


def _cuda_device(dev):
    """``cuda`` as ``cuda:<current device>`` (what tensors report, as in PyTorch); checks CUDA is usable."""
    from . import cuda

    cuda._lazy_init()
    return dev if dev.index is not None else type(dev)("cuda", cuda.current_device())


def _kernel(op: OpDef, dev):
    k = op.kernels.get(dev.type)
    if k is None:
        if dev.type == "cuda":
            from . import cuda

            if not cuda.is_available():
                raise RuntimeError(
                    f"{op.name}: a tensor on '{dev}' was asked for, but CUDA is not available "
                    "(numba.cuda finds no GPU); use device='cpu'"
                )
        raise NotImplementedError(f"{op.name}: no kernel for device '{dev.type}'")
    return k


def _run_kernel(op: OpDef, kernel, arrays: list, bound: list):
    try:
        return kernel(*arrays)
    except (ValueError, IndexError, TypeError, np.exceptions.AxisError, ZeroDivisionError, OverflowError) as e:
        raise _explain(op, bound, e) from None


def _explain(op: OpDef, bound: list, e: Exception) -> Exception:
    """Turn a kernel's failure into an error that names the op, using its meta rule when it has one."""
    if str(e).startswith((op.name, op.name.rstrip("_"))):
        return e  # the kernel's own error already names the op: keep its type, as PyTorch's may differ
    if op.meta is not None:
        try:
            op.meta(*bound)
        except (RuntimeError, IndexError, TypeError, ValueError) as m:
            return m
    elif op.kind in _ELEMENTWISE_KINDS:
        shapes = [tuple(bound[i].shape) for i in op.tensor_args if isinstance(bound[i], Tensor)]
        from ._core.shape import broadcast_shapes_or_none

        acc = ()
        for s in shapes:
            acc = broadcast_shapes_or_none(acc, s)
            if acc is None:
                return RuntimeError(
                    f"{op.name}: shapes {' and '.join(fmt_shape(s) for s in shapes)} cannot be broadcast"
                )
    if isinstance(e, IndexError):
        return IndexError(f"{op.name}: {e}")
    return RuntimeError(f"{op.name}: {e}")


def _needs_grad(op: OpDef, bound: list) -> bool:
    for i in op.diff_args:
        v = bound[i]
        if isinstance(v, Tensor):
            if v._requires_grad:
                return True
        elif isinstance(v, list):
            for e in v:
                if e is not None and e._requires_grad:
                    return True
    return False


def _refuse_grad(op: OpDef, bound: list) -> None:
    """PyTorch's check_no_requires_grad: some tensor args (loss weights) may not require grad."""
    if not LOCAL.grad_enabled:  # STATE's flag summarizes all threads; this thread's mode decides
        return
    for name in op.refuse_grad_args:
        v = bound[op.arg_names.index(name)]
        if isinstance(v, Tensor) and v._requires_grad:
            raise RuntimeError(f"The function '{op.name}' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")


def _run(op: OpDef, bound: list):
    if op.kind is R.INPLACE:
        return _run_inplace(op, bound)
    if op.pointwise:
        return _run_pointwise(op, bound)
    if op.composite is not None:
        return op.composite(*bound)
    if op.refuse_grad_args and STATE.grad_enabled:
        _refuse_grad(op, bound)
    dev = kdev = _device_of(op, bound)
    if op.device_arg is not None and bound[op.device_arg] is not None:
        dev = bound[op.device_arg]
        if dev.type == "cuda":
            dev = _cuda_device(dev)
        if kdev.type == "cpu":
            kdev = dev  # a copy off a device runs that device's kernel; one onto a device, the target's
    result_dtype = compute = None
    if op.promote_args is not op.tensor_args and op.promotion != R.PROMOTE_NONE:  # an op's own promote_args
        compute, result_dtype = _promotion(op, bound)
    out = _run_kernel(op, _kernel(op, kdev), _arrays(op, bound, compute), bound)
    if not op.returns_tensor:
        return out
    outputs = _wrap_outputs(op, bound, out, result_dtype, dev)
    if STATE.inference_mode:
        _mark_inference(outputs)
    if op.requires_grad_arg is not None and bound[op.requires_grad_arg]:
        outputs.requires_grad_(True)
    if STATE.grad_enabled and op.derivative is not None and _needs_grad(op, bound):
        STATE.record(op, bound, outputs, None)
    return outputs


def _run_pointwise(op: OpDef, bound: list):
    """The hot path of elementwise ops: one pass over the inputs for dtype key, device and grad."""
    key = [op.promotion_tag if op.mode_arg is None else op.promotion_key(bound)]
    dev = None
    grad = False
    for i in op.tensor_args:
        v = bound[i]
        if type(v) is Tensor or isinstance(v, Tensor):  # subclasses: nn.Parameter
            a = v._data
            key.append(a.dtype)
            key.append(a.ndim == 0)
            d = v._storage.device
            if dev is None:
                dev = d
            elif d is not dev and d != dev:
                _device_of(op, bound)  # raises the mixed-device error
            if v._requires_grad:
                grad = True
        elif v is not None:
            key.append(type(v))
    key = tuple(key)
    promo = _promo_cache.get(key)
    if promo is None:
        promo = _promo_cache[key] = _compute_promotion(op, bound)
    compute, result_dtype = promo
    arrays = list(bound)
    cnp = compute.np
    for i in op.tensor_args:
        v = bound[i]
        if type(v) is Tensor or isinstance(v, Tensor):
            a = v._data
            arrays[i] = a if a.dtype == cnp else a.astype(cnp)
        elif v is not None:
            arrays[i] = _scalar_as(v, compute)
    if dev is None:
        dev = CPU
    kernel = op.kernels.get(dev.type) or _kernel(op, dev)
    try:
        out = kernel(*arrays)
    except (ValueError, IndexError, TypeError, np.exceptions.AxisError, ZeroDivisionError, OverflowError) as e:
        raise _explain(op, bound, e) from None
    if type(out) is not np.ndarray and not getattr(out, "_is_device_array", False):
        out = np.asarray(out)
    if out.dtype != result_dtype.np:
        out = out.astype(result_dtype.np)
    t = _wrap(out, None, dev)
    if STATE.inference_mode:
        _mark_inference(t)
    if grad and STATE.grad_enabled and op.derivative is not None and _needs_grad(op, bound):
        STATE.record(op, bound, t, None)
    return t


def _as_array(a, result_dtype):
    if type(a) is not np.ndarray and not getattr(a, "_is_device_array", False):
        a = np.asarray(a)
    if result_dtype is not None and a.dtype != result_dtype.np:
        a = a.astype(result_dtype.np)
    return a


def _wrap_outputs(op: OpDef, bound: list, out, result_dtype, dev):
    view_src = bound[0] if op.kind is R.VIEW and isinstance(bound[0], Tensor) else None
    if op.returns_list:
        # PyTorch's Python API returns Tensor[] results as tuples.
        return tuple(_wrap_one(_as_array(a, None), view_src, op, bound, dev) for a in out)
    if op.n_outputs == 1:
        return _wrap_one(_as_array(out, result_dtype), view_src, op, bound, dev)
    ts = tuple(_wrap_one(_as_array(a, None), view_src, op, bound, dev) for a in out)
    return op.return_type(*ts) if op.return_type is not None else ts


def _wrap_one(a: np.ndarray, view_src, op, bound, dev):
    if view_src is not None:
        st = view_src._storage
        root = a.base if a.base is not None else a
        if root is st.base or (root is not a and np.shares_memory(a, view_src._data)):
            t = _wrap(a, st)
            chain = view_src._view_chain
            if chain is None:
                t._base = view_src
                t._view_chain = ((op, bound[1:]),)
            else:
                t._base = view_src._base
                t._view_chain = chain + ((op, bound[1:]),)
            if view_src._requires_grad and not STATE.grad_enabled:
                t._extras()["no_grad_view"] = True  # autograd refuses to record in-place ops on it later
            return t
    return _wrap(a, None, dev)


def _run_inplace(op: OpDef, bound: list):
    """``self.op_(...)``: compute as the functional op, check the result fits ``self``, write it back."""
    if op.composite is not None:
        return op.composite(*bound)
    self_t = bound[0]
    if not isinstance(self_t, Tensor):
        raise TypeError(f"{op.name}(): self must be a Tensor, not {_type_name(self_t)}")
    f = op.inplace_of or op
    dev = _device_of(op, bound)
    recording = False
    if STATE.grad_enabled and op.derivative is not None and (
        _needs_grad(op, bound) or (self_t._view_chain is not None and self_t._base._requires_grad)
    ):
        recording = LOCAL.grad_enabled  # STATE's flag summarizes all threads; this thread's mode decides
    if recording:
        STATE.check_inplace(op, self_t)  # autograd refuses what it cannot record
    if self_t._extra and self_t._extra.get("inference"):
        if not LOCAL.inference_mode:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                "more details."
            )
    dst = self_t._data
    # Memory overlap, checked as PyTorch does before writing; distinct storages cost one identity test each.
    if 0 in dst.strides and not op.self_overlap_ok and has_internal_overlap(dst):
        raise RuntimeError(f"{op.name}: {INTERNAL_OVERLAP_MESSAGE}")
    storage = self_t._storage
    for i, whole in op.overlap_args:
        v = bound[i]
        if isinstance(v, Tensor) and v._storage is storage:
            _check_input_overlap(op, self_t, v, whole)
    if f.kind in _ELEMENTWISE_KINDS and f.promotion != R.PROMOTE_NONE:
        compute, result_dtype = _promotion(f, bound)
        arrays = _arrays(f, bound, compute)
    else:
        result_dtype = None
        arrays = _arrays(f, bound, None)
    target = self_t.dtype
    if result_dtype is not None and not _dt.can_cast(result_dtype, target):
        raise RuntimeError(
            f"{op.name}: result type {_dt.title(result_dtype)} can't be cast to the desired output type "
            f"{_dt.title(target)}"
        )
    saved_self = None
    if recording and "self" in op.saved_names:
        # The derivative reads self's old value: a recorded clone keeps its history for double backward.
        saved_self = _run(R.get("clone"), [self_t, None]) if self_t._requires_grad else _wrap(
            self_t._data.copy(), None, dev)
    writable = type(dst) is not np.ndarray or dst.flags.writeable
    if (op.kernel_out and dev.type == "cpu" and writable
            and (result_dtype is None or result_dtype.np == dst.dtype)):
        # Written straight into self: no temporary and no copy back (numpy buffers inputs that overlap fully).
        try:
            with ignore_fp_errors():
                op.kernels["cpu"](*arrays, out=dst)
        except (ValueError, IndexError, TypeError, np.exceptions.AxisError, ZeroDivisionError, OverflowError) as e:
            if isinstance(e, ValueError) and "non-broadcastable output" in str(e):
                shape = np.broadcast_shapes(*[a.shape for a in arrays if isinstance(a, np.ndarray)])
                raise RuntimeError(
                    f"{op.name}: output with shape {list(self_t.shape)} doesn't match the broadcast shape "
                    f"{list(shape)}"
                ) from None
            raise _explain(op, bound, e) from None
        storage.version += 1
        if recording:
            STATE.record(op, bound, self_t, saved_self)
        return self_t
    out = _run_kernel(op, _kernel(op, dev), arrays, bound)
    out = _as_array(out, None)
    if result_dtype is None and f.kind in _ELEMENTWISE_KINDS and not _dt.can_cast(_dt.from_numpy_dtype(out.dtype), target):
        raise RuntimeError(  # PROMOTE_NONE ops (square of bool -> int64) learn their result type only here
            f"{op.name}: result type {_dt.title(_dt.from_numpy_dtype(out.dtype))} can't be cast to the desired "
            f"output type {_dt.title(target)}"
        )
    if out.shape != dst.shape:
        raise RuntimeError(
            f"{op.name}: output with shape {list(self_t.shape)} doesn't match the broadcast shape {list(out.shape)}"
        )
    if writable:
        np.copyto(dst, out, casting="unsafe")
    else:
        _write_read_only(op, self_t, out)
    storage.version += 1
    if recording:
        STATE.record(op, bound, self_t, saved_self)
    return self_t


def _check_input_overlap(op: OpDef, self_t: Tensor, v: Tensor, whole: bool) -> None:
    """Refuse an input sharing memory with the written tensor in part (or, for ``no_overlap`` args, at all)."""
    status = FULL if v is self_t else overlap_status(self_t._data, v._data)
    if status is PARTIAL or (whole and status is FULL):
        raise RuntimeError(f"{op.name}: {PARTIAL_OVERLAP_MESSAGE}")


def _write_read_only(op: OpDef, self_t: Tensor, out) -> None:
    """Write into memory numpy marks read-only (an expanded tensor or a view of one) through a writable alias
    of the storage, as PyTorch writes through its views. Only the elements the op changed are written, so
    where elements share memory (``fill_``, ``index_put_`` on an expanded tensor) each written value lands."""
    dst = self_t._data
    alias = writable_alias(dst, self_t._storage.base)
    if alias is None:
        raise RuntimeError(f"{op.name}: the tensor's memory is read-only (a tensor made from a read-only numpy "
                           "array?); clone() it before writing to it")
    out = out.astype(dst.dtype, copy=False)
    np.copyto(alias, out, where=out != dst)


def _mark_inference(outputs) -> None:
    if not LOCAL.inference_mode:
        return  # STATE's flag is set while any thread is in inference mode
    for o in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        o._extras()["inference"] = True




def is_number(v) -> bool:
    return isinstance(v, numbers.Number)


_runtime.install(_runtime.Dispatcher(bind=bind, execute=execute, call_op=call_op, call_overloads=call_overloads,
                                     wrap=_wrap))
