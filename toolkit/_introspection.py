"""Questions about objects and devices by PyTorch's names: ``typename``, ``is_storage``, ``get_device_module``,
``is_vulkan_available``.

Logging, checkpoint and device-agnostic code asks these::

    toolkit.typename(toolkit.zeros(2, dtype=toolkit.int64))    # 'torch.LongTensor', as x.type() says
    toolkit.get_device_module("cpu")                           # the module toolkit.cpu
"""

from __future__ import annotations

import sys
from typing import Any

from . import accelerator
from ._core.device import as_device
from ._core.device import device as _device
from ._core.storage import LEGACY_STORAGE_CLASSES, Storage, TypedStorage
from .tensor import Tensor

__all__ = ["get_device_module", "is_storage", "is_vulkan_available", "typename"]

_STORAGE_CLASSES = frozenset({Storage, TypedStorage, *LEGACY_STORAGE_CLASSES.values()})


def typename(obj: Any, /) -> str:
    """The fully qualified name of ``obj``'s type: a tensor's ``type()``, else ``module.qualname``."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj: Any, /) -> bool:
    """Whether ``obj`` is a storage (untyped, typed or legacy typed such as ``FloatStorage``), not a subclass."""
    return type(obj) in _STORAGE_CLASSES


def get_device_module(device: _device | str | None = None):
    """The module of a device type (``toolkit.cuda`` for ``"cuda:1"``); with none, the accelerator's or the CPU's."""
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = as_device(device).type
    elif device is None:
        current = accelerator.current_accelerator()
        name = current.type if current is not None else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect toolkit.device, str, or None")
    module = getattr(sys.modules["toolkit"], name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'toolkit.{name}'.")
    return module


def is_vulkan_available() -> bool:
    """Always False: toolkit runs on the CPU and CUDA only."""
    return False
