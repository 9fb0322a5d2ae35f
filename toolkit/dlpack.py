"""DLPack exchange: ``Tensor.__dlpack__``/``__dlpack_device__`` and ``toolkit.from_dlpack``, zero-copy both ways.

CPU tensors are numpy arrays underneath, and numpy speaks DLPack both ways,
so host memory goes through ``ndarray.__dlpack__`` and ``np.from_dlpack``.
numba.cuda speaks no DLPack, so CUDA tensors use the C ABI written out in
:mod:`toolkit._dlpack_abi`: ``__dlpack__`` hands out a capsule over the
device memory (which stays alive until the consumer calls the deleter), and
``from_dlpack`` wraps a producer's device pointer as a ``CudaArray`` whose
death calls the producer's deleter. Streams follow the array API: the
consumer passes the stream it will use and the producer orders its pending
work before it (``-1``: no synchronization). A CUDA capsule read under
numba's CUDA simulator holds host memory (what the simulator calls device
memory), so the simulator round-trips toolkit's own capsules only.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

import numpy as np

from . import _dlpack_abi as abi
from . import cuda as tcuda
from ._core import dtypes as _dt
from ._core.device import as_device
from ._dlpack_export import CUDA_DEVICES, HOST_DEVICES, DLDeviceType, device_str, dlpack, dlpack_device
from .factories import from_numpy
from .tensor import Tensor, wrap

__all__ = ["DLDeviceType", "dlpack", "dlpack_device", "from_dlpack"]


# ------------------------------------------------------------------------------------------------------ import
class _Capsule:
    """A bare host capsule (``torch.utils.dlpack.to_dlpack``'s result) as an object with ``__dlpack__`` for numpy."""

    def __init__(self, capsule, device: tuple):
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, **_kw):
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return self.device


