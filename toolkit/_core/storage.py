"""Storage: the buffer shared by a tensor and all its views, with its version counter.

Numpy already gives strided views over a shared buffer; what it lacks is a
version counter that every view sees, which autograd needs to detect in-place
changes to saved tensors. Views of one tensor share one ``Storage`` object.

``Storage`` is also what ``Tensor.untyped_storage()`` returns, so it reads as
PyTorch's ``UntypedStorage`` (bytes: ``size()``, indexing, ``tolist()``), and
``TypedStorage`` is the legacy typed view ``Tensor.storage()`` gives::

    x = toolkit.arange(4.0)
    s = x.storage()          # TypedStorage(dtype=toolkit.float32) of size 4
    s[0] = 7.0               # writes x[0]
    x.untyped_storage().size()  # 16 bytes
"""

from __future__ import annotations

import gc
import mmap
import os
import secrets
import tempfile
import weakref
from collections.abc import Iterable

import numpy as np
from numpy.lib.array_utils import byte_bounds

from . import dtypes as _dt
from .legacy_names import DTYPES


def _owns_shared_memory(obj) -> bool:
    """Whether ``obj``'s memory is a memory map (``multiprocessing`` shared memory, a mapped file)."""
    seen = 0
    while obj is not None and seen < 32:
        if isinstance(obj, mmap.mmap):
            return True
        obj = obj.obj if isinstance(obj, memoryview) else getattr(obj, "base", None)
        seen += 1
    return False


_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_NAMED_SEGMENTS = {"keep": False}  # the ``file_system`` sharing strategy keeps segments' names


def keep_segment_names(keep: bool) -> None:
    """Whether new shared segments keep their file name (``file_system`` strategy) or drop it at once."""
    _NAMED_SEGMENTS["keep"] = keep


def _unlink_if_creator(path: str, pid: int) -> None:
    if os.getpid() == pid:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


class SharedSegment(mmap.mmap):
    """A shared memory map of a file in /dev/shm, with the descriptor other processes can map it by.

    Without a name (the ``file_descriptor`` strategy) the file is unlinked as soon as it is mapped, so the
    memory goes when the last process holding a mapping or a descriptor of it lets go, and nothing can be
    left behind in /dev/shm. A named segment (``file_system``) is unlinked when its creator drops it or exits.
    """

    __slots__ = ("fd", "name", "address")

    def __new__(cls, fd: int, name: str | None = None) -> SharedSegment:
        seg = super().__new__(cls, fd, os.fstat(fd).st_size)
        seg.fd = fd
        seg.name = name
        seg.address = np.frombuffer(seg, np.uint8, count=1).__array_interface__["data"][0]
        weakref.finalize(seg, os.close, fd)
        return seg

    @classmethod
    def create(cls, nbytes: int) -> SharedSegment:
        name = f"toolkit_{os.getpid()}_{secrets.token_hex(8)}"
        path = os.path.join(_SHM_DIR, name)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, max(nbytes, 1))
            seg = cls(fd, name if _NAMED_SEGMENTS["keep"] else None)
        except BaseException:
            os.close(fd)
            os.unlink(path)
            raise
        if seg.name is None:
            os.unlink(path)
        else:
            weakref.finalize(seg, _unlink_if_creator, path, os.getpid())
        return seg

    @classmethod
    def open(cls, name: str) -> SharedSegment:
        """Maps the named segment another process created (``file_system`` strategy)."""
        return cls(os.open(os.path.join(_SHM_DIR, name), os.O_RDWR), name)

    def key(self) -> tuple[int, int]:
        """Identifies the memory across processes: the file's device and inode."""
        st = os.fstat(self.fd)
        return st.st_dev, st.st_ino


def shared_segment(obj) -> SharedSegment | None:
    """The ``SharedSegment`` under an array (following ``.base``), or None."""
    seen = 0
    while obj is not None and seen < 32:
        if isinstance(obj, SharedSegment):
            return obj
        obj = obj.obj if isinstance(obj, memoryview) else getattr(obj, "base", None)
        seen += 1
    return None


