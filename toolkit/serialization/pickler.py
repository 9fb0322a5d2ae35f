"""Pickling any object as ``torch.save`` does: tensors, storages, dtypes and devices under PyTorch's names.

The pickle names exactly the globals PyTorch writes (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``torch.float32``, ``torch.device``, ``torch.Size``, ``collections.OrderedDict``), whatever the objects are in
toolkit, so ``torch.load(path, weights_only=True)`` reads the file and ``toolkit.load`` maps the names back.
Storages are not pickled: each becomes a persistent id ``('storage', storage_type, key, location, numel)``
and its bytes a record of the archive. Views of one storage share one record, as in PyTorch; other objects
(modules, optimizers, numpy arrays) pickle as Python pickles them.

The pickler is Python's own (``pickle._Pickler``), because only it lets a global be written under a name that
is not importable here (``torch`` need not be installed to save a checkpoint PyTorch reads).
"""

from __future__ import annotations

import io
import pickle
import sys
from collections import OrderedDict
from typing import Any

import numpy as np

from .._core import dtypes as _dt
from .._core import qscheme as _qs
from .._core.device import device
from .._core.names import names_of
from .._core.shape import Size
from .._core.storage import Storage
from .._quantized import QuantizedTensor
from ..nn.parameter import Parameter
from ..tensor import Tensor, wrap
from .torch_names import (
    REBUILD_PARAMETER,
    REBUILD_PARAMETER_WITH_STATE,
    REBUILD_QTENSOR,
    REBUILD_TENSOR_V2,
    UNTYPED_STORAGE,
    storage_class_name,
)


class TorchName:
    """A global written into the pickle by name (``torch._utils._rebuild_tensor_v2``), never imported."""

    __slots__ = ("module", "name")

    def __init__(self, full_name: str) -> None:
        self.module, _, self.name = full_name.rpartition(".")

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"

    def __call__(self, *args: Any) -> Any:  # the pickler asks reduce functions to be callable
        raise TypeError(f"{self!r} is a name written into checkpoints, not a function to call")


_NAMES: dict[str, TorchName] = {}


def torch_name(full_name: str) -> TorchName:
    """The one :class:`TorchName` of ``full_name`` (one object per name, so the pickle memoizes it)."""
    found = _NAMES.get(full_name)
    if found is None:
        found = _NAMES[full_name] = TorchName(full_name)
    return found


class StorageRef:
    """A storage as one tensor's pickle refers to it: its record key, element type, location and length."""

    __slots__ = ("key", "type_name", "location", "numel")

    def __init__(self, key: str, type_name: str, location: str, numel: int) -> None:
        self.key, self.type_name, self.location, self.numel = key, type_name, location, numel


def _location(dev: device) -> str:
    """PyTorch's location tag: ``cpu``, ``cuda:0``."""
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


def _little_endian(flat: np.ndarray) -> np.ndarray:
    return flat if sys.byteorder == "little" or flat.dtype.itemsize == 1 else flat.byteswap()


