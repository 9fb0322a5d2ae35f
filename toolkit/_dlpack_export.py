"""The export half of DLPack: ``Tensor.__dlpack__`` and ``Tensor.__dlpack_device__`` (``toolkit.dlpack`` has both
halves and the docs).

CPU tensors hand out their numpy array's own capsule; CUDA tensors a capsule
over their device memory written with the C ABI in :mod:`toolkit._dlpack_abi`,
after ordering toolkit's queued kernels before the consumer's stream.
"""

from __future__ import annotations

import enum
from typing import Any

from . import _dlpack_abi as abi
from . import cuda as tcuda
from ._core.device import as_device


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (the ones toolkit meets), as ``Tensor.__dlpack_device__`` reports them."""

    kDLCPU = abi.kDLCPU
    kDLCUDA = abi.kDLCUDA
    kDLCUDAHost = abi.kDLCUDAHost
    kDLROCM = abi.kDLROCM
    kDLCUDAManaged = abi.kDLCUDAManaged


HOST_DEVICES = (abi.kDLCPU, abi.kDLCUDAHost)
CUDA_DEVICES = (abi.kDLCUDA, abi.kDLCUDAManaged)


def dlpack_device(self) -> tuple:
    """``(device type, index)`` of the tensor's memory, as ``torch.Tensor.__dlpack_device__``."""
    dev = self._storage.device
    if dev.type == "cuda":
        return DLDeviceType.kDLCUDA, dev.index or 0
    return DLDeviceType.kDLCPU, 0


# ------------------------------------------------------------------------------------------------------ export
def dlpack(self, *, stream: Any = None, max_version: tuple | None = None, dl_device: tuple | None = None,
           copy: bool | None = None):
    """A DLPack capsule of the tensor's memory (no copy unless needed or ``copy=True``), as ``torch.Tensor.__dlpack__``.

    ``max_version`` >= (1, 0) gives a ``"dltensor_versioned"`` capsule (whose
    flags say when it is a copy), else a legacy ``"dltensor"`` one.
    ``dl_device`` may name the CPU for a CUDA tensor or a CUDA device for a
    CPU tensor: that is a copy, refused with ``copy=False``.
    """
    if self._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    dev = self._storage.device
    here = dlpack_device(self)
    target = here if dl_device is None else (int(dl_device[0]), int(dl_device[1]))
    if dev.type == "cuda":
        return _export_cuda(self._data, dev, stream, target, versioned, copy)
    if target[0] in CUDA_DEVICES:
        if copy is False:
            raise BufferError(f"__dlpack__: exporting a cpu tensor to DLPack device {device_str(target)} needs a copy, "
                              "and copy=False was given")
        moved = self.to(as_device(f"cuda:{target[1]}"))
        return _export_cuda(moved._data, moved._storage.device, stream, target, versioned, None, copied=True)
    if stream is not None and stream != -1:
        raise BufferError(f"__dlpack__: a CPU tensor takes no stream, got stream={stream!r}")
    kw = {}
    if max_version is not None:
        kw["max_version"] = tuple(max_version)
    if dl_device is not None:
        kw["dl_device"] = target
    if copy is not None:
        kw["copy"] = copy
    return self._data.__dlpack__(**kw)


def _export_cuda(arr, dev, stream, target: tuple, versioned: bool, copy: bool | None, copied: bool = False):
    index = dev.index or 0
    if target[0] in HOST_DEVICES:
        if copy is False:
            raise BufferError(f"__dlpack__: exporting a {dev} tensor to DLPack device {device_str(target)} needs a "
                              "copy, and copy=False was given")
        host = arr.get()  # synchronous: every stream's view of the data is settled
        return abi.export(host.__array_interface__["data"][0] if host.size else 0, (abi.kDLCPU, 0), host.shape,
                          tuple(s // host.itemsize for s in host.strides), host.dtype, host, versioned=versioned,
                          flags=abi.FLAG_IS_COPIED)
    if target != (abi.kDLCUDA, index):
        raise BufferError(f"__dlpack__: cannot export a {dev} tensor to DLPack device {device_str(target)}")
    if index != tcuda.current_device():
        raise BufferError(f"Can't export tensors on a different CUDA device index. Expected: {index}. "
                          f"Current device: {tcuda.current_device()}.")
    if copy:
        arr, copied = arr.copy(), True
    _order_before_consumer(stream)
    return abi.export(device_ptr(arr) if arr.size else 0, (abi.kDLCUDA, index), arr.shape, arr.estrides, arr.dtype,
                      arr, versioned=versioned, flags=abi.FLAG_IS_COPIED if copied else 0)


def _order_before_consumer(stream) -> None:
    """Make the consumer's ``stream`` wait for toolkit's queued kernels (the array API's stream semantics).

    toolkit launches everything on numba's default stream. ``None``/``1``
    (the legacy default stream) already wait for it when that is the legacy
    stream; ``2`` (per-thread default) and any other case synchronizes the
    device; a stream pointer waits on an event recorded after our work.
    """
    from .backends.cuda import runtime  # optional: the CUDA backend (numba.cuda)

    if stream == -1:
        return
    if stream == 0:
        raise AssertionError("unsupported stream on CUDA: 0.")
    cuda = runtime.cuda()
    if runtime.simulated():
        cuda.synchronize()  # the simulator has no streams: this settles everything
        return
    from numba.core import config  # optional: numba, never loaded by import toolkit

    per_thread = bool(getattr(config, "CUDA_PER_THREAD_DEFAULT_STREAM", False))
    if stream is None or stream == 1:
        if per_thread:
            cuda.synchronize()
        return
    if stream == 2:
        cuda.synchronize()
        return
    event = cuda.event(timing=False)
    event.record(cuda.default_stream())
    event.wait(cuda.external_stream(stream))


def device_ptr(arr) -> int:
    """The address of ``arr``'s first element (under the simulator: the host memory it hands out)."""
    from .backends.cuda import runtime  # optional: the CUDA backend (numba.cuda)

    if runtime.simulated():
        return arr.buf.__array_interface__["data"][0] + arr.offset * arr.itemsize
    return arr.device_ptr()


def device_str(kind_index: tuple) -> str:
    kind, index = kind_index
    try:
        return f"({DLDeviceType(int(kind)).name}, {index})"
    except ValueError:
        return f"({int(kind)}, {index})"
