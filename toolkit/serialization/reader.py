"""Manifest archives read back (the format ``toolkit.save`` wrote before PyTorch's layout, and the tensor
tables of ``toolkit.jit`` archives), every field and size checked first.

Nothing in the file runs: the manifest is JSON, storages are raw numbers. Work is linear in the file's records
(one pass builds the storage-to-dtypes table that used to be rebuilt for every tensor), memory is bounded by
``max_bytes`` (see :mod:`.archive`), and every malformed input, whatever Python or numpy error it would cause,
is reported as one ``RuntimeError`` naming the file and the problem, with the original error as its cause.
"""

from __future__ import annotations

import json
import math
import os
import sys
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import nn
from .._core import dtypes as _dt
from .._core.device import CPU, device
from .._core.names import check_names, set_names
from .._core.shape import Size
from .._core.storage import Storage
from ..tensor import Tensor, wrap
from .archive import BoundedArchive
from .format import (
    _DATA,
    _MANIFEST,
    _MAX_DEPTH,
    _MAX_DIMS,
    _MAX_INT_DIGITS,
    FORMAT_NAME,
    FORMAT_VERSION,
    _check,
    _Corrupt,
    _is_int,
    _is_int64,
)
from .locations import target_device


def _shape(shape: list) -> str:
    text = str(tuple(shape))
    return text if len(text) <= 80 else text[:76] + "...)"


def _parse_int(text: str) -> int:
    _check(len(text.lstrip("-")) <= _MAX_INT_DIGITS,
           f"the manifest holds an integer of more than {_MAX_INT_DIGITS} digits")
    return int(text)


def _parse_manifest(data: bytes | bytearray) -> Any:
    """The manifest's JSON, integers of at most 4300 digits whatever the process's own limit, and the nesting
    Python's recursion limit allows (``decode`` then enforces the format's own depth limit)."""
    # Python's own limit on integer digits (4300 by default) is enforced in C; the slower check runs only
    # where this process lifted or raised it.
    own = sys.get_int_max_str_digits()
    try:
        return json.loads(data.decode("utf-8"), parse_int=None if 0 < own <= _MAX_INT_DIGITS else _parse_int)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _Corrupt(f"the manifest is not valid JSON ({e})") from e
    except RecursionError as e:
        raise _Corrupt(f"the manifest is nested too deeply (objects nest at most {_MAX_DEPTH} levels)") from e
    except ValueError as e:
        if "integer string conversion" in str(e):
            raise _Corrupt(f"the manifest holds an integer of more than {_MAX_INT_DIGITS} digits") from e
        raise _Corrupt(f"the manifest holds an unreadable value ({e})") from e


