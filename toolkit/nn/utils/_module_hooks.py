"""Adding a hook to one of a module's raw hook tables (the state-dict hooks with PyTorch's private signatures)."""

from __future__ import annotations

from typing import Any

from ..modules._hooks import RemovableHandle


def add_raw_hook(hooks: dict, hook: Any) -> RemovableHandle:
    """Store ``hook`` in ``hooks`` (e.g. ``module._load_state_dict_pre_hooks``) as it is, without wrapping."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle
