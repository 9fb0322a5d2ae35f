"""What the names in a PyTorch checkpoint's pickle become in toolkit: storages and the tensor rebuild functions.

A checkpoint's ``data.pkl`` builds each tensor with a call such as
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``, where ``storage`` is
a persistent id the loader resolves (:class:`LoadedStorage`). The functions here are toolkit's versions of
those calls. Their arguments come from the file, so each one is checked before anything is made: a view must
lie inside its storage, its size must fit the loader's byte budget, and a bad value is the file's fault
(``_Corrupt``, reported as a ``RuntimeError`` naming the file).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _quantized
from .._core import dtypes as _dt
from .._core import qscheme as _qs
from .._core.device import CPU
from .._core.names import check_names, set_names
from .._core.storage import Storage
from ..nn.parameter import Parameter
from ..ops import quantized as _qk
from ..tensor import Tensor, wrap
from .format import _MAX_DIMS, _check, _Corrupt, _is_int64


class StorageType:
    """A storage class named in a checkpoint (``torch.FloatStorage``, ``torch.storage.UntypedStorage``): the
    element type its persistent ids count in. ``dtype`` is None for PyTorch dtypes toolkit has no equivalent of
    (``torch.BFloat16Storage``); loading one says so."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: _dt.dtype | None) -> None:
        self.name = name
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"<storage type {self.name}>"


class LoadedStorage(Storage):
    """A storage read from a checkpoint: the CPU buffer (typed as the file's storage class), the device
    ``map_location`` sends its tensors to, and the loader's byte budget (dropped when the load ends)."""

    __slots__ = ("dtype", "target", "budget", "key")

    def __init__(self, base: np.ndarray, dtype: _dt.dtype, target, budget, key: str) -> None:
        super().__init__(base, CPU)
        self.dtype = dtype
        self.target = target
        self.budget = budget
        self.key = key

    def __repr__(self) -> str:
        return f"<storage {self.key} of {self.base.nbytes} bytes>"


def _shape_text(shape) -> str:
    text = str(tuple(shape))
    return text if len(text) <= 80 else text[:76] + "...)"


def _ints(value: Any, what: str) -> tuple[int, ...]:
    _check(isinstance(value, (tuple, list)) and len(value) <= _MAX_DIMS and all(_is_int64(v) for v in value),
           f"a tensor in the file has a bad {what} {value!r:.80}")
    return tuple(int(v) for v in value)