def _rebased(arr: np.ndarray, seg: SharedSegment, low: int) -> np.ndarray:
    """``arr``'s layout (shape, strides, offset from ``low``) over ``seg`` instead of its old memory."""
    offset = arr.__array_interface__["data"][0] - low if arr.size else 0
    moved = np.ndarray(arr.shape, arr.dtype, buffer=seg, offset=offset, strides=arr.strides)
    if not arr.flags.writeable:
        moved.flags.writeable = False
    return moved


def move_to_shared_memory(storages: Iterable[Storage]) -> None:
    """Moves each CPU storage's buffer into a new ``SharedSegment``, in place.

    Tensors cache a numpy view of their storage's buffer, so every tensor viewing one of these storages
    is found (one scan of the collector's objects for all of them) and re-pointed at the same offset,
    shape and strides in the segment: every view keeps seeing what the others write.
    """
    moving = {}
    for st in storages:
        base = st.base
        if isinstance(base, np.ndarray) and shared_segment(base) is None and id(st) not in moving:
            low, high = byte_bounds(base) if base.size else (0, 0)
            seg = SharedSegment.create(high - low)
            moved = _rebased(base, seg, low)
            if base.size:
                moved[...] = base
            moving[id(st)] = (st, seg, low)
    if not moving:
        return
    for holder in gc.get_referrers(*(st for st, _, _ in moving.values())):
        entry = moving.get(id(getattr(holder, "_storage", None)))
        data = getattr(holder, "_data", None) if entry is not None else None
        if isinstance(data, np.ndarray) and holder._storage is entry[0]:
            holder._data = _rebased(data, entry[1], entry[2])
    for st, seg, low in moving.values():
        st.base = _rebased(st.base, seg, low)


def _owns_pinned_memory(obj) -> bool:
    """Whether ``obj``'s memory is page-locked host memory (numba's ``pinned_array`` / ``mapped_array``)."""
    seen = 0
    while obj is not None and seen < 32:
        if type(obj).__name__ in ("PinnedMemory", "MappedMemory"):
            return True
        obj = getattr(obj, "base", None)
        seen += 1
    return False


def _storage_index(i, size: int, what: str) -> int:
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        raise TypeError(f"can't index a {what} with {type(i).__name__}")
    k = int(i) + size if i < 0 else int(i)
    if not 0 <= k < size:
        raise IndexError(f"index {int(i)} out of range for storage of size {size}")
    return k


class Storage:
    """Holds the base array and the version counter shared by all views; as ``UntypedStorage``, its bytes."""

    __slots__ = ("base", "version", "device", "__weakref__")

    def __init__(self, base: np.ndarray, device=None):
        self.base = base
        self.version = 0
        self.device = device

    def nbytes(self) -> int:
        return self.base.nbytes

    def data_ptr(self) -> int:
        return self.base.__array_interface__["data"][0]

    # ------------------------------------------------------------------ UntypedStorage's API
    def byte_array(self) -> np.ndarray:
        """The buffer as flat bytes in memory order, sharing memory (CPU storages)."""
        base = self.base
        if type(base) is not np.ndarray and not isinstance(base, np.ndarray):
            raise RuntimeError(f"storage on {self.device} has no host bytes; copy its tensor to the CPU first")
        flat = base.ravel(order="K")
        return flat.view(np.uint8) if flat.ndim else flat.reshape(1).view(np.uint8)

    def typed(self, dtype: _dt.dtype) -> np.ndarray:
        """The buffer as a flat array of ``dtype`` (whole elements only), sharing memory."""
        b = self.byte_array()
        usable = b.size - b.size % dtype.itemsize
        return b[:usable].view(dtype.np)

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def __getitem__(self, i) -> int:
        b = self.byte_array()
        if isinstance(i, slice):
            return Storage(b[i], self.device)
        return int(b[_storage_index(i, b.size, "storage")])

    def __setitem__(self, i, value) -> None:
        b = self.byte_array()
        b[i if isinstance(i, slice) else _storage_index(i, b.size, "storage")] = value

    def tolist(self) -> list:
        return self.byte_array().tolist()

    def is_shared(self) -> bool:
        return _owns_shared_memory(self.base)

    def share_memory_(self) -> Storage:
        """Moves the buffer into shared memory, in place (every tensor viewing it follows); no-op if shared.

        Other processes then map the same memory when the storage or its tensors are sent to them through
        ``toolkit.multiprocessing``. CUDA storages are left as they are.
        """
        if not self.is_shared():
            move_to_shared_memory((self,))
        return self

    def is_pinned(self) -> bool:
        return _owns_pinned_memory(self.base)

    def untyped(self) -> Storage:
        return self

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist()) if self.device is None or self.device.type == "cpu" else ""
        return f"{body}\n[toolkit.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]".lstrip("\n")


