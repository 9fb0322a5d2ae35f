"""Sharing strategies: how a CPU tensor's shared memory is named when it is sent to another process.

``file_descriptor`` (the default on Linux, as in PyTorch) sends an open descriptor of an unlinked segment,
so nothing is ever left in /dev/shm; ``file_system`` keeps the segment's file name in /dev/shm and sends the
name (no descriptor needs to travel, at the price of a file that lives until its creator drops it).
"""

from __future__ import annotations

from .._core.storage import keep_segment_names

__all__ = ["get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy"]

_all_sharing_strategies = {"file_descriptor", "file_system"}
_current = {"strategy": "file_descriptor"}


def set_sharing_strategy(new_strategy: str) -> None:
    """Sets the strategy for sharing CPU tensors: one of ``get_all_sharing_strategies()``."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _current["strategy"] = new_strategy
    keep_segment_names(new_strategy == "file_system")


def get_sharing_strategy() -> str:
    """The current strategy for sharing CPU tensors."""
    return _current["strategy"]


def get_all_sharing_strategies() -> set[str]:
    """The strategies this system supports."""
    return set(_all_sharing_strategies)
