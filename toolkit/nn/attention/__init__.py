"""``toolkit.nn.attention``: choosing the kernels of ``scaled_dot_product_attention``, as ``torch.nn.attention``.

``sdpa_kernel`` enables a set of backends for a block and restores the previous set after it. toolkit computes
attention one way on every device (the registry's math composition, which is what PyTorch's MATH backend and its
CPU flash kernel compute), so the choice is recorded, and ``check_sdpa_backends`` raises PyTorch's CPU error when a
block leaves neither MATH nor FLASH_ATTENTION enabled::

    with sdpa_kernel([SDPBackend.MATH]):
        out = F.scaled_dot_product_attention(q, k, v)
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator

from ._registry import (
    activate_flash_attention_impl,
    current_flash_attention_impl,
    list_flash_attention_impls,
    register_flash_attention_impl,
    restore_flash_attention_impl,
)

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "register_flash_attention_impl",
           "activate_flash_attention_impl", "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

# PyTorch warns why fused kernels cannot run when this is True; toolkit has one kernel, so there is nothing to say.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The backends of scaled dot product attention, with PyTorch's values (``int(SDPBackend.MATH) == 0``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


# The backends a flag switches, in PyTorch's order; all start enabled, in PyTorch's default priority.
_SWITCHED = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
             SDPBackend.OVERRIDEABLE)
_enabled = set(_SWITCHED)
_priority = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION,
             SDPBackend.OVERRIDEABLE]
# The backends that run on the CPU, where toolkit's attention runs them all as one computation.
_CPU_BACKENDS = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION)


def enabled_sdpa_backends(with_priority: bool = False) -> list[SDPBackend]:
    """The backends now enabled, in flag order or, with ``with_priority``, in priority order."""
    backends = [b for b in _SWITCHED if b in _enabled]
    return sorted(backends, key=_priority.index) if with_priority else backends


def sdpa_priority_order() -> list[int]:
    """The backends' priority, as the values PyTorch's ``torch._C._get_sdp_priority_order()`` gives."""
    return [int(b) for b in _priority]


def _set_backends(backends: Iterable[SDPBackend], set_priority: bool) -> None:
    backends = list(backends)
    _enabled.clear()
    _enabled.update(b for b in _SWITCHED if b in backends)
    if set_priority:
        _priority[:] = backends + [b for b in _priority if b not in backends]


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False) -> Iterator[dict]:
    """Enable only ``backends`` (one or a list) inside the block; with ``set_priority``, try them in that order."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    chosen = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = enabled_sdpa_backends(with_priority=set_priority)
    try:
        _set_backends(chosen, set_priority)
        yield {}
    finally:
        _set_backends(previous, set_priority)


def check_sdpa_backends(device_type: str = "cpu") -> None:
    """Raise PyTorch's error when no enabled backend runs on ``device_type`` (on the CPU: MATH or FLASH_ATTENTION;
    on CUDA any but ERROR, since toolkit's one computation stands for them all)."""
    runnable = _CPU_BACKENDS if device_type == "cpu" else _SWITCHED
    if not any(b in _enabled for b in runnable):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
