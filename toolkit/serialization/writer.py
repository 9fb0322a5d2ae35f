"""Manifest archives: an object tree as a JSON manifest, each storage as one raw zip entry.

This was ``toolkit.save``'s format before it wrote PyTorch's zip layout (:mod:`.saving`); ``toolkit.jit``
archives still hold their tensors this way (``_Writer``, ``_write_archive``), ``toolkit.load`` still reads
such checkpoints, and :func:`save_manifest` writes one (for tests of that reader and for tools that need
checkpoints without pickles).
"""

from __future__ import annotations

import json
import math
import os
import sys
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from .. import nn
from .._core import dtypes as _dt
from .._core.device import device
from .._core.names import names_of
from .._core.shape import Size
from .._core.storage import Storage
from ..tensor import Tensor
from .atomic import write_atomically
from .format import _CHUNK, _DATA, _MANIFEST, _MAX_DEPTH, _MAX_INT_DIGITS, FORMAT_NAME, FORMAT_VERSION

_INT_BOUND = 10 ** _MAX_INT_DIGITS  # ints with more digits would be refused by load


class _Writer:
    """Walks the object tree once, collecting tensors and their storages."""

    def __init__(self) -> None:
        self.tensors: list[dict] = []
        self.tensor_ids: dict[int, int] = {}
        self.storages: dict[int, tuple[str, np.ndarray]] = {}  # id(Storage) -> (key, bytes view)
        self.keep: list = []  # objects whose ids are used as keys stay alive while saving
        self.blobs: list[tuple[str, np.ndarray]] = []

    def encode(self, obj, path: str, depth: int = 0):
        if depth > _MAX_DEPTH:
            raise ValueError(f"toolkit.save: object nested more than {_MAX_DEPTH} levels deep at {path}")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            if not -_INT_BOUND < obj < _INT_BOUND:
                raise ValueError(f"toolkit.save: the integer at {path} has more than {_MAX_INT_DIGITS} digits; "
                                 "checkpoints hold integers of at most that many")
            return obj if type(obj) is int else int(obj)
        if isinstance(obj, float):
            if math.isfinite(obj):
                return {"$": "float", "v": float(obj)}
            return {"$": "float", "v": repr(float(obj))}
        if isinstance(obj, Tensor):
            return {"$": "tensor", "index": self._tensor(obj, path)}
        if isinstance(obj, _dt.dtype):
            return {"$": "dtype", "name": obj.name}
        if isinstance(obj, device):
            return {"$": "device", "type": obj.type, "index": obj.index}
        if isinstance(obj, Size):
            return {"$": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, (bytes, bytearray)):
            return {"$": "bytes", "v": bytes(obj).hex()}
        if isinstance(obj, dict):
            tag = "odict" if isinstance(obj, OrderedDict) else "dict"
            items = [[self.encode(k, f"{path} (key {k!r})", depth + 1), self.encode(v, f"{path}[{k!r}]", depth + 1)]
                     for k, v in obj.items()]
            out: dict[str, Any] = {"$": tag, "items": items}
            metadata = getattr(obj, "_metadata", None)
            if isinstance(metadata, dict):
                out["metadata"] = self.encode(metadata, f"{path}._metadata", depth + 1)
            return out
        if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
            items = [self.encode(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)]
            return items if type(obj) is list else {"$": "tuple", "items": items}
        if isinstance(obj, (np.integer, np.bool_)):
            return self.encode(obj.item(), path, depth)
        if isinstance(obj, np.floating):
            return self.encode(float(obj), path, depth)
        hint = ""
        if hasattr(obj, "state_dict") and hasattr(obj, "parameters"):
            hint = " (save module.state_dict() and load it into a new module instead)"
        raise TypeError(
            f"toolkit.save: cannot save an object of type {type(obj).__name__} at {path}{hint}; checkpoints hold "
            "tensors, dicts, lists, tuples, str, int, float, bool, None, bytes, dtypes and devices"
        )

    def _tensor(self, t: Tensor, path: str) -> int:
        idx = self.tensor_ids.get(id(t))
        if idx is not None:
            return idx
        if t.device.type != "cpu":
            t_cpu = t.cpu()
            data, storage = t_cpu._data, t_cpu._storage
        else:
            data, storage = t._data, t._storage
        key, offset, strides = self._storage_for(data, storage)

        param_cls = getattr(nn, "Parameter", None)
        record = {
            "dtype": _dt.FROM_NUMPY[data.dtype].name,
            "shape": [int(s) for s in data.shape],
            "stride": strides,
            "storage": key,
            "offset": offset,
            "requires_grad": bool(t.requires_grad),
            "parameter": bool(isinstance(param_cls, type) and isinstance(t, param_cls)),
            "device": str(t.device),
        }
        names = names_of(t)
        if names is not None:
            record["names"] = list(names)
        self.tensors.append(record)
        self.keep.append(t)
        idx = self.tensor_ids[id(t)] = len(self.tensors) - 1
        return idx

    def _storage_for(self, data: np.ndarray, storage: Storage) -> tuple[str, int, list[int]]:
        """The storage key, element offset and element strides of ``data`` in a saved storage.

        The whole storage is saved once when ``data`` lies inside it at a whole-element offset with
        non-negative whole-element strides; otherwise the tensor's data is saved as its own storage.
        """
        item = data.itemsize
        base = storage.base if storage is not None else None
        if isinstance(base, np.ndarray) and (base.flags.c_contiguous or base.flags.f_contiguous) and data.size:
            start = data.__array_interface__["data"][0] - base.__array_interface__["data"][0]
            span = sum((n - 1) * s for n, s in zip(data.shape, data.strides)) + item
            ok = (0 <= start and start + span <= base.nbytes and start % item == 0
                  and all(s >= 0 and s % item == 0 for s in data.strides))
            if ok:
                entry = self.storages.get(id(storage))
                if entry is None:
                    key = str(len(self.blobs))
                    flat = base.ravel(order="K").view(np.uint8)  # memory order, no copy
                    entry = self.storages[id(storage)] = (key, flat)
                    self.keep.append(storage)
                    self.blobs.append(entry)
                return entry[0], start // item, [s // item for s in data.strides]
        contiguous = np.ascontiguousarray(data)
        key = str(len(self.blobs))
        self.blobs.append((key, contiguous.reshape(-1).view(np.uint8)))
        strides, acc = [], 1
        for n in reversed(contiguous.shape):
            strides.append(acc)
            acc *= max(int(n), 1)
        return key, 0, strides[::-1]


