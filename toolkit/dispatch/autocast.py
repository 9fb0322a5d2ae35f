"""Autocast in the dispatcher: an op's ``autocast`` policy (from its registry definition) casts its inputs.

The observer below sits first in ``STATE.observers`` only while some thread has autocast enabled (see
``toolkit._core.autocast_state``), so with autocast off the hot path pays nothing beyond the dispatcher's one
``if STATE.observers``. For an op whose definition carries a policy for the device its tensors are on, it
casts the eligible inputs (floating tensors on that device other than float64, as PyTorch's
``is_eligible``) and runs the op with autocast excluded, so a composite listed itself keeps its inner ops
as written (PyTorch's ``ExcludeDispatchKeyGuard``). Unlisted composites run with autocast on, so their
parts are cast, as PyTorch's CompositeImplicitAutograd ops decompose below its Autocast key.

- ``lower``: to the autocast dtype (``mm``, ``conv2d``, ``linear``...);
- ``fp32``: to float32 (losses, norms, ``prod``...);
- ``promote``: to the widest dtype among them (``cat``, ``stack``, ``index_copy``).

The casts are ``_to_copy`` calls through the dispatcher, so autograd records them (gradients reach a float32
weight in float32), a trace records them as ``aten::_to_copy`` nodes (PyTorch's trace shows ``aten::to``),
and the profiler sees them. Float32 leaves that require grad (weights) are cast once per outermost autocast
region and the copy reused, as PyTorch's weight cache does.
"""

from __future__ import annotations

from .._core import autocast_state as _state
from .._core import dtypes as _dt
from ..ops import registry as R
from ..tensor import Tensor
from .running import execute

_TO_COPY = R.get("_to_copy")


def _device_type(op: R.OpDef, bound: list) -> str | None:
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            return v._storage.device.type
        if isinstance(v, (list, tuple)):
            for e in v:
                if isinstance(e, Tensor):
                    return e._storage.device.type
    return None


def _eligible(v, device_type: str) -> bool:
    return (isinstance(v, Tensor) and v.dtype.is_floating_point and v.dtype is not _dt.float64
            and v._storage.device.type == device_type)


def _cast(v: Tensor, dtype, lower):
    if v.dtype is dtype:
        return v
    local = _state.LOCAL
    cacheable = (dtype is lower and v.dtype is _dt.float32 and v._requires_grad and v.grad_fn is None
                 and v._base is None and local.cache_enabled)
    if cacheable:
        hit = local.cache.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
    out = execute(_TO_COPY, [v, dtype, None, False, False])
    if cacheable:
        local.cache[id(v)] = (v, out)
    return out


def _target(policy: str, args: list, device_type: str, lower):
    if policy == "fp32":
        return _dt.float32
    if policy == "lower":
        return lower
    return _dt.float32 if any(v.dtype is _dt.float32 for v in args if _eligible(v, device_type)) else lower


class AutocastObserver:
    """The dispatcher's autocast hook (``on_call``), first among the observers while autocast is on."""

    def on_call(self, op: R.OpDef, bound: list, run):
        policy = op.autocast
        local = _state.LOCAL
        if policy is None or local.excluded:
            return run()
        device_type = _device_type(op, bound)
        if device_type is None or not local.enabled.get(device_type) or device_type not in policy:
            return run()
        lower = local.dtype[device_type]
        if lower is None:
            raise RuntimeError(f"{op.name}: {_state.NO_BFLOAT16}")
        flat = []
        for i in op.tensor_args:
            v = bound[i]
            flat.extend(v if isinstance(v, (list, tuple)) else (v,))
        dtype = _target(policy[device_type], flat, device_type, lower)
        for i in op.tensor_args:
            v = bound[i]
            if isinstance(v, (list, tuple)):
                bound[i] = type(v)(_cast(e, dtype, lower) if _eligible(e, device_type) else e for e in v)
            elif _eligible(v, device_type):
                bound[i] = _cast(v, dtype, lower)
        local.excluded = True
        try:
            return run()
        finally:
            local.excluded = False


_state.HOOK = AutocastObserver()
