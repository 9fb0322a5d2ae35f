"""``FusedMovingAvgObsFakeQuantize``: observation (moving-average min/max), the choice of qparams and fake
quantization in one step, as PyTorch's ``fused_moving_avg_obs_fake_quant`` op computes them: the qparams come
from the backend's ``ChooseQuantizationParams`` (double-precision scale, the zero point nudged from whichever end
loses less, a 6.1e-5 floor on the scale), not from the observer's ``calculate_qparams``, so they can differ from
``FakeQuantize``'s in the last bit and, for a symmetric scheme whose range does not straddle 0, in the zero point.
The quantization-aware-training qconfigs of ``get_default_qat_qconfig`` (version 1) use it."""

from __future__ import annotations

import math

import numpy as np

from ... import factories
from ..._core import dtypes as _dt
from ...ops import api
from . import _qtypes as q
from .fake_quantize import FakeQuantize
from .moving_average_observers import MovingAveragePerChannelMinMaxObserver
from .observer import MovingAverageMinMaxObserver

_SMALL_SCALE = np.float32(6.1e-5)


def choose_qparams(lo: float, hi: float, qmin: int, qmax: int, preserve_sparsity: bool) -> tuple[float, int]:
    """The backend's ``(scale, zero_point)`` for the range ``[lo, hi]`` (float32 bounds, double scale)."""
    f32 = np.float32
    lo, hi = f32(lo), f32(hi)
    if lo > hi:
        raise RuntimeError("In ChooseQuantizationParams, min should be less than or equal to max")
    if lo < 0 < hi and preserve_sparsity:
        sym_min, sym_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = max(abs(lo / f32(sym_min)), abs(hi / f32(sym_max)))
        lo, hi = f32(float(max_scale) * sym_min), f32(float(max_scale) * sym_max)
    lo, hi = min(lo, f32(0)), max(hi, f32(0))
    scale = (float(hi) - float(lo)) / (qmax - qmin)
    if f32(scale) == 0 or math.isinf(f32(1) / f32(scale)):
        scale = 0.1
    if scale < _SMALL_SCALE:
        org_scale = f32(scale)
        scale = float(_SMALL_SCALE)
        if lo == 0:
            hi = f32(_SMALL_SCALE * f32(qmax - qmin))
        elif hi == 0:
            lo = f32(-_SMALL_SCALE * f32(qmax - qmin))
        else:
            amplifier = _SMALL_SCALE / org_scale
            lo, hi = f32(lo * amplifier), f32(hi * amplifier)
    zp_from_min = qmin - float(lo) / scale
    zp_from_max = qmax - float(hi) / scale
    err_min = abs(qmin) - abs(float(lo) / scale)
    err_max = abs(qmax) - abs(float(hi) / scale)
    zero_point = zp_from_min if err_min < err_max else zp_from_max
    if lo < 0 < hi and preserve_sparsity:
        zero_point = (qmin + qmax) / 2
    nudged = qmin if zero_point < qmin else qmax if zero_point > qmax else int(np.rint(zero_point))
    return float(f32(scale)), nudged


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """Moving-average observation, the backend's qparams and fake quantization in one module (its switches are
    int64 buffers, as PyTorch's are)."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min: int = 0, quant_max: int = 255,
                 **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", factories.tensor([1], dtype=_dt.int64))
        self.register_buffer("observer_enabled", factories.tensor([1], dtype=_dt.int64))
        self.is_symmetric_quant = self.activation_post_process.qscheme in q.SYMMETRIC

    def forward(self, X):
        obs = self.activation_post_process
        if int(self.observer_enabled[0]) == 1:
            obs(X.detach())
            lows = obs.min_val.reshape(-1).numpy()
            highs = obs.max_val.reshape(-1).numpy()
            pairs = [choose_qparams(lo, hi, obs.quant_min, obs.quant_max, self.is_symmetric_quant)
                     for lo, hi in zip(lows, highs)]
            self._store_qparams(factories.tensor([p[0] for p in pairs], dtype=_dt.float32),
                                factories.tensor([p[1] for p in pairs], dtype=_dt.int32))
        if int(self.fake_quant_enabled[0]) == 1:
            if self.is_per_channel:
                return api.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                            obs.quant_min, obs.quant_max)
            return api.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, obs.quant_min,
                                                       obs.quant_max)
        return X

    def extra_repr(self) -> str:
        obs = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, quant_min={obs.quant_min}, "
                f"quant_max={obs.quant_max}, qscheme={self.qscheme}, reduce_range={obs.reduce_range}")


default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=q.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=q.qint8,
    qscheme=q.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=q.qint8,
    qscheme=q.per_channel_symmetric)
fused_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-127, quant_max=127, dtype=q.qint8,
    qscheme=q.per_tensor_symmetric, eps=2 ** -12)
fused_per_channel_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-127, quant_max=127, dtype=q.qint8,
    qscheme=q.per_channel_symmetric, eps=2 ** -12)