class TypedStorage:
    """PyTorch's legacy ``TypedStorage``: a storage read as elements of one dtype (``Tensor.storage()``).

    It shares memory with the tensor: writing an element writes the tensor.
    """

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, untyped: Storage, dtype: _dt.dtype):
        self._untyped_storage = untyped
        self.dtype = dtype

    def _array(self) -> np.ndarray:
        return self._untyped_storage.typed(self.dtype)

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return self.device is not None and self.device.type == "cuda"

    def untyped(self) -> Storage:
        return self._untyped_storage

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def __getitem__(self, i):
        a = self._array()
        return a[_storage_index(i, a.size, "TypedStorage")].item()

    def __setitem__(self, i, value) -> None:
        a = self._array()
        if isinstance(i, slice):
            a[i] = value
        else:
            a[_storage_index(i, a.size, "TypedStorage")] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._array().tolist()

    def fill_(self, value) -> TypedStorage:
        self._array()[...] = value
        return self

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self) -> TypedStorage:
        self._untyped_storage.share_memory_()
        return self

    def type(self) -> str:
        return f"toolkit.{_LEGACY_NAMES.get(self.dtype, 'TypedStorage')}"

    def __eq__(self, other) -> bool:
        return (isinstance(other, TypedStorage) and other._untyped_storage is self._untyped_storage
                and other.dtype is self.dtype)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist()) if not self.is_cuda else ""
        head = f"[toolkit.storage.TypedStorage(dtype=toolkit.{self.dtype.name}, device={self.device}) of size {self.size()}]"
        return f"{body}\n{head}".lstrip("\n")


_LEGACY_NAMES = {d: name.replace("Tensor", "Storage") for name, d in DTYPES.items()}


def _legacy_init(self, *args, device=None) -> None:
    """``FloatStorage()``, ``FloatStorage(size)`` (uninitialized), ``FloatStorage([1, 2])``: a new CPU storage."""
    dtype = type(self)._dtype
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"{type(self).__name__}: legacy storages are CPU storages, got device='{device}'")
    if len(args) > 1:
        raise TypeError(f"{type(self).__name__}() takes a size or a sequence, got {len(args)} arguments")
    what = args[0] if args else 0
    if isinstance(what, int) and not isinstance(what, bool):
        if what < 0:
            raise RuntimeError(f"Storage size must be non-negative, got {what}")
        data = np.empty(what, dtype.np)
    else:
        data = np.asarray(list(what), dtype.np).reshape(-1)
    TypedStorage.__init__(self, Storage(data), dtype)


class _LegacyStorageMeta(type):
    """``isinstance(t.storage(), FloatStorage)`` holds for a float32 storage, as in PyTorch."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TypedStorage) and obj.dtype is cls._dtype


def _legacy_storage_class(name: str, dtype: _dt.dtype) -> type:
    cls = _LegacyStorageMeta(name, (TypedStorage,), {"__slots__": (), "__doc__": f"The legacy storage class of {dtype} tensors.",
                                       "__init__": _legacy_init, "_dtype": dtype})
    cls.__module__ = "toolkit"
    return cls


# ``Tensor.storage_type()``: ``toolkit.FloatStorage`` and the like, one class per dtype.
LEGACY_STORAGE_CLASSES = {d: _legacy_storage_class(name, d) for d, name in _LEGACY_NAMES.items()}


def legacy_storage_class(dtype: _dt.dtype) -> type:
    """The legacy storage class of ``dtype`` (``FloatStorage`` for float32), as ``Tensor.storage_type()`` gives."""
    return LEGACY_STORAGE_CLASSES[dtype]
