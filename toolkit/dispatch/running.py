"""Running a bound op: observers first when any is active, then the kernel, the wrapped result, and autograd.

Autograd records here and the tracer and profiler observe here, each through one hook on ``STATE`` that
costs a single check while it is inactive. In-place ops check memory overlap and versions before writing.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.device import CPU, DEFAULT_DEVICE
from .._core.fp_errors import ignore_fp_errors
from .._core.names import NAME_STATE
from .._core.overlap import (
    FULL,
    INTERNAL_OVERLAP_MESSAGE,
    PARTIAL,
    PARTIAL_OVERLAP_MESSAGE,
    has_internal_overlap,
    overlap_status,
    writable_alias,
)
from .._core.shape import broadcast_shapes_or_none, fmt_shape
from .._core.state import LOCAL, STATE
from ..ops import registry as R
from ..ops.registry import OpDef
from ..tensor import Tensor
from ..tensor import wrap as _wrap
from .binding import type_name
from .conj import conj_input, is_conj, keeps_conj, write_conj
from .devices import SparseCall, cuda_device, device_of, kernel_for
from .layouts import run_sparse
from .names import NamedCall, run_named
from .promotion import (
    ELEMENTWISE_KINDS,
    compute_promotion,
    promoted_arrays,
    promotion,
    promotion_cache,
    scalar_as,
)


def execute(op: OpDef, bound: list):
    """Run a bound op: observers (tracer, profiler) see it when any is active. A sparse tensor argument,
    met by the scan of the tensors every path makes first, sends the call to the op's sparse kernel."""
    if STATE.observers:
        return _observed(op, bound, 0)
    try:
        if op.pointwise:
            return _run_pointwise(op, bound)
        plain = op.__dict__.get("_plain_run")
        if plain or (plain is None and _is_plain(op)):
            return _run_plain(op, bound)
        return _run(op, bound)
    except SparseCall:
        return run_sparse(op, bound)
    except NamedCall:
        return run_named(op, bound, run)


def _observed(op: OpDef, bound: list, i: int):
    obs = STATE.observers
    if i == len(obs):
        return run(op, bound)
    return obs[i].on_call(op, bound, lambda: _observed(op, bound, i + 1))


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
    elif op.kind in ELEMENTWISE_KINDS:
        shapes = [tuple(bound[i].shape) for i in op.tensor_args if isinstance(bound[i], Tensor)]

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


def _scan(op: OpDef, bound: list, arrays: list, key: list | None) -> tuple:
    """One pass over an op's tensor arguments (and the Scalars its promotion reads, ``scan_args``): their arrays
    into ``arrays``, their dtype signature onto ``key`` (when given: dtype and zero-dim-ness of a tensor, the
    type of a number); returns the device the call runs on (raising PyTorch's error for mixed devices) and
    whether any tensor requires grad."""
    dev = None
    grad = False
    for i in op.scan_args:
        v = bound[i]
        # Subclasses (nn.Parameter) add one layout check; a sparse tensor leaves this path (``SparseCall``).
        if type(v) is Tensor or (isinstance(v, Tensor) and (v._sparse_key is None or _sparse_call())):
            a = arrays[i] = v._data
            if v._extra is not None:
                if is_conj(v):
                    arrays[i] = conj_input(op, v)
                if "names" in v._extra and not NAME_STATE.off:
                    raise NamedCall
            if key is not None:
                key.append(a.dtype)
                key.append(a.ndim == 0)
            d = v._storage.device
            if dev is None:
                dev = d
            elif d is not dev and d != dev:
                device_of(op, bound)  # raises the mixed-device error
            if v._requires_grad:
                grad = True
        elif key is not None and v is not None:
            key.append(type(v))
    return (CPU if dev is None else dev), grad


def _sparse_call() -> bool:
    raise SparseCall


def _is_plain(op: OpDef) -> bool:
    """Whether ``run`` needs none of its special cases for ``op``: its tensors' arrays go to its own device's
    kernel as they are, and one tensor comes back (decided once per op, and kept on it)."""
    plain = (op.kind is not R.INPLACE and not op.pointwise and op.composite is None and not op.refuse_grad_args
             and op.device_arg is None and op.requires_grad_arg is None and op.returns_tensor
             and op.n_outputs == 1 and not op.returns_list and not op.written_args
             and (op.promote_args is op.tensor_args or op.promotion == R.PROMOTE_NONE)
             and not any(op.args[i].type != "Tensor" for i in op.tensor_args))  # no lists, no optional tensors
    op._plain_run = plain
    return plain


