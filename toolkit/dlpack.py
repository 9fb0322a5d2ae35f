"""DLPack exchange: ``Tensor.__dlpack__``/``__dlpack_device__`` and ``toolkit.from_dlpack``, zero-copy on the CPU.

CPU tensors are numpy arrays underneath, and numpy speaks DLPack both ways
(``ndarray.__dlpack__``, ``np.from_dlpack``), so a toolkit tensor handed to
``torch.from_dlpack`` or ``np.from_dlpack`` shares its memory, and
``toolkit.from_dlpack`` wraps what numpy imports (any producer: PyTorch,
numpy, JAX, or a legacy ``torch.utils.dlpack.to_dlpack`` capsule) without a
copy. numba.cuda neither exports nor imports DLPack, so CUDA tensors and
device capsules are refused with an error that says what to do instead.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ._core.device import as_device
from .factories import from_numpy
from .tensor import Tensor

__all__ = ["DLDeviceType", "dlpack", "dlpack_device", "from_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (the ones toolkit meets), as ``Tensor.__dlpack_device__`` reports them."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10
    kDLCUDAManaged = 13


def dlpack_device(self: Tensor) -> tuple:
    """``(device type, index)`` of the tensor's memory, as ``torch.Tensor.__dlpack_device__``."""
    dev = self._storage.device
    if dev.type == "cuda":
        return DLDeviceType.kDLCUDA, dev.index or 0
    return DLDeviceType.kDLCPU, 0


def dlpack(self: Tensor, *, stream: Any = None, max_version: tuple | None = None, dl_device: tuple | None = None,
           copy: bool | None = None):
    """A DLPack capsule of the tensor's memory (no copy unless ``copy=True``), as ``torch.Tensor.__dlpack__``."""
    if self._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    dev = self._storage.device
    if dev.type != "cpu":
        raise BufferError(
            f"__dlpack__: toolkit cannot export a {dev} tensor through DLPack (numba.cuda has no DLPack export); "
            "copy it to the host with .cpu() first")
    if stream is not None and stream != -1:
        raise BufferError(f"__dlpack__: a CPU tensor takes no stream, got stream={stream!r}")
    kw = {}
    if max_version is not None:
        kw["max_version"] = tuple(max_version)
    if dl_device is not None:
        kw["dl_device"] = tuple(int(x) for x in dl_device)
    if copy is not None:
        kw["copy"] = copy
    return self._data.__dlpack__(**kw)


class _Capsule:
    """A bare capsule (``torch.utils.dlpack.to_dlpack``'s result) as an object with ``__dlpack__`` for numpy."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_kw):
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return DLDeviceType.kDLCPU, 0  # numpy checks the DLTensor's own device and refuses others


def from_dlpack(ext_tensor: Any, *, device=None, copy: bool | None = None) -> Tensor:
    """A CPU tensor viewing ``ext_tensor``'s memory (an object with ``__dlpack__``, or a DLPack capsule).

    As ``torch.from_dlpack``: no copy unless ``copy=True``; ``device`` other
    than the producer's moves the result there (a copy, refused with ``copy=False``).
    """
    if isinstance(ext_tensor, Tensor):
        out = ext_tensor.detach()
        if copy:
            out = out.clone()
        return out if device is None else _move(out, device, copy)
    src = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _as_capsule(ext_tensor)
    if hasattr(src, "__dlpack_device__"):
        kind, index = src.__dlpack_device__()
        if int(kind) not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
            raise BufferError(
                f"from_dlpack: toolkit imports host memory only; {type(ext_tensor).__name__} lives on DLPack device "
                f"({_device_name(kind)}, {index}) and numba.cuda has no DLPack import. Copy it to the host first "
                "(e.g. .cpu()), then move the toolkit tensor with .cuda()")
    try:
        arr = np.from_dlpack(src, copy=copy)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise BufferError(f"from_dlpack: cannot import {type(ext_tensor).__name__}: {e}") from e
    try:
        out = from_numpy(arr)
    except TypeError as e:
        raise BufferError(f"from_dlpack: cannot import {type(ext_tensor).__name__} of dtype {arr.dtype}: {e}") from e
    return out if device is None else _move(out, device, copy)


def _as_capsule(obj) -> _Capsule:
    if type(obj).__name__ != "PyCapsule":
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {type(obj).__name__}")
    return _Capsule(obj)


def _device_name(kind) -> str:
    try:
        return DLDeviceType(int(kind)).name
    except ValueError:
        return str(int(kind))


def _move(t: Tensor, device, copy: bool | None) -> Tensor:
    dev = as_device(device)
    if dev == t.device:
        return t
    if copy is False:
        raise BufferError(f"from_dlpack: moving to {dev} needs a copy, and copy=False was given")
    return t.to(dev)
