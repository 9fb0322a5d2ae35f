"""``MovingAveragePerChannelMinMaxObserver``: per-channel minima and maxima kept as moving averages, as
``torch.ao.quantization`` defines it (the weight observer of per-channel quantization-aware training, where an
``averaging_constant`` of 1 makes it see only the current weights)."""

from __future__ import annotations

from ...ops import api
from . import _qtypes as q
from ._qtypes import per_channel_affine, quint8
from .observer import _FLOAT32_EPS, PerChannelMinMaxObserver


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Each channel's ``m += averaging_constant * (batch_min - m)`` (the first batch sets them), and likewise
    for the maxima."""

    def __init__(self, averaging_constant: float = 0.01, ch_axis: int = 0, dtype=quint8,
                 qscheme=per_channel_affine, reduce_range: bool = False, quant_min=None, quant_max=None,
                 eps: float = _FLOAT32_EPS, is_dynamic: bool = False, **kwargs):
        if qscheme not in q.PER_CHANNEL:
            raise NotImplementedError(
                "MovingAveragePerChannelMinMaxObserver's qscheme only support toolkit.per_channel_symmetric, "
                "toolkit.per_channel_affine and toolkit.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        y = api.movedim(x_orig.detach(), self.ch_axis, 0).to(self.min_val.dtype).flatten(1)
        cur_min, cur_max = api.aminmax(y, dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = cur_min, cur_max
        else:
            min_val = self.min_val + self.averaging_constant * (cur_min - self.min_val)
            max_val = self.max_val + self.averaging_constant * (cur_max - self.max_val)
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig
