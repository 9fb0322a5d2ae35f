"""``toolkit.save`` and ``toolkit.load``: checkpoints as zip archives of raw tensor data plus a manifest.

A checkpoint is a zip archive (entries stored uncompressed) holding ``archive/manifest.json`` and one raw
little-endian binary entry per storage, ``archive/data/<key>``. The manifest names the format and its version
and describes the saved object tree: containers, Python scalars, dtypes, devices, and tensor references
(dtype, shape, strides, storage key, offset, requires_grad, whether it is a Parameter). Tensors that are views
of one storage are saved once and come back as views sharing one storage, as with PyTorch.

Loading never runs code from the file: there is no pickle, only JSON and raw numbers, and every field is
checked, so a truncated, corrupt or foreign file gives a ``RuntimeError`` naming the file and the problem::

    toolkit.save(model.state_dict(), "model.pt")
    model.load_state_dict(toolkit.load("model.pt"))

Saving to a path writes a temporary file next to the target, flushes it to disk and renames it over the
target, so a crash during ``save`` leaves the previous checkpoint intact.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from ._core import dtypes as _dt
from ._core.device import CPU, as_device, device
from ._core.shape import Size
from ._core.storage import Storage
from .tensor import Tensor, _wrap

__all__ = ["load", "save"]

FORMAT_NAME = "toolkit.checkpoint"
FORMAT_VERSION = 1
_PREFIX = "archive/"
_MANIFEST = _PREFIX + "manifest.json"
_CHUNK = 1 << 24
_MAX_DEPTH = 1000


# ---------------------------------------------------------------------------------------------------- saving
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
        from . import nn

        param_cls = getattr(nn, "Parameter", None)
        record = {
            "dtype": _dt._FROM_NP[data.dtype].name,
            "shape": [int(s) for s in data.shape],
            "stride": strides,
            "storage": key,
            "offset": offset,
            "requires_grad": bool(t.requires_grad),
            "parameter": bool(isinstance(param_cls, type) and isinstance(t, param_cls)),
            "device": str(t.device),
        }
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
            info = zipfile.ZipInfo(_PREFIX + "data/" + key, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=flat.nbytes > 0x7FFFFFFF) as dest:
                mv = memoryview(flat)
                for i in range(0, flat.nbytes, _CHUNK):
                    dest.write(mv[i:i + _CHUNK])


def save(obj: Any, f, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save tensors, state_dicts and nested containers of them to a path or a binary file object.

    Args match ``torch.save``; ``pickle_module`` and ``pickle_protocol`` are accepted and ignored, since
    checkpoints hold no pickled objects. Saving to a path is atomic: a temporary file in the same
    directory is written, fsynced and renamed over the target.
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
        _save_atomic(os.fspath(f), manifest, blobs)
    elif hasattr(f, "write"):
        _write_archive(f, manifest, blobs)
    else:
        raise AttributeError(f"toolkit.save: expected a path or a writable binary file object, got {type(f).__name__}")


def _save_atomic(path: str, manifest: dict, blobs: list) -> None:
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_archive(fh, manifest, blobs)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# ---------------------------------------------------------------------------------------------------- loading
class _Corrupt(Exception):
    """A problem with the file's contents; ``load`` reports it as a RuntimeError naming the file."""


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise _Corrupt(msg)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Reader:
    def __init__(self, zf: zipfile.ZipFile, manifest: dict, map_location) -> None:
        self.zf = zf
        self.map_location = map_location
        self.storage_info = manifest["storages"]
        self.tensor_records = manifest["tensors"]
        self.storages: dict[str, tuple[np.ndarray, Storage]] = {}
        self.tensors: dict[int, Tensor] = {}

    def decode(self, node, depth: int = 0):
        _check(depth <= _MAX_DEPTH, "object tree nested too deeply")
        if node is None or isinstance(node, (bool, str)) or _is_int(node):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        _check(isinstance(node, dict) and isinstance(node.get("$"), str), f"unexpected manifest node {node!r:.80}")
        tag = node["$"]
        if tag == "tensor":
            idx = node.get("index")
            _check(_is_int(idx) and 0 <= idx < len(self.tensor_records), f"bad tensor index {idx!r}")
            return self._tensor(idx)
        if tag in ("dict", "odict"):
            items = node.get("items")
            _check(isinstance(items, list) and all(isinstance(p, list) and len(p) == 2 for p in items),
                   f"bad {tag} entry in manifest")
            out = OrderedDict() if tag == "odict" else {}
            for k, v in items:
                key = self.decode(k, depth + 1)
                value = self.decode(v, depth + 1)
                try:
                    out[key] = value
                except TypeError as e:
                    raise _Corrupt(f"unhashable dict key {key!r:.80}") from e
            if "metadata" in node and tag == "odict":
                meta = self.decode(node["metadata"], depth + 1)
                _check(isinstance(meta, dict), "bad state_dict metadata")
                out._metadata = meta
            return out
        if tag == "tuple":
            _check(isinstance(node.get("items"), list), "bad tuple entry in manifest")
            return tuple(self.decode(v, depth + 1) for v in node["items"])
        if tag == "float":
            v = node.get("v")
            if isinstance(v, str):
                _check(v in ("nan", "inf", "-inf"), f"bad float {v!r}")
                return float(v)
            _check(isinstance(v, (int, float)) and not isinstance(v, bool), f"bad float {v!r}")
            return float(v)
        if tag == "dtype":
            _check(node.get("name") in _dt._NAMES, f"unknown dtype {node.get('name')!r}")
            return _dt._NAMES[node["name"]]
        if tag == "device":
            try:
                return device(node["type"], node["index"])
            except (KeyError, TypeError, RuntimeError) as e:
                raise _Corrupt(f"bad device entry {node!r:.80}") from e
        if tag == "size":
            v = node.get("v")
            _check(isinstance(v, list) and all(_is_int(s) and s >= 0 for s in v), "bad Size entry")
            return Size(v)
        if tag == "bytes":
            try:
                return bytes.fromhex(node["v"])
            except (KeyError, TypeError, ValueError) as e:
                raise _Corrupt("bad bytes entry") from e
        raise _Corrupt(f"unknown manifest node type {tag!r}")

    def _storage(self, key: str, dtypes: set) -> np.ndarray:
        cached = self.storages.get(key)
        if cached is not None:
            return cached[0]
        info = self.storage_info.get(key) if isinstance(key, str) else None
        _check(isinstance(info, dict) and _is_int(info.get("nbytes")) and info["nbytes"] >= 0,
               f"tensor refers to unknown storage {key!r}")
        name = _PREFIX + "data/" + key
        try:
            zinfo = self.zf.getinfo(name)
        except KeyError:
            raise _Corrupt(f"missing data entry {name}") from None
        nbytes = info["nbytes"]
        _check(zinfo.file_size == nbytes,
               f"data entry {name} holds {zinfo.file_size} bytes but the manifest says {nbytes}")
        buf = np.empty(nbytes, dtype=np.uint8)
        with self.zf.open(zinfo) as src:  # reading to the end checks the CRC
            got = src.readinto(memoryview(buf))
            _check(got == nbytes and not src.read(1), f"data entry {name} is truncated")
        (only,) = dtypes if len(dtypes) == 1 else (None,)
        if only is not None and nbytes % only.itemsize == 0:
            buf = buf.view(only.np)
            if sys.byteorder != "little":
                buf = buf.byteswap()
        self.storages[key] = (buf, Storage(buf, CPU))
        return buf

    def _tensor(self, idx: int) -> Tensor:
        t = self.tensors.get(idx)
        if t is not None:
            return t
        rec = self.tensor_records[idx]
        _check(isinstance(rec, dict), f"bad tensor record {idx}")
        dt = _dt._NAMES.get(rec.get("dtype")) if isinstance(rec.get("dtype"), str) else None
        _check(dt is not None, f"tensor {idx} has unknown dtype {rec.get('dtype')!r}")
        shape, stride, offset = rec.get("shape"), rec.get("stride"), rec.get("offset")
        _check(isinstance(shape, list) and all(_is_int(s) and s >= 0 for s in shape), f"tensor {idx} has bad shape")
        _check(isinstance(stride, list) and len(stride) == len(shape) and all(_is_int(s) and s >= 0 for s in stride),
               f"tensor {idx} has bad strides")
        _check(_is_int(offset) and offset >= 0, f"tensor {idx} has bad storage offset")
        key = rec.get("storage")
        dtypes = {_dt._NAMES.get(r.get("dtype")) for r in self.tensor_records
                  if isinstance(r, dict) and r.get("storage") == key and isinstance(r.get("dtype"), str)}
        base = self._storage(key, dtypes)
        item = dt.itemsize
        numel = math.prod(shape)
        if numel:
            end = (offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1) * item
            _check(end <= base.nbytes,
                   f"tensor {idx} of shape {tuple(shape)} needs {end} bytes but its storage holds {base.nbytes}")
            arr = np.ndarray(tuple(shape), dtype=dt.np, buffer=base, offset=offset * item,
                             strides=tuple(s * item for s in stride))
        else:
            arr = np.empty(tuple(shape), dtype=dt.np)
        storage = self.storages[key][1]
        location = rec.get("device", "cpu")
        _check(isinstance(location, str), f"tensor {idx} has bad device")
        t = _wrap(arr, storage if numel else None, CPU)
        target = self._target_device(location, storage)
        if target.type != "cpu":
            t = t.to(target)
        requires_grad = rec.get("requires_grad", False)
        _check(isinstance(requires_grad, bool), f"tensor {idx} has bad requires_grad")
        if rec.get("parameter"):
            from . import nn

            param_cls = getattr(nn, "Parameter", None)
            if isinstance(param_cls, type):
                t = param_cls(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
        elif requires_grad:
            _check(dt.is_floating_point, f"tensor {idx} of dtype {dt} cannot require grad")
            t.requires_grad_(True)
        self.tensors[idx] = t
        return t

    def _target_device(self, location: str, storage: Storage) -> device:
        ml = self.map_location
        if ml is None:
            target = location
        elif isinstance(ml, (str, device)):
            target = ml
        elif isinstance(ml, dict):
            target = ml.get(location, location)
        elif callable(ml):
            result = ml(storage, location)
            if result is None:
                target = location
            elif isinstance(result, Storage):
                target = result.device or CPU
            else:
                target = result
        else:
            raise TypeError(f"toolkit.load: map_location should be a str, device, dict or callable, got {type(ml).__name__}")
        target = as_device(target)
        if target.type == "cuda":
            from . import cuda

            if not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but toolkit.cuda.is_available() is False. "
                    "If you are running on a CPU-only machine, please use toolkit.load with "
                    "map_location=toolkit.device('cpu') to map your storages to the CPU."
                )
        return target


