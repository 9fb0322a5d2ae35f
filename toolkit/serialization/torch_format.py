"""PyTorch's zip layout for checkpoints: the records ``torch.save`` writes, in its order, and how to find them.

An archive named ``<name>`` (the file's name without its extension, ``archive`` for a file object) holds::

    <name>/data.pkl                   the object, pickled (protocol 2) with persistent ids for storages
    <name>/.format_version            "1"
    <name>/.storage_alignment         "64"
    <name>/byteorder                  "little"
    <name>/data/<key>                 each storage's raw bytes, little-endian, starting at a multiple of 64
    <name>/version                    "3"
    <name>/.data/serialization_id     an id of this save

Every record is stored (not compressed); each one's data is aligned to 64 bytes with padding in an extra
field of its local header (id ``FB``), as PyTorch's writer does, so storages can be memory-mapped.
"""

from __future__ import annotations

import os
import secrets
import struct
import zipfile
import zlib
from collections.abc import Iterable
from typing import IO

import numpy as np

from .archive import BoundedArchive
from .format import _CHUNK, _check, _Corrupt

ALIGNMENT = 64
FILE_FORMAT_VERSION = b"3\n"
#: The highest ``version`` record this reader knows (PyTorch writes 3; its readers accept up to 10).
MAX_VERSION = 10
_PAD_ID = b"FB"
_LOCAL_HEADER = 30
_ZIP64_LOCAL_EXTRA = 20


def archive_name(f) -> str:
    """The folder ``torch.save`` puts records in: the file's name without its extension, else ``archive``."""
    if isinstance(f, (str, os.PathLike)):
        base = os.path.basename(os.fspath(f))
        stem = base.rpartition(".")[0] if "." in base else base
        return stem or "archive"
    return "archive"


class RecordWriter:
    """Writes records into a zip archive, each one's data aligned to :data:`ALIGNMENT` bytes."""

    def __init__(self, fileobj: IO[bytes], name: str) -> None:
        self.zf = zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.prefix = name + "/"
        self.start = self.zf.fp.tell()
        self.crc = 0

    def write(self, name: str, data: bytes | np.ndarray) -> None:
        """Write ``data`` (bytes, or an array's raw memory) as record ``<name>/<name>``."""
        view = memoryview(data).cast("B") if isinstance(data, np.ndarray) else memoryview(data)
        full = self.prefix + name
        info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        zip64 = view.nbytes > 0x7FFFFFFF
        here = self.zf.fp.tell() - self.start
        header = _LOCAL_HEADER + len(full.encode("utf-8")) + 4 + (_ZIP64_LOCAL_EXTRA if zip64 else 0)
        pad = -(here + header) % ALIGNMENT
        info.extra = _PAD_ID + struct.pack("<H", pad) + b"Z" * pad
        with self.zf.open(info, "w", force_zip64=zip64) as dest:
            for i in range(0, view.nbytes, _CHUNK):
                chunk = view[i:i + _CHUNK]
                self.crc = zlib.crc32(chunk, self.crc)
                dest.write(chunk)

    def close(self) -> None:
        """Write ``version`` and the serialization id, as PyTorch ends an archive, and the directory."""
        self.write("version", FILE_FORMAT_VERSION)
        ident = f"{secrets.randbits(64):020d}{self.crc:020d}".encode()
        self.write(".data/serialization_id", ident)
        self.zf.close()


def write_checkpoint(fileobj: IO[bytes], name: str, pickled: bytes, storages: Iterable[tuple[str, np.ndarray]]) -> None:
    """Write a whole checkpoint: ``pickled`` as ``data.pkl`` and each ``(key, bytes)`` storage, in PyTorch's
    order."""
    out = RecordWriter(fileobj, name)
    out.write("data.pkl", pickled)
    out.write(".format_version", b"1")
    out.write(".storage_alignment", str(ALIGNMENT).encode())
    out.write("byteorder", b"little")
    for key, flat in storages:
        out.write(f"data/{key}", flat)
    out.close()


def find_prefix(names: list[str]) -> str | None:
    """The folder of a PyTorch-layout archive (``<name>/`` holding ``data.pkl``), or None."""
    for n in names:
        folder, sep, rest = n.partition("/")
        if sep and rest == "data.pkl":
            return folder + "/"
    return None


def is_torchscript(names: list[str], prefix: str) -> bool:
    """Whether the archive is a TorchScript module (``torch.jit.save``) rather than a ``torch.save`` file."""
    return prefix + "constants.pkl" in names or any(n.startswith(prefix + "code/") for n in names)


def read_small(archive: BoundedArchive, name: str, limit: int = 64) -> str | None:
    """The text of a small record, or None when the archive lacks it."""
    if name not in archive.zf.NameToInfo:
        return None
    info = archive.entry(name)
    _check(info.file_size <= limit, f"record {name} claims {info.file_size} bytes; it holds a few characters")
    try:
        return bytes(archive.read(name)).decode("ascii").strip()
    except UnicodeDecodeError:
        raise _Corrupt(f"record {name} is not text") from None


def data_offset(fp: IO[bytes], info: zipfile.ZipInfo) -> int:
    """Where record ``info``'s data starts in the file (after its local header), for memory-mapping it."""
    fp.seek(info.header_offset)
    header = fp.read(_LOCAL_HEADER)
    _check(len(header) == _LOCAL_HEADER and header[:4] == b"PK\x03\x04", f"bad local header of {info.filename}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + _LOCAL_HEADER + name_len + extra_len


def is_legacy_torch_file(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts PyTorch's legacy format: a pickled magic number
    (``torch.save(..., _use_new_zipfile_serialization=False)``, PyTorch before 1.6) or a tar archive."""
    magic = b"\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"  # LONG1 of 0x1950a86a20f9469cfc6c
    return head[:2] == b"\x80\x02" and head[2:14] == magic or head[257:262] == b"ustar"
