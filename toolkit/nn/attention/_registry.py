"""The registry of flash-attention implementations (``register_flash_attention_impl`` and friends), as PyTorch's.

A provider registers a function that installs its kernels; a user activates one by name. toolkit ships none (its
attention is the registry's math composition), so the list starts empty and providers fill it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["activate_flash_attention_impl", "current_flash_attention_impl", "list_flash_attention_impls",
           "register_flash_attention_impl", "restore_flash_attention_impl"]

logger = logging.getLogger(__name__)

_IMPLS: dict[str, Callable] = {}
_active: tuple | None = None  # (name, handle with remove()) of the activated impl


def register_flash_attention_impl(impl: str, *, register_fn: Callable) -> None:
    """Register ``register_fn``, which installs implementation ``impl`` (and may return a handle to keep)."""
    _IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl: str) -> None:
    """Install the registered implementation ``impl``, first restoring the default."""
    global _active
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _active = (impl, handle)


def list_flash_attention_impls() -> list[str]:
    return sorted(_IMPLS)


def current_flash_attention_impl() -> str | None:
    """The activated implementation's name; ``None`` for the default."""
    return None if _active is None else _active[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Remove the activated implementation, if any, going back to the default."""
    global _active
    if _active is not None:
        _active[1].remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _active = None