class _Reader:
    """Rebuilds the object tree of a manifest; storages are read from ``zf`` when a tensor first needs them.

    ``archive`` carries the byte budget, shared with the manifest's read (by default a new
    :class:`BoundedArchive` of ``zf`` with the default ``max_bytes``); ``toolkit.jit.load`` passes its own.
    """

    def __init__(self, zf: zipfile.ZipFile, manifest: dict, map_location,
                 archive: BoundedArchive | None = None) -> None:
        self.zf = zf
        self.archive = archive if archive is not None else BoundedArchive(zf)
        self.map_location = map_location
        self.storage_info = manifest["storages"]
        self.tensor_records = manifest["tensors"]
        self.storages: dict[str, tuple[np.ndarray, Storage]] = {}
        self.tensors: dict[int, Tensor] = {}
        self._dtypes_of: dict[str, set] | None = None
        #: Set by ``toolkit.load``: errors of the caller's map_location function reach the caller unchanged
        #: instead of being reported as the file's fault.
        self.wrap_caller_errors = False

    def decode(self, node, depth: int = 0):
        _check(depth <= _MAX_DEPTH, f"object tree nested more than {_MAX_DEPTH} levels deep")
        if node is None or isinstance(node, (bool, str)) or _is_int(node):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        _check(isinstance(node, dict) and isinstance(node.get("$"), str), f"unexpected manifest node {node!r:.80}")
        tag = node["$"]
        if tag == "tensor":
            idx = node.get("index")
            _check(_is_int(idx) and 0 <= idx < len(self.tensor_records), f"bad tensor index {idx!r:.80}")
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
            return tuple([self.decode(v, depth + 1) for v in node["items"]])
        if tag == "float":
            v = node.get("v")
            if isinstance(v, str):
                _check(v in ("nan", "inf", "-inf"), f"bad float {v!r:.80}")
                return float(v)
            _check(isinstance(v, (int, float)) and not isinstance(v, bool), f"bad float {v!r:.80}")
            try:
                return float(v)
            except OverflowError as e:
                raise _Corrupt(f"float out of range: {v!r:.80}") from e
        if tag == "dtype":
            _check(node.get("name") in _dt._NAMES, f"unknown dtype {node.get('name')!r:.80}")
            return _dt._NAMES[node["name"]]
        if tag == "device":
            index = node.get("index")
            _check(index is None or _is_int64(index), f"bad device entry {node!r:.80}")
            try:
                return device(node["type"], index)
            except (KeyError, TypeError, ValueError, RuntimeError) as e:
                raise _Corrupt(f"bad device entry {node!r:.80}") from e
        if tag == "size":
            v = node.get("v")
            _check(isinstance(v, list) and all(_is_int64(s) for s in v), "bad Size entry")
            return Size(v)
        if tag == "bytes":
            try:
                return bytes.fromhex(node["v"])
            except (KeyError, TypeError, ValueError) as e:
                raise _Corrupt("bad bytes entry") from e
        raise _Corrupt(f"unknown manifest node type {tag!r:.80}")

    def _storage_dtypes(self, key: str) -> set:
        """The dtypes the tensors on storage ``key`` view it with; the table is built in one pass."""
        if self._dtypes_of is None:
            table: dict[str, set] = {}
            for r in self.tensor_records:
                if isinstance(r, dict) and isinstance(r.get("storage"), str):
                    dt = _dt._NAMES.get(r.get("dtype")) if isinstance(r.get("dtype"), str) else None
                    table.setdefault(r["storage"], set()).add(dt)
            self._dtypes_of = table
        return self._dtypes_of.get(key, set())

    def _storage(self, key: str) -> np.ndarray:
        cached = self.storages.get(key)
        if cached is not None:
            return cached[0]
        info = self.storage_info.get(key) if isinstance(key, str) else None
        _check(isinstance(info, dict) and _is_int64(info.get("nbytes")), f"tensor refers to unknown storage {key!r:.80}")
        name = _DATA + key
        nbytes = info["nbytes"]
        zinfo = self.archive.entry(name)
        _check(zinfo.file_size == nbytes,
               f"data entry {name} holds {zinfo.file_size} bytes but the manifest says {nbytes}")
        self.archive.charge(nbytes, f"data entry {name}")
        buf = np.empty(nbytes, dtype=np.uint8)
        self.archive.read_into(zinfo, buf)
        dtypes = self._storage_dtypes(key)
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
        _check(dt is not None, f"tensor {idx} has unknown dtype {rec.get('dtype')!r:.80}")
        shape, stride, offset = rec.get("shape"), rec.get("stride"), rec.get("offset")
        _check(isinstance(shape, list) and len(shape) <= _MAX_DIMS and all(_is_int64(s) for s in shape),
               f"tensor {idx} has bad shape")
        _check(isinstance(stride, list) and len(stride) == len(shape) and all(_is_int64(s) for s in stride),
               f"tensor {idx} has bad strides")
        _check(_is_int64(offset), f"tensor {idx} has bad storage offset")
        location = rec.get("device", "cpu")
        _check(isinstance(location, str), f"tensor {idx} has bad device")
        requires_grad = rec.get("requires_grad", False)
        _check(isinstance(requires_grad, bool), f"tensor {idx} has bad requires_grad")
        _check(not requires_grad or dt.is_floating_point, f"tensor {idx} of dtype {dt} cannot require grad")
        item = dt.itemsize
        numel = math.prod(shape)
        self.archive.check_size(numel * item, f"tensor {idx} of shape {_shape(shape)} and dtype {dt}")
        key = rec.get("storage")
        base = self._storage(key)
        try:
            if numel:
                end = (offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1) * item
                _check(end <= base.nbytes,
                       f"tensor {idx} of shape {_shape(shape)} needs {end} bytes but its storage holds {base.nbytes}")
                arr = np.ndarray(tuple(shape), dtype=dt.np, buffer=base, offset=offset * item,
                                 strides=tuple(s * item for s in stride))
            else:
                arr = np.empty(tuple(shape), dtype=dt.np)
        except ValueError as e:
            raise _Corrupt(f"tensor {idx} of shape {_shape(shape)} cannot be made ({e})") from e
        storage = self.storages[key][1]
        t = wrap(arr, storage if numel else None, CPU)
        target = self._target_device(location, storage, idx)
        if target.type != "cpu":
            t = t.to(target)
        if rec.get("parameter"):
            param_cls = getattr(nn, "Parameter", None)
            if isinstance(param_cls, type):
                t = param_cls(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
        elif requires_grad:
            t.requires_grad_(True)
        if rec.get("names") is not None:
            try:
                set_names(t, check_names(rec["names"], len(shape)))
            except (RuntimeError, TypeError) as e:
                raise _Corrupt(f"tensor {idx} has bad names ({e})") from e
        self.tensors[idx] = t
        return t

    def _target_device(self, location: str, storage: Storage, idx: int = -1) -> device:
        return target_device(location, storage, self.map_location, f"tensor {idx}", self.wrap_caller_errors)


def _describe(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"


def load_manifest_archive(zf: zipfile.ZipFile, map_location, max_bytes: int | None = None) -> Any:
    """The object tree of a manifest archive (``archive/manifest.json``, the format ``toolkit.save`` wrote
    before it wrote PyTorch's layout), every field checked."""
    archive = BoundedArchive(zf, max_bytes)
    manifest = _parse_manifest(archive.read(_MANIFEST))
    _check(isinstance(manifest, dict), "the manifest is not a JSON object")
    _check(manifest.get("format") == FORMAT_NAME, f"unknown format {manifest.get('format')!r:.80}, "
                                                  f"expected {FORMAT_NAME!r}")
    version = manifest.get("version")
    _check(_is_int(version), f"bad format version {version!r:.80}")
    _check(version <= FORMAT_VERSION, f"format version {version} was written by a newer toolkit; this toolkit "
                                      f"reads versions up to {FORMAT_VERSION}")
    _check(version >= 1, f"bad format version {version}")
    _check(manifest.get("byteorder") == "little", f"unsupported byte order {manifest.get('byteorder')!r:.80}")
    _check(isinstance(manifest.get("storages"), dict), "the manifest has no storage table")
    _check(isinstance(manifest.get("tensors"), list), "the manifest has no tensor table")
    _check("root" in manifest, "the manifest has no root object")
    reader = _Reader(zf, manifest, map_location, archive)
    reader.wrap_caller_errors = True
    return reader.decode(manifest["root"])