class CheckpointPickler(pickle._Pickler):
    """Pickles an object for ``data.pkl``; :attr:`records` collects the ``(key, bytes)`` of each storage."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol: int = 2) -> None:
        super().__init__(file, protocol)
        self.records: list[tuple[str, np.ndarray]] = []
        self._by_storage: dict[int, tuple[str, np.ndarray]] = {}  # id(Storage) -> key, its flat array
        self._dtype_of: dict[int, _dt.dtype] = {}  # id(Storage) -> the dtype tensors view it with
        self._refs: dict[tuple[int, str], StorageRef] = {}
        self._keep: list[Any] = []  # objects whose ids are keys stay alive while pickling

    # ------------------------------------------------------------------------------ globals by name
    def _save_torch_global(self, obj: Any) -> None:
        name = obj if isinstance(obj, TorchName) else torch_name(f"torch.{obj.name}")
        self.write(pickle.GLOBAL + name.module.encode("utf-8") + b"\n" + name.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[TorchName] = _save_torch_global
    dispatch[_dt.dtype] = _save_torch_global
    dispatch[_dt.qdtype] = _save_torch_global
    dispatch[_qs.qscheme] = _save_torch_global  # torch.per_tensor_affine

    # ------------------------------------------------------------------------------ storages
    def persistent_id(self, obj: Any):
        if isinstance(obj, Storage):  # ``toolkit.save(t.untyped_storage())``, as ``torch.save`` of one
            obj = self._untyped(obj)
        elif isinstance(getattr(obj, "_untyped_storage", None), Storage) and \
                isinstance(getattr(obj, "dtype", None), _dt.dtype):  # a typed storage (``t.storage()``)
            ref = self._untyped(obj._untyped_storage)
            obj = self._ref(ref.key, obj.dtype, ref.location, ref.numel)
        if type(obj) is StorageRef:
            return ("storage", torch_name(obj.type_name), obj.key, obj.location, obj.numel)
        return None

    def _record(self, storage: Storage, flat: np.ndarray) -> str:
        entry = self._by_storage.get(id(storage))
        if entry is None:
            entry = self._by_storage[id(storage)] = (str(len(self.records)), flat)
            self._keep.append(storage)
            self.records.append((entry[0], _little_endian(flat)))
        return entry[0]

    def _ref(self, key: str, dt: _dt.dtype | None, location: str, nbytes: int) -> StorageRef:
        type_name = UNTYPED_STORAGE if dt is None else storage_class_name(dt)
        ref = self._refs.get((key, type_name))
        if ref is None:
            numel = nbytes if dt is None else nbytes // dt.itemsize
            ref = self._refs[(key, type_name)] = StorageRef(key, type_name, location, numel)
        return ref

    def _tensor_storage(self, t: Tensor, dt: _dt.dtype | None = None) -> tuple[StorageRef, int, tuple[int, ...]]:
        """The storage ``t`` views (saved whole, once), its element offset there and its element strides;
        ``dt`` names the storage's element type where the array's does not say it (a quantized tensor's)."""
        data, storage = t._data, t._storage
        dt = dt or _dt.FROM_NUMPY[data.dtype]
        item = data.itemsize
        location = _location(t.device)
        base = storage.base if storage is not None else None
        if t.device.type == "cpu" and isinstance(base, np.ndarray) and data.size and \
                (base.flags.c_contiguous or base.flags.f_contiguous) and base.nbytes % item == 0:
            start = data.__array_interface__["data"][0] - base.__array_interface__["data"][0]
            span = sum((n - 1) * s for n, s in zip(data.shape, data.strides)) + item
            if 0 <= start and start + span <= base.nbytes and start % item == 0 and \
                    all(s >= 0 and s % item == 0 for s in data.strides):
                seen = self._dtype_of.setdefault(id(storage), dt)
                if seen is not dt:
                    raise RuntimeError("Cannot save multiple tensors or storages that view the same data as "
                                       "different types")
                flat = base.ravel(order="K").view(np.uint8)  # memory order, no copy
                key = self._record(storage, flat.view(dt.np))
                return self._ref(key, dt, location, base.nbytes), start // item, \
                    tuple(s // item for s in data.strides)
        # Elsewhere (a CUDA tensor, an empty one, strides a storage cannot express): the data as its own storage.
        host = t.detach().cpu()._data if t.device.type != "cpu" else data
        contiguous = np.ascontiguousarray(host).reshape(-1)
        self._keep.append(contiguous)
        key = str(len(self.records))
        self.records.append((key, _little_endian(contiguous)))
        strides, acc = [], 1
        for n in reversed(data.shape):
            strides.append(acc)
            acc *= max(int(n), 1)
        return self._ref(key, dt, location, contiguous.nbytes), 0, tuple(strides[::-1])

    def _untyped(self, storage: Storage) -> StorageRef:
        base = storage.base
        if not isinstance(base, np.ndarray):  # a CUDA storage
            base = base.copy_to_host()
        flat = np.ascontiguousarray(base).reshape(-1).view(np.uint8)
        key = self._record(storage, flat)
        return self._ref(key, None, _location(storage.device or device("cpu")), flat.nbytes)

    # ------------------------------------------------------------------------------ tensors and friends
    def _tensor_reduce(self, t: Tensor) -> tuple:
        ref, offset, strides = self._tensor_storage(t)
        args = (ref, offset, tuple(int(s) for s in t._data.shape), strides, bool(t.requires_grad), OrderedDict())
        names = names_of(t)
        if names is not None:  # in the rebuild's metadata dict (PyTorch itself refuses to save named tensors)
            args += ({"names": names},)
        return (torch_name(REBUILD_TENSOR_V2), args)

    def _qtensor_reduce(self, q: QuantizedTensor) -> tuple:
        """As ``torch.save`` writes a quantized tensor: its integers in a ``torch.QInt8Storage`` (or ``QUInt8``,
        ``QInt32``) and its parameters, ``(per_tensor_affine, scale, zero_point)`` or
        ``(per_channel_affine, scales, zero_points, axis)``, scales float64 and zero points int64 tensors."""
        ref, offset, strides = self._tensor_storage(q, q._qdtype)
        if q._qscheme is _qs.per_tensor_affine:
            params = (q._qscheme, float(q._scale), int(q._zero_point))
        else:
            scales = wrap(np.asarray(q._scale, np.float64).copy())
            zero_points = wrap(np.asarray(q._zero_point, np.int64).copy())
            self._keep += [scales, zero_points]
            params = (q._qscheme, scales, zero_points, int(q._axis))
        args = (ref, offset, tuple(int(s) for s in q._data.shape), strides, params, False, OrderedDict())
        return (torch_name(REBUILD_QTENSOR), args)

    def reducer_override(self, obj: Any):
        if isinstance(obj, QuantizedTensor):
            return self._qtensor_reduce(obj)
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                data = obj.detach()
                self._keep.append(data)
                state = dict(obj.__dict__)
                if state:
                    return (torch_name(REBUILD_PARAMETER_WITH_STATE),
                            (data, bool(obj.requires_grad), OrderedDict(), state))
                return (torch_name(REBUILD_PARAMETER), (data, bool(obj.requires_grad), OrderedDict()))
            return self._tensor_reduce(obj)
        if isinstance(obj, Size):
            return (torch_name("torch.Size"), (tuple(obj),))
        if isinstance(obj, device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (torch_name("torch.device"), args)
        return NotImplemented


def dumps(obj: Any, protocol: int = 2) -> tuple[bytes, list[tuple[str, np.ndarray]]]:
    """``obj`` pickled for ``data.pkl``, and the records of the storages it refers to."""
    buf = io.BytesIO()
    pickler = CheckpointPickler(buf, protocol)
    pickler.dump(obj)
    return buf.getvalue(), pickler.records