def _view(storage: Any, offset: Any, size: Any, stride: Any, dt: _dt.dtype | None) -> Tensor:
    """A CPU tensor viewing ``storage``; every argument checked against the storage and the budget."""
    _check(isinstance(storage, LoadedStorage), f"a tensor in the file is built on {type(storage).__name__}, "
                                               "not a storage")
    dt = storage.dtype if dt is None else dt
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    _check(len(strides) == len(shape), f"a tensor in the file has size {_shape_text(shape)} but stride "
                                       f"{_shape_text(strides)}")
    _check(_is_int64(offset), f"a tensor in the file has a bad storage offset {offset!r:.80}")
    item = dt.itemsize
    numel = math.prod(shape)
    if storage.budget is not None:
        storage.budget.check_size(numel * item, f"a tensor of shape {_shape_text(shape)} and dtype {dt}")
    base = storage.base
    try:
        if numel:
            end = (offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * item
            _check(end <= base.nbytes, f"a tensor of shape {_shape_text(shape)} at offset {offset} needs {end} "
                                       f"bytes but its storage {storage.key!r} holds {base.nbytes}")
            arr = np.ndarray(shape, dtype=dt.np, buffer=base, offset=offset * item,
                             strides=tuple(s * item for s in strides))
        else:
            arr = np.empty(shape, dtype=dt.np)
    except ValueError as e:
        raise _Corrupt(f"a tensor of shape {_shape_text(shape)} cannot be made ({e})") from e
    return wrap(arr, storage if numel else None, CPU)


def _finish(t: Tensor, storage: LoadedStorage, requires_grad: Any) -> Tensor:
    _check(isinstance(requires_grad, bool), f"a tensor in the file has a bad requires_grad {requires_grad!r:.40}")
    _check(not requires_grad or t.dtype.is_floating_point,
           f"a tensor of dtype {t.dtype} in the file requires grad; only floating point tensors can")
    target = storage.target
    if target is not None and target.type != "cpu":
        t = t.to(target)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_hooks(hooks: Any) -> None:
    _check(hooks is None or isinstance(hooks, dict), f"a tensor in the file has bad backward hooks {hooks!r:.40}")


def rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    """``torch._utils._rebuild_tensor``: a view of a typed storage."""
    return _finish(_view(storage, storage_offset, size, stride, None), storage, False)


def rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any = False,
                      backward_hooks: Any = None, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: what ``torch.save`` writes for every dense tensor."""
    _check_hooks(backward_hooks)
    return _named(_finish(_view(storage, storage_offset, size, stride, None), storage, requires_grad), metadata)


def rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                      backward_hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v3``: a view of an untyped storage with the dtype given apart."""
    _check_hooks(backward_hooks)
    _check(isinstance(dtype, _dt.dtype), f"a tensor in the file has a bad dtype {dtype!r:.40}")
    return _named(_finish(_view(storage, storage_offset, size, stride, dtype), storage, requires_grad), metadata)


def _named(t: Tensor, metadata: Any) -> Tensor:
    """Names saved in the rebuild's ``metadata`` dict (``{"names": ("N", None)}``); its other keys, PyTorch's
    conjugation and negation bits, are not read here."""
    names = metadata.get("names") if isinstance(metadata, dict) else None
    if names is None:
        return t
    _check(isinstance(names, tuple), f"a tensor in the file has bad names {names!r:.60}")
    try:
        set_names(t, check_names(names, t.ndim))
    except (RuntimeError, TypeError) as e:
        raise _Corrupt(f"a tensor in the file has bad names ({e})") from e
    return t


def _parameter(data: Any, requires_grad: Any) -> Parameter:
    _check(isinstance(data, Tensor), f"a Parameter in the file holds {type(data).__name__}, not a tensor")
    _check(isinstance(requires_grad, bool), f"a Parameter in the file has a bad requires_grad {requires_grad!r:.40}")
    _check(not requires_grad or data.dtype.is_floating_point,
           f"a Parameter of dtype {data.dtype} in the file requires grad; only floating point tensors can")
    return Parameter(data.detach(), requires_grad)


def _set_state(obj: Any, state: Any) -> None:
    """PyTorch's ``_set_obj_state``: a dict of attributes, or ``(dict, slots)``."""
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is None:
            continue
        _check(isinstance(part, dict) and all(isinstance(k, str) for k in part),
               f"bad object state {part!r:.80}")
        for k, v in part.items():
            _check(not hasattr(type(obj), k), f"the file sets {type(obj).__name__}.{k:.40}, which is not a plain "
                                              "attribute")
            try:
                setattr(obj, k, v)
            except (AttributeError, TypeError) as e:
                raise _Corrupt(f"cannot set attribute {k!r:.40} of a {type(obj).__name__} ({e})") from e


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Parameter:
    """``torch._utils._rebuild_parameter``."""
    _check_hooks(backward_hooks)
    return _parameter(data, requires_grad)


def rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any, state: Any) -> Parameter:
    """``torch._utils._rebuild_parameter_with_state``: a Parameter with Python attributes."""
    _check_hooks(backward_hooks)
    p = _parameter(data, requires_grad)
    _set_state(p, state)
    return p


