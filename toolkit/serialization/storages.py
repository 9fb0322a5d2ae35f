"""Storages of a PyTorch-layout checkpoint, read when the pickle first names them (its persistent ids).

A persistent id is ``('storage', storage_type, key, location, numel)``. The record ``<prefix>data/<key>`` must
hold exactly ``numel`` elements of the storage type; it is read under the archive's byte budget (or mapped from
the file with ``mmap=True``), swapped to this machine's byte order, and sent where ``map_location`` says.
Every storage is read once, however many tensors view it, so views loaded together share memory again.
"""

from __future__ import annotations

import sys
import zipfile
from typing import Any

import numpy as np

from .archive import BoundedArchive
from .format import _check, _Corrupt, _is_int64
from .locations import target_device
from .rebuild import LoadedStorage, StorageType
from .torch_format import data_offset


class StorageLoader:
    """Resolves the persistent ids of one load; :meth:`finish` drops the budget the storages hold."""

    def __init__(self, zf: zipfile.ZipFile, archive: BoundedArchive, prefix: str, byteorder: str,
                 map_location: Any, mmap_path: str | None = None) -> None:
        self.zf = zf
        self.archive = archive
        self.prefix = prefix
        self.swap = byteorder != sys.byteorder
        self.map_location = map_location
        self.mmap_path = mmap_path
        self.loaded: dict[str, LoadedStorage] = {}
        self.others: list[LoadedStorage] = []  # storages read again as another type

    def __call__(self, pid: Any) -> LoadedStorage:
        _check(isinstance(pid, tuple) and len(pid) == 5, f"unsupported persistent id {pid!r:.80}")
        tag, storage_type, key, location, numel = pid
        if isinstance(tag, bytes):
            tag = tag.decode("ascii", "replace")
        _check(tag == "storage", f"unsupported persistent id of kind {tag!r:.40}; only storages are loaded")
        _check(isinstance(storage_type, StorageType), f"a storage in the file has type {storage_type!r:.80}, not "
                                                      "a storage class")
        _check(isinstance(key, str) and len(key) <= 256, f"a storage in the file has a bad key {key!r:.80}")
        _check(isinstance(location, str) and len(location) <= 256,
               f"storage {key!r} has a bad location {location!r:.80}")
        _check(_is_int64(numel), f"storage {key!r} has a bad length {numel!r:.80}")
        dt = storage_type.dtype
        if dt is None:
            raise _Corrupt(f"storage {key!r} is a {storage_type.name}, of a dtype toolkit does not support")
        found = self.loaded.get(key)
        if found is not None:
            if found.dtype is dt:
                return found
            raw = found.base.view(np.uint8)  # the same bytes read as another type
            _check(raw.nbytes % dt.itemsize == 0, f"storage {key!r} of {raw.nbytes} bytes is read as "
                                                  f"{storage_type.name}")
            other = LoadedStorage(raw.view(dt.np), dt, found.target, found.budget, key)
            self.others.append(other)
            return other
        name = f"{self.prefix}data/{key}"
        nbytes = numel * dt.itemsize
        info = self.archive.entry(name)
        _check(info.file_size == nbytes, f"record {name} holds {info.file_size} bytes but the pickle says "
                                         f"{numel} elements of {storage_type.name} ({nbytes} bytes)")
        if self.mmap_path is not None and nbytes and info.compress_type == zipfile.ZIP_STORED:
            buf = np.memmap(self.mmap_path, dtype=np.uint8, mode="c", offset=data_offset(self.zf.fp, info),
                            shape=(nbytes,))
        else:
            self.archive.charge(nbytes, f"record {name}")
            buf = np.empty(nbytes, dtype=np.uint8)
            self.archive.read_into(info, buf)
        arr = buf.view(dt.np)
        if self.swap and dt.itemsize > 1:
            arr = arr.byteswap()
        storage = LoadedStorage(arr, dt, None, self.archive, key)
        storage.target = target_device(location, storage, self.map_location, f"storage {key!r}",
                                       wrap_caller_errors=True)
        self.loaded[key] = storage
        return storage

    def finish(self) -> None:
        for s in (*self.loaded.values(), *self.others):
            s.budget = None

