"""The DLPack C ABI in ctypes: the structs, capsules toolkit hands out, and reading capsules it is given.

numba.cuda has no DLPack support, so CUDA tensors speak it through these
structs (``dlpack.h`` 1.x: ``DLManagedTensor`` and ``DLManagedTensorVersioned``).

Export: :func:`export` fills a managed tensor in memory owned by Python,
keeps it and the producer's array in ``_LIVE`` (keyed by the struct's
address) and wraps it in a capsule named ``"dltensor"`` (or
``"dltensor_versioned"``). The struct's deleter drops that entry, which is
what keeps the device memory alive: a consumer renames the capsule
(``"used_..."``) and calls the deleter when it is done; a capsule nobody
consumed calls it from its destructor. The deleter forgets unknown
addresses, so a second call cannot free anything twice.

Consumers may call the destructor and the deleter with their own Python
exception pending (numpy and torch do when they refuse a capsule); the C
entry points handed out are small numba-compiled functions that keep that
exception across the Python callbacks (compiled on the first export, never
at import).

Import: :func:`peek` validates a capsule and reads its tensor without taking
it, so a refused capsule stays with its producer; :func:`consume` renames it
and returns a :class:`Lease` whose ``release`` calls the producer's deleter.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

import numpy as np

kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLCUDAManaged = 1, 2, 3, 10, 13
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1
VERSION = (1, 1)  # the dlpack.h release whose layout and codes this module follows

kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6
_CODE_NAMES = {kDLInt: "int", kDLUInt: "uint", kDLFloat: "float", 3: "opaque handle", kDLBfloat: "bfloat",
               kDLComplex: "complex", kDLBool: "bool"}

DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# Capsule names must outlive every capsule: module constants, never freed.
NAME, USED = b"dltensor", b"used_dltensor"
NAME_V, USED_V = b"dltensor_versioned", b"used_dltensor_versioned"


def _api(name: str, restype, *argtypes):
    """A private prototype of a C-API function (``ctypes.pythonapi``'s own attributes are shared, global state)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_is_valid_raw = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_get_pointer_raw = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_get_name = _api("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_set_name = _api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_err_fetch = _api("PyErr_Fetch", None)  # (no argtypes: nothing may run before it, see _pending_error)
_err_restore = _api("PyErr_Restore", None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

_LIVE: dict = {}  # struct address -> (struct, shape/strides buffer, owner); plain dict ops are atomic


def live_exports() -> int:
    """How many exported managed tensors the consumers (or unconsumed capsules) still hold."""
    return len(_LIVE)


_FETCHED = (ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p())
_FETCHED_REFS = tuple(ctypes.byref(p) for p in _FETCHED)


def _pending_error() -> BaseException | None:
    """Take the exception a C caller left set when it called back into Python (None if there is none).

    ctypes runs a callback with that exception still set, and every call
    inside would fail on it. A callback cannot hand it back to its caller
    (returning to C with an error set is itself an error), so it is reported
    as unraisable instead. Only the bare callbacks need this: the compiled
    entry points (see :func:`_entry_points`) save and restore it in C.
    """
    _err_fetch(*_FETCHED_REFS)  # first: until it clears the error, any call would fail on it
    t, v, tb = (p.value for p in _FETCHED)
    if not t:
        return None
    try:
        _err_restore(t, v, tb)  # steals the references; ctypes raises the exception it now finds set
    except BaseException as e:  # noqa: BLE001 - any exception type can be pending
        return e
    return None  # pragma: no cover


def _forget(addr) -> None:
    """The managed tensors' deleter: forget the struct and the array it kept alive (safe to call twice).

    No lock: a capsule destructor can run inside any allocation (a gc pass), and would deadlock on one.
    """
    pending = _pending_error()
    _LIVE.pop(addr, None)
    if pending is not None:
        raise pending


_deleter = DELETER(_forget)


@_DESTRUCTOR
def _capsule_destructor(capsule):
    """Free a capsule's tensor only when no consumer took it (a renamed capsule belongs to its consumer)."""
    pending = _pending_error()
    for name in (NAME, NAME_V):
        if _is_valid_raw(capsule, name):
            _LIVE.pop(_get_pointer_raw(capsule, name), None)
            break
    if pending is not None:
        raise pending


_gil_ensure = _api("PyGILState_Ensure", ctypes.c_int)
_gil_release = _api("PyGILState_Release", None, ctypes.c_int)
_fetch3 = _api("PyErr_Fetch", None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


@functools.lru_cache(maxsize=1)
def _entry_points() -> tuple:
    """(capsule destructor, deleter): the C function addresses handed to consumers.

    Consumers call both while their own exception may be pending (numpy drops
    a capsule it refuses with its error already set). A ctypes callback cannot
    keep that exception for them, so each is wrapped in a small native
    function, compiled once with numba, that takes the GIL, saves the pending
    exception, runs the callback and restores it. Without numba's compiler the
    bare callbacks serve (a pending exception is then reported as unraisable).
    """
    bare = (ctypes.cast(_capsule_destructor, ctypes.c_void_p).value, ctypes.cast(_deleter, ctypes.c_void_p).value)
    try:
        from numba import cfunc, types  # optional: numba, never loaded by import toolkit
    except ImportError:  # pragma: no cover - numba is a dependency
        return bare
    ensure, release, fetch, restore = _gil_ensure, _gil_release, _fetch3, _err_restore  # (frozen as addresses)

    def wrap(callback):
        def entry(arg):
            gil = ensure()
            saved = np.zeros(3, dtype=np.intp)
            at = saved.ctypes.data
            fetch(at, at + 8, at + 16)
            callback(arg)
            restore(saved[0], saved[1], saved[2])
            release(gil)

        return cfunc(types.void(types.voidptr), nopython=True)(entry)

    try:
        _TRAMPOLINES.extend((wrap(_capsule_destructor), wrap(_deleter)))
    except Exception:  # noqa: BLE001 - any compiler failure leaves the bare callbacks, which work
        return bare
    return tuple(t.address for t in _TRAMPOLINES)


_TRAMPOLINES: list = []  # the compiled functions must outlive every capsule


def is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


# ---------------------------------------------------------------------------------------------------- dtypes
_KIND_CODE = {"b": kDLBool, "i": kDLInt, "u": kDLUInt, "f": kDLFloat, "c": kDLComplex}


def dl_dtype(dtype: np.dtype) -> tuple:
    """(code, bits, lanes) of a numpy dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _KIND_CODE or not dtype.isnative:
        raise BufferError(f"__dlpack__: DLPack cannot describe dtype {dtype}")
    return _KIND_CODE[dtype.kind], dtype.itemsize * 8, 1


def np_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    """The numpy dtype of a DLPack (code, bits, lanes); BufferError for vector, bfloat16 and other dtypes."""
    kind = {kDLBool: "b", kDLInt: "i", kDLUInt: "u", kDLFloat: "f", kDLComplex: "c"}.get(code)
    name = f"{_CODE_NAMES.get(code, f'code {code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    if kind is None or lanes != 1 or bits % 8 or (kind == "b" and bits != 8):
        raise BufferError(f"from_dlpack: unsupported DLPack dtype {name} (code={code}, bits={bits}, lanes={lanes})")
    try:
        return np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(bool)
    except TypeError:
        raise BufferError(f"from_dlpack: unsupported DLPack dtype {name}") from None


# ---------------------------------------------------------------------------------------------------- export
def export(ptr: int, device: tuple, shape: tuple, strides: tuple, dtype: np.dtype, owner, *,
           versioned: bool, flags: int = 0):
    """A ``"dltensor"``/``"dltensor_versioned"`` capsule over ``ptr`` (strides in elements); ``owner`` lives until
    the consumer calls the deleter (or the capsule dies unconsumed)."""
    ndim = len(shape)
    dims = (ctypes.c_int64 * max(2 * ndim, 1))(*shape, *strides)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = ptr or None
    t.device = DLDevice(int(device[0]), int(device[1]))
    t.ndim = ndim
    t.dtype = DLDataType(*dl_dtype(dtype))
    base = ctypes.addressof(dims)
    t.shape = ctypes.cast(base, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(base + 8 * ndim, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    destructor, deleter = _entry_points()
    managed.deleter = DELETER(deleter)
    if versioned:
        managed.version = DLPackVersion(*VERSION)
        managed.flags = flags
    addr = ctypes.addressof(managed)
    _LIVE[addr] = (managed, dims, owner)
    try:
        return _capsule_new(addr, NAME_V if versioned else NAME, destructor)
    except BaseException:
        _forget(addr)
        raise


# ---------------------------------------------------------------------------------------------------- import
@dataclass
class Imported:
    """What a capsule describes (read without taking it)."""

    capsule: object
    managed: int
    versioned: bool
    device: tuple
    data: int  # data + byte_offset
    shape: tuple
    strides: tuple  # in elements (filled in for NULL, i.e. row-major)
    dtype: np.dtype
    flags: int

    @property
    def read_only(self) -> bool:
        return bool(self.flags & FLAG_READ_ONLY)


def peek(capsule) -> Imported:
    """Read a ``"dltensor"``/``"dltensor_versioned"`` capsule; BufferError (it stays unconsumed) if it is unusable."""
    if not is_capsule(capsule):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(capsule).__name__}")
    if _is_valid(capsule, NAME_V):
        versioned = True
    elif _is_valid(capsule, NAME):
        versioned = False
    else:
        name = _get_name(capsule)
        if name in (USED, USED_V):
            raise BufferError(f"from_dlpack: this DLPack capsule was already consumed (named {name.decode()!r}); "
                              "a capsule can be imported once, ask the producer for a new one")
        raise BufferError(f"from_dlpack: expected a capsule named 'dltensor' or 'dltensor_versioned', got "
                          f"{None if name is None else name.decode(errors='replace')!r}")
    addr = _get_pointer(capsule, NAME_V if versioned else NAME)
    if versioned:
        m = DLManagedTensorVersioned.from_address(addr)
        if m.version.major != VERSION[0]:
            raise BufferError(f"from_dlpack: unsupported DLPack version {m.version.major}.{m.version.minor} "
                              f"(toolkit reads {VERSION[0]}.x)")
        flags = int(m.flags)
    else:
        m = DLManagedTensor.from_address(addr)
        flags = 0
    t = m.dl_tensor
    if t.ndim < 0:
        raise BufferError(f"from_dlpack: invalid DLTensor with ndim={t.ndim}")
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    dtype = np_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    if t.ndim and t.strides:
        strides = tuple(int(t.strides[i]) for i in range(t.ndim))
    else:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= max(n, 1)
        strides = tuple(strides)
    return Imported(capsule, addr, versioned, (int(t.device.device_type), int(t.device.device_id)),
                    (t.data or 0) + int(t.byte_offset), shape, strides, dtype, flags)


class Lease:
    """A consumed capsule's managed tensor: ``release()`` (once) calls the producer's deleter."""

    __slots__ = ("_addr", "_versioned", "__weakref__")

    def __init__(self, addr: int, versioned: bool):
        self._addr = addr
        self._versioned = versioned

    def release(self) -> None:
        addr, self._addr = self._addr, None
        if not addr:
            return
        m = (DLManagedTensorVersioned if self._versioned else DLManagedTensor).from_address(addr)
        if m.deleter:
            m.deleter(addr)


def consume(info: Imported) -> Lease:
    """Take the capsule's tensor (rename it ``"used_..."``, as the protocol says); the caller must release it."""
    if _set_name(info.capsule, USED_V if info.versioned else USED) != 0:  # pragma: no cover - CPython never fails
        raise BufferError("from_dlpack: could not rename the DLPack capsule")
    return Lease(info.managed, info.versioned)