def _run_plain(op: OpDef, bound: list):
    """``run`` for a plain op (``_is_plain``): one pass over the tensors for arrays and device."""
    arrays = bound.copy()
    dev, grad = _scan(op, bound, arrays, None)
    out = _run_kernel(op, op.kernels.get(dev.type) or kernel_for(op, dev), arrays, bound)
    if type(out) is not np.ndarray and not getattr(out, "_is_device_array", False):
        out = np.asarray(out)
    if op.kind is R.VIEW and isinstance(bound[0], Tensor):
        t = _wrap_one(out, bound[0], op, bound, dev)
    else:
        t = _wrap(out, None, dev)
    if STATE.inference_mode:
        _mark_inference(t)
    if grad and STATE.grad_enabled and op.derivative is not None and _needs_grad(op, bound):
        STATE.record(op, bound, t, None)
    return t


def run(op: OpDef, bound: list):
    """Run a bound op without observers: its strided path, or its sparse kernel for sparse arguments."""
    try:
        return _run(op, bound)
    except SparseCall:
        return run_sparse(op, bound)
    except NamedCall:
        return run_named(op, bound, run)


def _run(op: OpDef, bound: list):
    plain = op.__dict__.get("_plain_run")
    if plain or (plain is None and _is_plain(op)):
        return _run_plain(op, bound)
    if op.kind is R.INPLACE:
        return _run_inplace(op, bound)
    if op.pointwise:
        return _run_pointwise(op, bound)
    if op.composite is not None:
        if op.kernels:  # a composite with kernels of its own (a sparse one) takes them for sparse arguments
            device_of(op, bound)
        elif NAME_STATE.in_use and not NAME_STATE.off and any(
                isinstance(bound[i], Tensor) and bound[i]._extra is not None for i in op.tensor_args):
            device_of(op, bound)  # raises NamedCall for a named input: the composite runs under its own rule
        return op.composite(*bound)
    if op.refuse_grad_args and STATE.grad_enabled:
        _refuse_grad(op, bound)
    dev = kdev = device_of(op, bound)
    if op.default_device and bound[op.device_arg] is None:
        bound[op.device_arg] = DEFAULT_DEVICE.device
    if op.device_arg is not None and bound[op.device_arg] is not None:
        dev = bound[op.device_arg]
        if dev.type == "cuda":
            dev = cuda_device(dev)
        if kdev.type == "cpu":
            kdev = dev  # a copy off a device runs that device's kernel; one onto a device, the target's
    result_dtype = compute = None
    if op.promote_args is not op.tensor_args and op.promotion != R.PROMOTE_NONE:  # an op's own promote_args
        compute, result_dtype = promotion(op, bound)
    out = _run_kernel(op, kernel_for(op, kdev), promoted_arrays(op, bound, compute), bound)
    for i in op.written_args:  # a library op that wrote its argument in place: as an in-place op does
        written = bound[i]
        if isinstance(written, Tensor):
            written._storage.version += 1
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


# Per dtype signature of a pointwise call (the promotion cache's key): its compute dtype, the numpy dtypes of
# compute and result, and whether any input must be converted to the compute dtype.
_pointwise_plans: dict = {}
_dt.default_dtype_listeners.append(_pointwise_plans.clear)


def _pointwise_plan(op: OpDef, bound: list, key: tuple) -> tuple:
    promo = promotion_cache.get(key)
    if promo is None:
        promo = promotion_cache[key] = compute_promotion(op, bound)
    compute, result_dtype = promo
    cnp = compute.np
    # Whether any input needs converting follows from the key's dtypes and scalar types, whatever their positions.
    convert = any(v is not None and (not isinstance(v, Tensor) or v._data.dtype != cnp)
                  for v in (bound[i] for i in op.promote_tensors))
    plan = _pointwise_plans[key] = (compute, cnp, result_dtype.np, convert)
    return plan