def _little_endian(flat: np.ndarray, dtypes: set) -> np.ndarray:
    if sys.byteorder == "little" or not dtypes:
        return flat
    (dt,) = dtypes  # big-endian hosts: storages viewed with one dtype are swapped to little-endian
    return flat.view(dt.np).byteswap().view(np.uint8)


def _write_archive(fileobj: IO[bytes], manifest: dict, blobs: list[tuple[str, np.ndarray]]) -> None:
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_MANIFEST, json.dumps(manifest, allow_nan=False, separators=(",", ":")))
        for key, flat in blobs:
            info = zipfile.ZipInfo(_DATA + key, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=flat.nbytes > 0x7FFFFFFF) as dest:
                mv = memoryview(flat)
                for i in range(0, flat.nbytes, _CHUNK):
                    dest.write(mv[i:i + _CHUNK])


def save_manifest(obj: Any, f) -> None:
    """Save tensors, state_dicts and nested containers of them as a manifest archive (no pickle).

    Containers may nest up to 100 levels deep and integers have at most 4300 digits (what the manifest reader
    accepts).

    Saving to a path is atomic: the data goes to a temporary file in the same directory (unnamed where the OS
    allows it, so a killed save leaves nothing behind), is fsynced and renamed over the target, so the previous
    checkpoint survives a crash. A named temporary file left by a killed save is removed by the next save to the
    same path.
    """
    writer = _Writer()
    root = writer.encode(obj, "obj")
    dtypes_per_storage: dict[str, set] = {}
    for rec in writer.tensors:
        dtypes_per_storage.setdefault(rec["storage"], set()).add(_dt._NAMES[rec["dtype"]])
    blobs = [(k, _little_endian(flat, dtypes_per_storage.get(k, set()))) for k, flat in writer.blobs]
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "byteorder": "little",
        "storages": {k: {"nbytes": int(flat.nbytes)} for k, flat in blobs},
        "tensors": writer.tensors,
        "root": root,
    }
    if isinstance(f, (str, os.PathLike)):
        write_atomically(os.fspath(f), lambda fh: _write_archive(fh, manifest, blobs))
    elif hasattr(f, "write"):
        _write_archive(f, manifest, blobs)
    else:
        raise AttributeError(f"toolkit.save: expected a path or a writable binary file object, got {type(f).__name__}")
