"""Autocast's switches: per thread and per device type, whether autocast is on and in which dtype.

PyTorch keeps this state thread-local (a new thread starts with autocast off), and so do we: the truth is
in ``LOCAL``. The dispatcher never reads it on its hot path: the autocast observer (``toolkit.dispatch.
autocast``, registered here as ``HOOK`` when the dispatcher is imported) sits first in ``STATE.observers``
only while some thread has autocast enabled, so a program that never uses autocast pays nothing beyond
the dispatcher's one ``if STATE.observers``.

PyTorch's CPU default dtype is bfloat16, which toolkit lacks (numpy has no bfloat16): the CPU default is
stored as ``None`` here, and ``toolkit.autocast("cpu")`` refuses it with an error that says to pass
``dtype=toolkit.float16`` (or to ``set_autocast_dtype("cpu", toolkit.float16)`` once).
"""

from __future__ import annotations

import threading

from . import dtypes as _dt
from .state import STATE

# Device types autocast knows, with PyTorch's default lower-precision dtype (None: bfloat16, absent here).
DEFAULT_DTYPES = {"cpu": None, "cuda": _dt.float16}
NO_BFLOAT16 = ("toolkit has no bfloat16 dtype (numpy has none), which is PyTorch's default for CPU autocast: "
               "pass dtype=toolkit.float16, as in torch.autocast('cpu', dtype=torch.float16), or set it once "
               "with toolkit.set_autocast_dtype('cpu', toolkit.float16)")


class _Local(threading.local):
    def __init__(self):
        self.enabled = {d: False for d in DEFAULT_DTYPES}
        self.dtype = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.excluded = False  # inside an op autocast already cast: its inner ops run as written
        self.cache: dict = {}  # id(float32 leaf) -> (leaf, its lower-precision copy), dropped at the outermost exit


LOCAL = _Local()
HOOK = None  # the dispatcher's autocast observer: ``on_call(op, bound, run)``, set by ``toolkit.dispatch``
_active_threads: set = set()
_lock = threading.Lock()


def check_device_type(device_type: str) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in DEFAULT_DTYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def is_available(device_type: str) -> bool:
    """Whether autocast knows ``device_type`` (``cpu``, ``cuda``)."""
    return device_type in DEFAULT_DTYPES


def is_enabled(device_type: str) -> bool:
    return LOCAL.enabled[check_device_type(device_type)]


def set_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` in this thread, and the dispatcher's observer with it."""
    local = LOCAL
    local.enabled[check_device_type(device_type)] = bool(enabled)
    ident = threading.get_ident()
    with _lock:
        if any(local.enabled.values()):
            _active_threads.add(ident)
        else:
            _active_threads.discard(ident)
        observers = STATE.observers
        installed = HOOK is not None and HOOK in observers
        if _active_threads and not installed and HOOK is not None:
            observers.insert(0, HOOK)  # first, so the tracer and profiler see the casts and the cast inputs
        elif not _active_threads and installed:
            observers.remove(HOOK)


def get_dtype(device_type: str):
    """The lower-precision dtype of ``device_type`` (None for CPU until one is set: bfloat16 is absent)."""
    return LOCAL.dtype[check_device_type(device_type)]


def set_dtype(device_type: str, dtype) -> None:
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' must be toolkit.dtype, not {type(dtype).__name__}")
    LOCAL.dtype[check_device_type(device_type)] = dtype


def is_cache_enabled() -> bool:
    return LOCAL.cache_enabled


def set_cache_enabled(enabled: bool) -> None:
    LOCAL.cache_enabled = bool(enabled)


def clear_cache() -> None:
    LOCAL.cache.clear()


def increment_nesting() -> int:
    LOCAL.nesting += 1
    return LOCAL.nesting


def decrement_nesting() -> int:
    LOCAL.nesting -= 1
    return LOCAL.nesting
