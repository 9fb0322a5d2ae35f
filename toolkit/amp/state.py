"""The autocast state functions PyTorch has at top level (``torch.is_autocast_enabled`` and the rest).

They read and set the thread-local switches in ``toolkit._core.autocast_state``; the ``*_cpu_*`` and
``*_gpu_*`` spellings are PyTorch's deprecated ones and warn as PyTorch does.
"""

from __future__ import annotations

import warnings

from .._core import autocast_state as _state

__all__ = ["autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
           "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype", "is_autocast_cache_enabled",
           "is_autocast_cpu_enabled", "is_autocast_enabled", "set_autocast_cache_enabled",
           "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
           "set_autocast_gpu_dtype"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: CUDA, as PyTorch)."""
    return _state.is_enabled("cuda" if device_type is None else device_type)


def set_autocast_enabled(*args) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or PyTorch's older ``set_autocast_enabled(enabled)``
    for CUDA. Prefer ``toolkit.autocast``, which restores the previous state on exit."""
    if len(args) == 1:
        _state.set_enabled("cuda", args[0])
    elif len(args) == 2:
        _state.set_enabled(args[0], args[1])
    else:
        raise TypeError(f"set_autocast_enabled() takes 1 or 2 positional arguments but {len(args)} were given")


def get_autocast_dtype(device_type: str):
    """The dtype ``lower`` ops run in under autocast on ``device_type``. None for CPU until set: PyTorch's
    default there is bfloat16, which toolkit lacks."""
    return _state.get_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype) -> None:
    _state.set_dtype(device_type, dtype)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _state.get_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _state.get_dtype("cuda")


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _state.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _state.set_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _state.set_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _state.set_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return _state.is_cache_enabled()


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.set_cache_enabled(enabled)


def clear_autocast_cache() -> None:
    """Drop the lower-precision copies of weights made in this thread's autocast regions."""
    _state.clear_cache()


def autocast_increment_nesting() -> int:
    return _state.increment_nesting()


def autocast_decrement_nesting() -> int:
    return _state.decrement_nesting()
