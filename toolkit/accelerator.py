"""``toolkit.accelerator``: the device-agnostic runtime API of PyTorch 2.x, answered by ``toolkit.cuda``.

toolkit's one accelerator is CUDA (through numba.cuda), so code written for any
accelerator runs unchanged::

    dev = toolkit.accelerator.current_accelerator() or toolkit.device("cpu")
    x = toolkit.ones(3, device=dev)
"""

from __future__ import annotations

from . import cuda
from ._core.device import as_device
from ._core.device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
           "empty_cache", "is_available", "max_memory_allocated", "memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "synchronize"]


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def is_available() -> bool:
    """Whether an accelerator (a CUDA device numba can use) is present."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device('cuda')`` where CUDA is available, else None (``check_available`` changes nothing: toolkit only
    reports CUDA when it can be used)."""
    return _device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count()


def current_device_index() -> int:
    _require()
    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device) -> None:
    """Select the accelerator new tensors go to (an index, ``'cuda:1'`` or a device)."""
    _require()
    cuda.set_device(device if isinstance(device, int) else as_device(device))


set_device_idx = set_device_index


def current_stream(device=None):
    _require()
    return cuda.current_stream(device)


def synchronize(device=None) -> None:
    """Wait for all work queued on the accelerator."""
    _require()
    cuda.synchronize(device)


def empty_cache() -> None:
    _require()
    cuda.empty_cache()


def memory_allocated(device=None) -> int:
    _require()
    return cuda.memory_allocated(device)


def max_memory_allocated(device=None) -> int:
    _require()
    return cuda.max_memory_allocated(device)


def memory_reserved(device=None) -> int:
    _require()
    return cuda.memory_reserved(device)


def reset_peak_memory_stats(device=None) -> None:
    _require()
    cuda.reset_peak_memory_stats(device)