def from_dlpack(ext_tensor: Any, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor viewing ``ext_tensor``'s memory (an object with ``__dlpack__``, or a DLPack capsule).

    As ``torch.from_dlpack``: host memory becomes a CPU tensor, CUDA memory a
    CUDA tensor, without a copy unless ``copy=True``; ``device`` other than
    the producer's moves the result there (a copy, refused with ``copy=False``).
    """
    if isinstance(ext_tensor, Tensor):
        out = ext_tensor.detach()
        if copy:
            out = out.clone()
        return out if device is None else _move(out, device, copy)
    what = type(ext_tensor).__name__
    if hasattr(ext_tensor, "__dlpack__"):
        kind, index = ext_tensor.__dlpack_device__() if hasattr(ext_tensor, "__dlpack_device__") else (abi.kDLCPU, 0)
        if int(kind) in CUDA_DEVICES:
            capsule, handled = _request(ext_tensor, copy)
            out = _import_cuda(abi.peek(capsule), copy if not handled else None, what)
        elif int(kind) in HOST_DEVICES:
            out = _import_host(ext_tensor, copy, what)
        else:
            raise BufferError(f"from_dlpack: toolkit imports host and CUDA memory only; {what} lives on DLPack device "
                              f"{device_str((kind, index))}")
    else:
        info = abi.peek(ext_tensor)
        if info.device[0] in CUDA_DEVICES:
            out = _import_cuda(info, copy, what)
        elif info.device[0] in HOST_DEVICES:
            out = _import_host(_Capsule(ext_tensor, info.device), copy, what)
        else:
            raise BufferError(f"from_dlpack: toolkit imports host and CUDA memory only; the capsule lives on DLPack "
                              f"device {device_str(info.device)}")
    return out if device is None else _move(out, device, copy)


def _request(ext, copy: bool | None) -> tuple:
    """``ext.__dlpack__`` with the consumer's stream; older producers get fewer keywords (as torch.from_dlpack)."""
    kw: dict = {"stream": _consumer_stream(), "max_version": abi.VERSION}
    if copy is not None:
        kw["copy"] = copy
    for drop in (None, "max_version", "copy"):
        kw.pop(drop, None)
        try:
            return ext.__dlpack__(**kw), "copy" in kw
        except TypeError:
            if drop == "copy":
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _consumer_stream() -> int:
    """The stream toolkit's kernels run on, as the protocol numbers it (1: legacy default, 2: per-thread)."""
    from numba.core import config  # optional: numba, never loaded by import toolkit

    return 2 if getattr(config, "CUDA_PER_THREAD_DEFAULT_STREAM", False) else 1


def _import_host(src, copy: bool | None, what: str) -> Tensor:
    try:
        arr = np.from_dlpack(src, copy=copy)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise BufferError(f"from_dlpack: cannot import {what}: {e}") from e
    try:
        return from_numpy(arr)
    except TypeError as e:
        raise BufferError(f"from_dlpack: cannot import {what} of dtype {arr.dtype}: {e}") from e


def _import_cuda(info: abi.Imported, copy: bool | None, what: str) -> Tensor:
    """A CUDA tensor over the capsule's device memory; the producer's deleter runs when that memory's last view dies."""
    where = f"{what} on DLPack device {device_str(info.device)}"
    if not tcuda.is_available():
        raise BufferError(f"from_dlpack: {where} holds CUDA memory, and CUDA is not available to toolkit")
    tcuda._lazy_init()
    index = info.device[1] if info.device[0] == abi.kDLCUDA else tcuda.current_device()
    if not 0 <= index < tcuda.device_count():
        raise BufferError(f"from_dlpack: {where}: no CUDA device {index} (device count {tcuda.device_count()})")
    try:
        _dt.from_numpy_dtype(info.dtype)
    except TypeError as e:
        raise BufferError(f"from_dlpack: cannot import {what} of dtype {info.dtype}: {e}") from None
    if any(s < 0 for s in info.strides):
        raise BufferError(f"from_dlpack: {where} has negative strides {info.strides}, which toolkit tensors cannot "
                          "have; import a copy")
    if info.data == 0 and 0 not in info.shape:
        raise BufferError(f"from_dlpack: {where} has a NULL data pointer for {info.shape} elements")
    if info.read_only and copy is False:
        raise BufferError(f"from_dlpack: {where} is read-only, so toolkit needs a copy, and copy=False was given")
    lease = abi.consume(info)
    try:
        arr = _wrap_device_memory(info, index, lease)
        if copy or (info.read_only and not info.flags & abi.FLAG_IS_COPIED):
            arr = arr.copy()
    except BaseException:
        lease.release()
        raise
    return wrap(arr, None, as_device(f"cuda:{index}"))


def _wrap_device_memory(info: abi.Imported, index: int, lease: abi.Lease):
    """A ``CudaArray`` viewing the producer's memory; ``lease`` is released when its last view dies.

    Views of a ``CudaArray`` point at its root, and a root (``base is None``)
    gives its buffer to toolkit's allocator when it dies, which foreign memory
    must never reach. So the root here is itself a view of a buffer-less
    keeper array, and the keeper's finalizer calls the producer's deleter.
    """
    from .backends.cuda.array import CudaArray  # optional: the CUDA backend (numba.cuda)

    dtype, isz = info.dtype, info.dtype.itemsize
    if 0 in info.shape:
        lease.release()
        return CudaArray.empty(info.shape, dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(info.shape, info.strides))
    buf = _device_buffer(info.data, span, dtype, index)
    keeper = CudaArray(None, 0, (0,), (isz,), dtype)
    weakref.finalize(keeper, lease.release).atexit = False  # no calls into a producer torn down at exit
    root = CudaArray(buf, 0, (span,), (isz,), dtype, base=keeper)
    return CudaArray(buf, 0, info.shape, tuple(s * isz for s in info.strides), dtype, base=root)


def _device_buffer(ptr: int, n: int, dtype: np.dtype, index: int):
    """A 1-d numba device array of ``n`` elements at ``ptr`` that does not own (or free) the memory."""
    from .backends.cuda import runtime  # optional: the CUDA backend (numba.cuda)

    if runtime.simulated():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray  # optional: numba

        raw = (ctypes.c_char * (n * dtype.itemsize)).from_address(ptr)
        return FakeCUDAArray(np.frombuffer(raw, dtype=dtype, count=n))
    cuda = runtime.cuda()
    iface = {"shape": (n,), "strides": None, "typestr": dtype.str, "data": (ptr, False), "version": 3}
    with cuda.gpus[index]:
        return cuda.from_cuda_array_interface(iface, owner=None, sync=False)


def _move(t: Tensor, device, copy: bool | None) -> Tensor:
    dev = as_device(device)
    if dev == t.device:
        return t
    if copy is False:
        raise BufferError(f"from_dlpack: moving to {dev} needs a copy, and copy=False was given")
    return t.to(dev)