def _run_pointwise(op: OpDef, bound: list):
    """The hot path of elementwise ops: one pass over the inputs for dtype key, device and grad; what follows
    from the dtypes alone (promotion, which inputs to convert) is looked up once per dtype signature."""
    key = [op.promotion_tag if op.mode_arg is None else op.promotion_key(bound)]
    arrays = bound.copy()
    dev, grad = _scan(op, bound, arrays, key)
    key = tuple(key)
    plan = _pointwise_plans.get(key) or _pointwise_plan(op, bound, key)
    if plan[3]:
        compute, cnp = plan[0], plan[1]
        for i in op.promote_tensors:
            v = bound[i]
            if type(v) is Tensor or isinstance(v, Tensor):
                if v._data.dtype != cnp:
                    arrays[i] = arrays[i].astype(cnp)
            elif v is not None:
                arrays[i] = scalar_as(v, compute)
    kernel = op.kernels.get(dev.type) or kernel_for(op, dev)
    try:
        out = kernel(*arrays)
    except (ValueError, IndexError, TypeError, np.exceptions.AxisError, ZeroDivisionError, OverflowError) as e:
        raise _explain(op, bound, e) from None
    if type(out) is not np.ndarray and not getattr(out, "_is_device_array", False):
        out = np.asarray(out)
    rnp = plan[2]
    if out.dtype is not rnp and out.dtype != rnp:
        out = out.astype(rnp)
    t = _wrap(out, None, dev)
    if STATE.inference_mode:
        _mark_inference(t)
    if grad and STATE.grad_enabled and op.derivative is not None and (
            len(op.diff_args) == len(op.tensor_args) or _needs_grad(op, bound)):  # diff_args: a subset
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
            if view_src._extra is not None and keeps_conj(op, view_src, a):
                t._extras()["conj"] = True
            chain = view_src._view_chain
            if chain is None:
                t._base = view_src
                t._view_chain = ((op, bound[1:]),)
            else:
                t._base = view_src._base
                t._view_chain = chain + ((op, bound[1:]),)
            # This thread's grad mode decides: STATE's summary stays True while any other thread is alive.
            if view_src._requires_grad and not LOCAL.grad_enabled:
                t._extras()["no_grad_view"] = True  # autograd refuses to record in-place ops on it later
            return t
    return _wrap(a, None, dev)


def _run_inplace(op: OpDef, bound: list):
    """``self.op_(...)``: compute as the functional op, check the result fits ``self``, write it back."""
    if op.composite is not None:
        return op.composite(*bound)
    self_t = bound[0]
    if not isinstance(self_t, Tensor):
        raise TypeError(f"{op.name}(): self must be a Tensor, not {type_name(self_t)}")
    f = op.inplace_of or op
    dev = device_of(op, bound)
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
    if f.kind in ELEMENTWISE_KINDS and f.promotion != R.PROMOTE_NONE:
        compute, result_dtype = promotion(f, bound)
        arrays = promoted_arrays(f, bound, compute)
    else:
        result_dtype = None
        arrays = promoted_arrays(f, bound, None)
    target = self_t.dtype
    if result_dtype is not None and not _dt.can_cast(result_dtype, target):
        raise RuntimeError(
            f"{op.name}: result type {_dt.title(result_dtype)} can't be cast to the desired output type "
            f"{_dt.title(target)}"
        )
    saved_self = None
    if recording and "self" in op.saved_names:
        # The derivative reads self's old value: a recorded clone keeps its history for double backward.
        saved_self = run(R.get("clone"), [self_t, None]) if self_t._requires_grad else _wrap(
            np.conjugate(self_t._data) if is_conj(self_t) else self_t._data.copy(), None, dev)
    writable = type(dst) is not np.ndarray or dst.flags.writeable
    conj_self = self_t._extra is not None and is_conj(self_t)
    if (op.kernel_out and dev.type == "cpu" and writable and not conj_self
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
    out = _run_kernel(op, kernel_for(op, dev), arrays, bound)
    out = _as_array(out, None)
    if result_dtype is None and f.kind in ELEMENTWISE_KINDS and not _dt.can_cast(_dt.from_numpy_dtype(out.dtype), target):
        raise RuntimeError(  # PROMOTE_NONE ops (square of bool -> int64) learn their result type only here
            f"{op.name}: result type {_dt.title(_dt.from_numpy_dtype(out.dtype))} can't be cast to the desired "
            f"output type {_dt.title(target)}"
        )
    if out.shape != dst.shape:
        raise RuntimeError(
            f"{op.name}: output with shape {list(self_t.shape)} doesn't match the broadcast shape {list(out.shape)}"
        )
    if conj_self:
        write_conj(dst, out)
    elif writable:
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
