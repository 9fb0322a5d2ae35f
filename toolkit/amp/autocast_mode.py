"""``autocast``: regions where ops listed in PyTorch's autocast policy run in lower precision.

Each op's policy is a fact on its registry definition (``autocast=`` of ``@op``); the dispatcher reads it
(``toolkit.dispatch.autocast``). This module is the user's side: the context manager and decorator, and
``custom_fwd``/``custom_bwd`` for ``autograd.Function``.

Example::

    with toolkit.autocast("cpu", dtype=toolkit.float16):
        y = model(x)  # Linear and conv layers run in float16; losses in float32

PyTorch's CPU default is bfloat16, which toolkit lacks: ``autocast("cpu")`` without a dtype (and with
``enabled=True``) raises a ``RuntimeError`` saying to pass ``dtype=toolkit.float16``, rather than silently
running in float32 (where PyTorch would compute in bfloat16) or in float16 (whose numbers differ from
bfloat16's). ``enabled=False`` never raises, so ``autocast("cpu", enabled=use_amp)`` works as written.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from typing import Any

import numpy as np

from .. import cuda as _cuda
from .._core import autocast_state as _state
from .._core import dtypes as _dt
from ..tensor import Tensor
from . import state as _api

__all__ = ["autocast", "autocast_decorator", "custom_bwd", "custom_fwd", "is_autocast_available"]

_SUPPORTED = (_dt.float16,)  # PyTorch's [bfloat16, float16], less the dtype toolkit lacks


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast works on ``device_type`` (``"cpu"``, ``"cuda"``)."""
    return _state.is_available(device_type)


def autocast_decorator(autocast_instance: autocast, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:  # noqa: N801 - PyTorch's name
    """Context manager or decorator: ops in the region run in the dtype autocast chooses for each.

    Args:
        device_type: ``"cpu"`` or ``"cuda"``, the ``type`` of the device whose ops are cast.
        dtype: the lower-precision dtype (``toolkit.float16``); None takes ``get_autocast_dtype(device_type)``.
        enabled: False makes the region leave ops alone (a ``GradScaler(enabled=use_amp)``-style switch).
        cache_enabled: whether weights cast in the region are cast once and reused (default: the current setting).
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        _state.check_device_type(device_type)
        self.device = device_type
        self.fast_dtype = _state.get_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = _state.is_cache_enabled() if cache_enabled is None else cache_enabled
        device_name = device_type.upper()
        if enabled:
            if device_type == "cuda" and not _cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype is None:
                raise RuntimeError(f"autocast: {_state.NO_BFLOAT16}")
            elif self.fast_dtype not in _SUPPORTED:
                warnings.warn(f"In {device_name} autocast, but the target dtype is not supported. Disabling "
                              f"autocast.\n{device_name} Autocast only supports dtypes of toolkit.float16 currently "
                              "(PyTorch's bfloat16 is not available in toolkit).", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _state.is_cache_enabled()
        self.prev = _state.is_enabled(self.device)
        self.prev_fastdtype = _state.get_dtype(self.device)
        if self.fast_dtype is not None:
            _state.set_dtype(self.device, self.fast_dtype)
        _state.set_enabled(self.device, self._enabled)
        _state.increment_nesting()
        _state.set_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if _state.decrement_nesting() == 0:
            _state.clear_cache()
        _state.set_enabled(self.device, self.prev)
        if self.prev_fastdtype is not None:
            _state.set_dtype(self.device, self.prev_fastdtype)
        else:
            _state.LOCAL.dtype[self.device] = None
        _state.set_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)"
            )
        return autocast_decorator(self, func)


def _cast(value, device_type: str, dtype):
    """Floating tensors on ``device_type`` (not float64) in ``value``, containers walked, cast to ``dtype``."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not _dt.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def _check_device_type_arg(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate ``forward`` of an ``autograd.Function``: with ``cast_inputs``, inside an autocast region its
    floating inputs are cast to that dtype and it runs with autocast off; without, it runs in the region's
    state. ``custom_bwd`` then runs ``backward`` in the state ``forward`` saw."""
    _check_device_type_arg(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _api.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _api.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _api.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate ``backward`` of an ``autograd.Function``: it runs with the autocast state its ``forward``
    (decorated with ``custom_fwd``) ran with."""
    _check_device_type_arg(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
