"""The deprecated per-device spellings ``torch.cuda.amp.*`` and ``torch.cpu.amp.*``: each warns with
PyTorch's ``FutureWarning`` and forwards to ``toolkit.amp`` with the device filled in."""

from __future__ import annotations

import functools
import warnings

from .._core import dtypes as _dt
from . import autocast_mode as _autocast_mode
from . import grad_scaler as _grad_scaler


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.", FutureWarning, stacklevel=3)


class CudaAutocast(_autocast_mode.autocast):
    """``torch.cuda.amp.autocast(args...)``: ``toolkit.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled: bool = True, dtype=_dt.float16, cache_enabled: bool = True):
        _deprecated("torch.cuda.amp.autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CpuAutocast(_autocast_mode.autocast):
    """``torch.cpu.amp.autocast(args...)``: ``toolkit.amp.autocast("cpu", args...)``. PyTorch's default dtype
    is bfloat16, which toolkit lacks: pass ``dtype=toolkit.float16``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        _deprecated("torch.cpu.amp.autocast", "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CudaGradScaler(_grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(args...)``: ``toolkit.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecated("torch.cuda.amp.GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class CpuGradScaler(_grad_scaler.GradScaler):
    """``torch.cpu.amp.GradScaler(args...)``: ``toolkit.amp.GradScaler("cpu", args...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecated("torch.cpu.amp.GradScaler", "torch.amp.GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


for _cls in (CudaAutocast, CpuAutocast, CudaGradScaler, CpuGradScaler):
    _cls.__name__ = _cls.__qualname__ = "autocast" if "Autocast" in _cls.__name__ else "GradScaler"


def cuda_custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: ``toolkit.amp.custom_fwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda", cast_inputs=cast_inputs)(fwd)


def cuda_custom_bwd(bwd):
    """``torch.cuda.amp.custom_bwd``: ``toolkit.amp.custom_bwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_bwd, device_type="cuda")(bwd)
