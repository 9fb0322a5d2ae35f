"""Reading a zip archive's entries with every size checked before anything is allocated.

A zip file states each entry's sizes twice (local header, central directory) and a checkpoint's manifest states
them again; none of it is to be believed. Before an entry is read, its sizes are checked against the file
itself (the compressed bytes must lie inside the file; a stored entry expands to exactly its compressed size, a
deflated one to at most 1032 times it, deflate's limit) and against a budget, ``max_bytes``: the bytes read
out of the archive in all may not pass it, so neither a decompression bomb nor many entries sharing the same
bytes can make a small file take much memory. The budget also bounds what a single tensor may claim
(:meth:`BoundedArchive.check_size`), views with zero strides included. Reads go in chunks into one buffer of
the checked size, and the CRC is checked at the end.
"""

from __future__ import annotations

import zipfile

from .format import _CHUNK, _check, _Corrupt

#: ``max_bytes`` by default: this many times the file's size, plus :data:`DEFAULT_ALLOWANCE`. Stored entries
#: (what ``toolkit.save`` writes) always fit; deflated ones may expand that far.
DEFAULT_EXPANSION = 2
DEFAULT_ALLOWANCE = 256 << 20
_DEFLATE_MAX_RATIO = 1032  # deflate cannot expand more than about 1032:1
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


def default_max_bytes(file_size: int) -> int:
    """The default budget for a file of ``file_size`` bytes: 2 x its size + 256 MiB."""
    return DEFAULT_EXPANSION * file_size + DEFAULT_ALLOWANCE


def _mib(n: int) -> str:
    return f"{n} bytes" if n < 1 << 20 else f"{n} bytes ({n / (1 << 20):.1f} MiB)"


class BoundedArchive:
    """A zip archive read under a byte budget: see the module docstring.

    ``max_bytes`` is the budget; None gives :func:`default_max_bytes` of the file's size.
    """

    def __init__(self, zf: zipfile.ZipFile, max_bytes: int | None = None) -> None:
        self.zf = zf
        fp = zf.fp
        pos = fp.tell()
        self.file_size = fp.seek(0, 2)
        fp.seek(pos)
        self.default = max_bytes is None
        self.max_bytes = default_max_bytes(self.file_size) if max_bytes is None else int(max_bytes)
        self.used = 0

    def _limit(self) -> str:
        rule = (f" (the default: {DEFAULT_EXPANSION} x the file's {self.file_size} bytes + "
                f"{DEFAULT_ALLOWANCE >> 20} MiB)" if self.default else "")
        return (f"max_bytes={self.max_bytes}{rule}; pass a larger max_bytes to toolkit.load if the file is "
                "trusted")

    def entry(self, name: str) -> zipfile.ZipInfo:
        """The checked directory entry of ``name``: a real, readable size the budget has room for."""
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise _Corrupt(f"missing entry {name}") from None
        _check(not info.flag_bits & 0x1, f"entry {name} is encrypted")
        method = _METHODS.get(info.compress_type)
        _check(method is not None, f"entry {name} uses zip compression method {info.compress_type}; only stored "
                                   "and deflated entries are read")
        _check(0 <= info.header_offset and info.header_offset + info.compress_size <= self.file_size,
               f"entry {name} claims {info.compress_size} bytes of data but the file holds {self.file_size}")
        if method == "stored":
            _check(info.file_size == info.compress_size,
                   f"stored entry {name} claims {info.file_size} bytes but holds {info.compress_size}")
        else:
            _check(info.file_size <= _DEFLATE_MAX_RATIO * info.compress_size + 64,
                   f"entry {name} claims to expand {info.compress_size} compressed bytes to {info.file_size}, "
                   "more than deflate can")
        return info

    def charge(self, nbytes: int, what: str) -> None:
        """Count ``nbytes`` about to be allocated for ``what`` against the budget, or refuse them."""
        if self.used + nbytes > self.max_bytes:
            so_far = f", with the {_mib(self.used)} read before it," if self.used else ""
            raise _Corrupt(f"{what} takes {_mib(nbytes)}, which{so_far} passes {self._limit()}")
        self.used += nbytes

    def check_size(self, nbytes: int, what: str) -> None:
        """Refuse one object (a tensor, views included) larger than the budget."""
        if nbytes > self.max_bytes:
            raise _Corrupt(f"{what} takes {_mib(nbytes)}, more than {self._limit()}")

    def read_into(self, info: zipfile.ZipInfo, buf) -> None:
        """Fill the writable buffer ``buf`` (exactly ``info.file_size`` bytes) with the entry, checking its CRC."""
        n = info.file_size
        mv = memoryview(buf).cast("B")
        with self.zf.open(info) as src:
            got = 0
            while got < n:
                k = src.readinto(mv[got:got + _CHUNK])
                if not k:
                    break
                got += k
            _check(got == n and not src.read(1), f"entry {info.filename} is truncated")

    def read(self, name: str) -> bytearray:
        """All of entry ``name``, charged to the budget."""
        info = self.entry(name)
        self.charge(info.file_size, name)
        buf = bytearray(info.file_size)
        self.read_into(info, buf)
        return buf
