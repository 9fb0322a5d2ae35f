"""The CPU device runtime, as ``torch.cpu``: the calls code written for any device makes, answered for the CPU.

The CPU is always there, is one device, and runs everything in order, so streams and events are
placeholders that keep device-generic code (``getattr(toolkit, device.type).synchronize()``) working.

Example::

    >>> toolkit.cpu.is_available(), toolkit.cpu.device_count(), toolkit.cpu.current_device()
    (True, 1, 'cpu')
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import numpy as np

from . import amp

__all__ = ["Event", "Stream", "StreamContext", "amp", "current_device", "current_stream", "device_count",
           "get_capabilities", "is_available", "is_initialized", "set_device", "stream", "synchronize"]


def _feature_name(numpy_name: str) -> str:
    """numpy's CPU feature names in PyTorch's spelling: ``AVX512F`` -> ``avx512_f``, ``SSE41`` -> ``sse4_1``."""
    name = numpy_name.lower()
    if name.startswith("avx512") and not name.startswith("avx512_"):
        return "avx512_" + name[6:]
    return re.sub(r"^sse4(\d)$", r"sse4_\1", name)


@lru_cache(None)
def get_capabilities() -> Mapping[str, Any]:
    """The CPU's instruction-set features (``avx2``, ``avx512_f``...) as numpy detects them, with the
    architecture and logical core count."""
    features = getattr(np._core._multiarray_umath, "__cpu_features__", {})  # numpy's runtime CPU detection
    caps: dict[str, Any] = {_feature_name(k): v for k, v in features.items()}
    caps["architecture"] = platform.machine()
    caps["num_logical_cores"] = os.cpu_count()
    return MappingProxyType(caps)


def is_available() -> bool:
    """Always True: the CPU is always there."""
    return True


def is_initialized() -> bool:
    return True


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""


class Stream:
    """A placeholder stream: CPU work runs in order."""

    def __init__(self, priority: int = -1) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self) -> None:
        pass

    def wait_event(self, event) -> None:
        pass


class Event:
    """A placeholder event: always complete."""

    def query(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device=None) -> Stream:
    """The stream ``stream(...)`` made current, else the default one."""
    return _current_stream


class StreamContext(AbstractContextManager):
    """Makes ``stream`` current inside the block (None: leaves the current one)."""

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream = _current_stream
        _current_stream = self.stream

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:
        global _current_stream
        if self.stream is None:
            return
        _current_stream = self.prev_stream


def stream(stream: Stream | None) -> AbstractContextManager:
    return StreamContext(stream)


def device_count() -> int:
    return 1


def set_device(device) -> None:
    """Nothing to select: there is one CPU device."""


def current_device() -> str:
    return "cpu"
