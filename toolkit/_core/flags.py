"""Process-wide switches users set by PyTorch's names: deterministic algorithms, float32 matmul precision,
the default device of factories.

They live at the bottom so that ops, kernels and factories can read them
without importing anything above; ``toolkit.use_deterministic_algorithms``,
``toolkit.set_float32_matmul_precision`` and ``toolkit.set_default_device``
set them::

    toolkit.use_deterministic_algorithms(True)
    toolkit.are_deterministic_algorithms_enabled()  # True
"""

from __future__ import annotations

import warnings

from .device import DEFAULT_DEVICE, as_device
from .device import device as _device


class _Switches:
    """The values themselves, one object so readers take one attribute lookup."""

    __slots__ = ("deterministic", "deterministic_warn_only", "float32_matmul_precision")

    def __init__(self):
        self.deterministic = False
        self.deterministic_warn_only = False
        self.float32_matmul_precision = "highest"


SWITCHES = _Switches()


# -- deterministic algorithms ---------------------------------------------------------------------------
def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask ops for deterministic results: an op with only a nondeterministic kernel then raises (or warns,
    with ``warn_only=True``) instead of running. toolkit's CPU kernels are all deterministic."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    SWITCHES.deterministic = mode
    SWITCHES.deterministic_warn_only = warn_only if mode else False


def are_deterministic_algorithms_enabled() -> bool:
    return SWITCHES.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return SWITCHES.deterministic_warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``"default"``/0, ``"warn"``/1 or ``"error"``/2: the same switch as ``use_deterministic_algorithms``."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not SWITCHES.deterministic:
        return 0
    return 1 if SWITCHES.deterministic_warn_only else 2


def alert_not_deterministic(caller: str) -> None:
    """What a kernel without a deterministic implementation calls first: raises (or warns) when asked to."""
    if not SWITCHES.deterministic:
        return
    message = (f"{caller} does not have a deterministic implementation, but you set "
               "'toolkit.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, "
               "or you can use the 'warn_only=True' option, if that's acceptable for your application.")
    if SWITCHES.deterministic_warn_only:
        warnings.warn(message, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(message)


# -- float32 matmul precision -------------------------------------------------------------------------
_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"`` (the default), ``"high"`` or ``"medium"``: how much precision float32 matmuls may trade
    for speed. toolkit's kernels compute float32 products in float32 at every setting (no TF32 units on the
    CPU); the value is kept for code that reads it, and for ``backends.cuda.matmul.allow_tf32``."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    SWITCHES.float32_matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return SWITCHES.float32_matmul_precision


# -- the default device --------------------------------------------------------------------------------
def set_default_device(device) -> None:
    """The device factories (``zeros``, ``tensor``, ``arange``...) use when not given one; ``None`` or
    ``"cpu"`` restores the CPU. ``*_like`` factories and ``Tensor.new_*`` keep their input's device."""
    d = None if device is None else as_device(device)
    DEFAULT_DEVICE.device = None if d is None or d.type == "cpu" else d


def get_default_device() -> _device:
    return DEFAULT_DEVICE.device or as_device("cpu")


def default_device_or(device):
    """``device``, or the default device when it is None (and a default other than the CPU is set)."""
    return DEFAULT_DEVICE.device if device is None else device