def _describe(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"


def load(f, map_location=None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved with ``toolkit.save`` from a path or a binary file object.

    ``map_location`` may be a device string, a ``toolkit.device``, a dict mapping saved locations to new
    ones, or a callable ``(storage, location)`` returning a storage or None, as in ``torch.load``. Loading is
    always restricted to data (``weights_only`` is accepted; False loads the same data). Problems with the
    file raise ``RuntimeError`` naming the file.
    """
    if pickle_module is not None:
        raise TypeError("toolkit.load: pickle_module is not supported; checkpoints never contain pickled objects")
    if mmap:
        raise RuntimeError("toolkit.load: mmap=True is not supported; tensors are read into memory")
    name = _describe(f)
    opened = None
    try:
        if isinstance(f, (str, os.PathLike)):
            try:
                opened = open(os.fspath(f), "rb")
            except FileNotFoundError:
                raise FileNotFoundError(2, "No such file or directory", os.fspath(f)) from None
            fileobj = opened
        elif hasattr(f, "read"):
            fileobj = f
            if not hasattr(f, "seek") or (hasattr(f, "seekable") and not f.seekable()):
                fileobj = io.BytesIO(f.read())
        else:
            raise AttributeError(f"toolkit.load: expected a path or a readable binary file object, got {type(f).__name__}")
        try:
            return _load_from(fileobj, map_location)
        except _Corrupt as e:
            raise RuntimeError(f"toolkit.load: {name} is not a valid checkpoint: {e}") from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as e:
            raise RuntimeError(f"toolkit.load: {name} is not a valid checkpoint (truncated or corrupt file): {e}") from None
    finally:
        if opened is not None:
            opened.close()


def _load_from(fileobj: IO[bytes], map_location) -> Any:
    try:
        zf = zipfile.ZipFile(fileobj, "r")
    except zipfile.BadZipFile as e:
        raise _Corrupt(f"not a zip archive, or the archive is truncated ({e})") from None
    with zf:
        if _MANIFEST not in zf.namelist():
            hint = " (files written by torch.save hold pickled objects and are not read)" if any(
                n.endswith("data.pkl") for n in zf.namelist()) else ""
            raise _Corrupt(f"no {_MANIFEST} in the archive{hint}")
        try:
            manifest = json.loads(zf.read(_MANIFEST).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _Corrupt(f"the manifest is not valid JSON ({e})") from None
        _check(isinstance(manifest, dict), "the manifest is not a JSON object")
        _check(manifest.get("format") == FORMAT_NAME, f"unknown format {manifest.get('format')!r}, "
                                                      f"expected {FORMAT_NAME!r}")
        version = manifest.get("version")
        _check(_is_int(version), f"bad format version {version!r}")
        _check(version <= FORMAT_VERSION, f"format version {version} was written by a newer toolkit; this toolkit "
                                          f"reads versions up to {FORMAT_VERSION}")
        _check(version >= 1, f"bad format version {version}")
        _check(manifest.get("byteorder") == "little", f"unsupported byte order {manifest.get('byteorder')!r}")
        _check(isinstance(manifest.get("storages"), dict), "the manifest has no storage table")
        _check(isinstance(manifest.get("tensors"), list), "the manifest has no tensor table")
        _check("root" in manifest, "the manifest has no root object")
        return _Reader(zf, manifest, map_location).decode(manifest["root"])
