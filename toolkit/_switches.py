"""Process-wide switches by PyTorch's names: ``set_warn_always``, ``set_flush_denormal``, ``set_anomaly_enabled``,
``set_default_tensor_type``, ``init_num_threads``.

Code written for PyTorch flips these at start-up; each does here what it can on numpy and numba, and says when it
cannot (``set_flush_denormal`` answers ``False``). Anomaly detection is the state ``toolkit.autograd.detect_anomaly``
sets, so both spellings agree::

    toolkit.set_anomaly_enabled(True)
    toolkit.autograd.is_anomaly_enabled()      # True
"""

from __future__ import annotations

import builtins
import importlib
import warnings

from . import autograd
from ._core import dtypes as _dt
from ._core import flags as _flags
from ._legacy import _LegacyTensorMeta

__all__ = ["init_num_threads", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_warn_always_enabled",
           "set_anomaly_enabled", "set_default_tensor_type", "set_flush_denormal", "set_warn_always"]

_warn_always = False
_warned_once: set = set()


def set_warn_always(b: builtins.bool, /) -> None:
    """With ``True``, warnings toolkit gives once per process (``warn_once``) are given every time."""
    global _warn_always
    if not isinstance(b, builtins.bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always = b


def is_warn_always_enabled() -> builtins.bool:
    return _warn_always


def warn_once(message: str, category: type = UserWarning, stacklevel: int = 2) -> None:
    """Warn with ``message`` the first time only, unless ``set_warn_always(True)`` (PyTorch's ``TORCH_WARN_ONCE``)."""
    if _warn_always or message not in _warned_once:
        _warned_once.add(message)
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def set_flush_denormal(mode: builtins.bool, /) -> builtins.bool:
    """Whether denormal floats are flushed to zero on the CPU: returns ``False``, "not supported".

    PyTorch sets the SSE3 FTZ/DAZ bits of its own threads; numpy and numba expose no way to set them, so toolkit
    leaves denormals as IEEE arithmetic gives them and answers ``False`` as PyTorch does on CPUs without SSE3.
    """
    if not isinstance(mode, builtins.bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def set_anomaly_enabled(enabled: builtins.bool, check_nan: builtins.bool = True) -> None:
    """Turn anomaly detection on or off for good, as ``toolkit.autograd.set_detect_anomaly`` does for a block."""
    for name, value in (("enabled", enabled), ("check_nan", check_nan)):
        if not isinstance(value, builtins.bool):
            position = 1 if name == "enabled" else 2
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not "
                            f"{type(value).__name__}")
    autograd.set_detect_anomaly(enabled, check_nan)  # its constructor sets the state; no block to leave


is_anomaly_enabled = autograd.is_anomaly_enabled
is_anomaly_check_nan_enabled = autograd.is_anomaly_check_nan_enabled


def init_num_threads() -> None:
    """Set up the calling thread's intra-op pool: numba's threads need no per-thread setup, so nothing to do."""


def set_default_tensor_type(t, /) -> None:
    """Deprecated (as in PyTorch 2.1): sets the default dtype (and, for a CUDA type, device) from a legacy type.

    ``t`` is a legacy tensor type (``toolkit.DoubleTensor``) or its dotted name (``"torch.DoubleTensor"``, with
    ``torch`` read as ``toolkit``). Prefer ``set_default_dtype`` and ``set_default_device``.
    """
    warnings.warn("toolkit.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "toolkit.set_default_dtype() and toolkit.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    if isinstance(t, str):
        t = _import_dotted_name(t)
    if not isinstance(t, _LegacyTensorMeta):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if t.device_type == "cuda":
        t()  # raises PyTorch's TypeError where there is no GPU
        _flags.set_default_device("cuda")
    _dt.set_default_dtype(t.dtype)


def _import_dotted_name(name: str):
    """The object a dotted name such as ``torch.cuda.FloatTensor`` names, with ``torch`` meaning ``toolkit``."""
    parts = name.split(".")
    if parts[0] == "torch":
        parts[0] = "toolkit"
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj
