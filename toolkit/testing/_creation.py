"""``make_tensor``: a tensor of random values for tests, as ``torch.testing.make_tensor`` makes one.

Values are drawn uniformly from ``[low, high)``: by default ``[-9, 9)`` for
floating dtypes, ``[-9, 10)`` for integers (``[0, 10)`` for unsigned ones),
``{False, True}`` for bools, from toolkit's default generator (so
``toolkit.manual_seed`` makes them reproducible).
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.memory_format import laid_out
from ..ops import api
from ..tensor import Tensor


def _bounds(dtype: _dt.dtype, low, high) -> tuple:
    """PyTorch's ``_modify_low_high``: defaults, NaN and order checks, clamping to the dtype's range."""
    if dtype.is_floating_point:
        info = np.finfo(dtype.np)
        lowest, highest, default_low, default_high = float(info.min), float(info.max), -9, 9
    else:
        info = np.iinfo(dtype.np)
        lowest, highest, default_low, default_high = int(info.min), int(info.max) + 1, -9, 10
    low = default_low if low is None else low
    high = default_high if high is None else high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    low, high = max(low, lowest), min(high, highest)
    if low == high and dtype.is_floating_point:
        return low, high
    if low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if not dtype.is_floating_point:
        low, high = math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype: _dt.dtype, device, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format=None) -> Tensor:
    """A tensor of ``shape`` with random values (see the module); ``noncontiguous`` gives one whose last dim has
    stride 2, ``exclude_zero`` replaces zeros by the smallest positive value (1 for integers)."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    dtype = _dt.as_dtype(dtype)
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    if dtype is _dt.bool:
        result = api.randint(0, 2, shape, dtype=_dt.bool, device=device)
    elif dtype.is_floating_point:
        low, high = _bounds(dtype, low, high)
        u = api.rand(shape, dtype=_dt.float64, device=device)
        result = (u * (high - low) + low).to(dtype)
    else:
        low, high = _bounds(dtype, low, high)
        result = api.randint(low, high, shape, dtype=dtype, device=device)
    if exclude_zero:
        replacement = 1 if not dtype.is_floating_point else float(np.finfo(dtype.np).tiny)
        result = api.where(result == 0, api.full_like(result, replacement), result)
    if noncontiguous and result.numel() > 1:
        result = api.repeat_interleave(result, 2, dim=-1)[..., ::2]
    elif memory_format is not None:
        result = laid_out(result, memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result