def quantized_over(ints: Tensor, dtype: Any, scheme: Any, scale: Any, zero_point: Any, axis: Any,
                   what: str = "a quantized tensor in the file") -> Tensor:
    """The quantized tensor over the loaded integers ``ints`` (sharing their storage) with parameters read from a
    file, each checked first: a positive finite scale (per channel: one per slice along ``axis``, as float64),
    a zero point its dtype can hold. Checkpoints (``_rebuild_qtensor``) and JIT archives both build through here,
    so a damaged or hostile file is refused the same way by either."""
    _check(isinstance(dtype, _dt.qdtype) and dtype.name in _qk.RANGES and ints.dtype.np == dtype.np,
           f"{what} has dtype {dtype!r:.40} over {ints.dtype} integers")
    _check(ints.device.type == "cpu" and not ints.requires_grad,
           f"{what} must be a CPU tensor that does not require grad")
    lo, hi = _qk.RANGES[dtype.name]
    if scheme is _qs.per_tensor_affine:
        _check(isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale)
               and scale > 0 and _is_int64(zero_point, lo) and zero_point <= hi and axis is None,
               f"{what} has bad per-tensor parameters {(scale, zero_point)!r:.80}")
        return _quantized.make(ints._data, dtype, scheme.name, float(scale), int(zero_point), None, CPU,
                               ints._storage)
    _check(scheme is _qs.per_channel_affine,  # float zero points: toolkit's quantized tensors have none
           f"{what} has the scheme {scheme!r:.40}, which toolkit cannot load")
    _check(_is_int64(axis) and axis < max(ints.dim(), 1), f"{what} has a bad axis {axis!r:.40}")
    n = ints.shape[axis] if ints.dim() else 0
    scales = np.asarray(scale, np.float64) if not isinstance(scale, Tensor) else np.asarray(scale._data, np.float64)
    points = zero_point._data if isinstance(zero_point, Tensor) else np.asarray(zero_point)
    _check(points.dtype.kind != "f",  # torch.save writes a per_channel_affine_float_qparams tensor this way
           f"{what} has float zero points (per_channel_affine_float_qparams), which toolkit cannot load")
    _check(scales.shape == (n,) and points.shape == (n,) and points.dtype.kind in "iu"
           and bool(np.all(np.isfinite(scales) & (scales > 0))) and bool(np.all((points >= lo) & (points <= hi))),
           f"{what} has bad per-channel parameters: {n} positive scales and zero points in [{lo}, {hi}] expected")
    return _quantized.make(ints._data, dtype, scheme.name, scales, points.astype(np.int64), int(axis), CPU,
                           ints._storage)


def rebuild_qtensor(storage: Any, storage_offset: Any, size: Any, stride: Any, quantizer_params: Any,
                    requires_grad: Any, backward_hooks: Any) -> Tensor:
    """``torch._utils._rebuild_qtensor``: a quantized tensor over a ``torch.QInt8Storage`` (or ``QUInt8``,
    ``QInt32``) with its parameters: ``(per_tensor_affine, scale, zero_point)`` or
    ``(per_channel_affine, scales, zero_points, axis)``."""
    _check_hooks(backward_hooks)
    _check(isinstance(storage, LoadedStorage) and isinstance(storage.dtype, _dt.qdtype),
           f"a quantized tensor in the file is built on {getattr(storage, 'dtype', storage)!r:.40}, not a quantized "
           "storage")
    _check(requires_grad is False, "a quantized tensor in the file requires grad")
    target = storage.target
    _check(target is None or target.type == "cpu", f"toolkit keeps quantized tensors on the CPU, not {target}")
    ints = _view(storage, storage_offset, size, stride, None)
    _check(isinstance(quantizer_params, tuple) and len(quantizer_params) in (3, 4),
           f"a quantized tensor in the file has bad parameters {quantizer_params!r:.80}")
    scheme, scale, zero_point, *axis = quantizer_params
    return quantized_over(ints, storage.dtype, scheme, scale, zero_point, axis[0] if axis else None)


_REBUILDERS = (rebuild_tensor, rebuild_tensor_v2, rebuild_tensor_v3, rebuild_parameter, rebuild_parameter_with_state,
               rebuild_qtensor)


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
    """``torch._tensor._rebuild_from_type_v2``: a tensor rebuilt by ``func``, then given type ``new_type`` and
    its Python attributes (PyTorch writes it for tensors that carry attributes)."""
    _check(any(func is r for r in _REBUILDERS), f"_rebuild_from_type_v2 is asked to call {func!r:.80}, which is "
                                                "not a tensor rebuild function")
    _check(isinstance(args, tuple), "_rebuild_from_type_v2 got bad arguments")
    t = func(*args)
    _check(new_type is Tensor or (isinstance(new_type, type) and issubclass(new_type, Parameter)),
           f"cannot make a tensor of type {new_type!r:.80}")
    if new_type is not Tensor and type(t) is not new_type:
        t = new_type(t.detach(), t.requires_grad)
    if state:
        _set_state(t, state)
    return t


def unsupported(what: str):
    """A stand-in for a rebuild function PyTorch allows in checkpoints but toolkit cannot honour (sparse,
    quantized, nested or meta tensors): calling it says so."""

    def refuse(*args: Any, **kwargs: Any):
        raise _Corrupt(f"the file holds {what}, which toolkit cannot load")

    refuse.__qualname__ = refuse.__name__ = f"unsupported[{what}]"
    return refuse
