"""Where a loaded storage goes: the saved location tag, remapped by ``map_location`` as ``torch.load`` does.

Both checkpoint formats (PyTorch's zip layout and toolkit's older manifest archives) read each storage on the
CPU first and then ask :func:`target_device` where it belongs: ``map_location`` may be None (the saved place),
a device or its name (everything there), a dict from saved tags to new ones, or a callable
``(storage, location)`` returning a storage, a device, or None (the saved place)::

    target_device("cuda:1", storage, {"cuda:1": "cpu"})   # device(type='cpu')
"""

from __future__ import annotations

from typing import Any

from .. import cuda
from .._core.device import CPU, as_device, device
from .._core.storage import Storage
from .format import _Corrupt

#: Where toolkit can hold a loaded tensor.
DEVICE_TYPES = ("cpu", "cuda")


class CallerError(Exception):
    """An error raised by the caller's own ``map_location`` function: ``load`` re-raises it unchanged."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def check_map_location(ml: Any) -> None:
    """Refuse a ``map_location`` of a kind ``torch.load`` does not take, before the file is opened."""
    if not (ml is None or isinstance(ml, (str, device, dict)) or callable(ml)):
        raise TypeError(f"toolkit.load: map_location should be a str, device, dict or callable, got {type(ml).__name__}")


def target_device(location: str, storage: Storage, map_location: Any, what: str,
                  wrap_caller_errors: bool = False) -> device:
    """The device a storage saved at ``location`` is loaded to; ``what`` names it in errors (``tensor 3``).

    A location the file states wrongly is the file's fault (``_Corrupt``); a target toolkit cannot hold that
    the caller chose is the caller's (``RuntimeError``); with ``wrap_caller_errors`` an exception of the
    caller's ``map_location`` function comes back wrapped in :class:`CallerError`, so ``load`` re-raises it
    unchanged instead of blaming the file.
    """
    try:
        saved = as_device(location)
    except (RuntimeError, ValueError, TypeError) as e:
        raise _Corrupt(f"{what} has bad device {location!r:.80}") from e
    ml = map_location
    if ml is None:
        target = saved
    elif isinstance(ml, (str, device)):
        target = ml
    elif isinstance(ml, dict):
        target = ml.get(location, location)
    elif callable(ml):
        try:
            result = ml(storage, location)
        except Exception as e:
            if wrap_caller_errors:
                raise CallerError(e) from e
            raise
        if result is None:
            target = location
        elif isinstance(result, Storage):
            target = result.device or CPU
        else:
            target = result
    else:
        raise TypeError(f"toolkit.load: map_location should be a str, device, dict or callable, got {type(ml).__name__}")
    target = as_device(target)
    if target.type not in DEVICE_TYPES:
        where = f"device {str(target)!r}, where toolkit cannot hold tensors (only on {', '.join(DEVICE_TYPES)})"
        if target != saved:  # the caller's map_location chose it
            raise RuntimeError(f"toolkit.load: map_location {ml!r:.80} puts {what} on {where}")
        raise _Corrupt(f"{what} was saved on {where}; pass map_location='cpu'")
    if target.type == "cuda" and not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but toolkit.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use toolkit.load with "
            "map_location=toolkit.device('cpu') to map your storages to the CPU."
        )
    return target
