"""Observers: modules that watch the tensors flowing through them and choose quantization parameters.

An observer's ``forward`` records statistics (running min and max, per tensor or per channel) and returns its
input unchanged; ``calculate_qparams()`` turns them into ``(scale, zero_point)`` tensors with PyTorch's
arithmetic and dtypes (float32 scales; int32 zero points for affine schemes, int64 for symmetric ones), so a
model calibrated here quantizes to the same integers as under ``torch.ao.quantization``.

Example::

    >>> obs = MinMaxObserver(dtype=qint8)
    >>> obs(toolkit.tensor([-1.0, 3.0]))
    >>> obs.calculate_qparams()
    (tensor([0.0157]), tensor([-64], dtype=toolkit.int32))
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from functools import partial

from ... import factories
from ..._core import dtypes as _dt
from ...nn import Module
from ...ops import api
from . import _qtypes as q
from ._qtypes import per_channel_affine, per_tensor_affine, quint8
from ._siblings import sibling_getattr

_FLOAT32_EPS = 1.1920928955078125e-07  # finfo(float32).eps


class _PartialWrapper:
    """A constructor with some arguments bound (``Observer.with_args(...)``); calling it builds a new module."""

    def __init__(self, p: partial):
        self.p = p
        self.callable_args: dict = {}

    def __call__(self, *args, **keywords):
        for name, make in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: make()}
        return self.p(*args, **keywords)

    def __repr__(self) -> str:
        return repr(self.p) + repr(self.callable_args)

    def with_args(self, **kwargs) -> _PartialWrapper:
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs) -> _PartialWrapper:
        result = _PartialWrapper(self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs) -> _PartialWrapper:
    """A factory that builds ``cls_or_self(**kwargs)``: a fresh instance each call, the arguments shared."""
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs) -> _PartialWrapper:
    """A factory whose arguments are computed (each ``kwargs`` value called) every time it builds."""
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


class ObserverBase(ABC, Module):
    """Base of observers: ``forward`` records statistics, ``calculate_qparams`` derives parameters."""

    def __init__(self, dtype, is_dynamic: bool = False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


def validate_qmin_qmax(quant_min: int, quant_max: int) -> None:
    """A user-given range must contain 0 and have more than one value."""
    if not quant_min <= 0 <= quant_max:
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange: bool, dtype, reduce_range: bool):
    """The range an observer quantizes to: the user's (halved by ``reduce_range``) or the dtype's 8-bit one."""
    name = q.name_of(dtype)
    if has_customized_qrange:
        length = quant_max - quant_min + 1
        if name in ("qint8", "int8") and not 0 < length <= 256:
            raise AssertionError("quantization range should be positive and not exceed the maximum bit range (=256).")
        if name in ("qint32", "int32") and not 0 < length <= 2 ** 32:
            raise AssertionError(
                "quantization range should be positive and not exceed the maximum bit range (=4294967296).")
        return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
    if name in ("qint8", "int8"):
        return (-64, 63) if reduce_range else (-128, 127)
    if name in ("quint8", "uint8"):
        return (0, 127) if reduce_range else (0, 255)
    if name in ("qint32", "int32", "int16", "uint16"):
        return q.int_range(dtype)
    return 0, 15


def _warn_not_run() -> None:
    warnings.warn("must run observer before calling calculate_qparams. Returning default values.", stacklevel=3)


def check_min_max_valid(min_val, max_val) -> bool:
    """False (with PyTorch's warning) before any data was seen; raises when a min exceeds its max."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        _warn_not_run()
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            _warn_not_run()
            return False
        if float(min_val) > float(max_val):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif bool((min_val > max_val).any()):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


class UniformQuantizationObserverBase(ObserverBase):
    """Shared by observers that quantize to a uniform grid: the scheme, the integer range and the qparams rule."""

    _version = 3

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range: bool = False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps: float = _FLOAT32_EPS, is_dynamic: bool = False,
                 **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn(
                "Please use quant_min and quant_max to specify the range for observers. "
                "reduce_range will be deprecated in a future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", factories.tensor([eps], **(factory_kwargs or {})))
        if qscheme not in q.PER_TENSOR + q.PER_CHANNEL:
            raise AssertionError(
                "Default Observer only works for per_tensor_affine, per_tensor_symmetric, per_channel_affine, "
                "per_channel_symmetric and per_channel_float_qparams quantization scheme")
        if not q.allowed(dtype):
            raise AssertionError(f"Default Observer only works for {tuple(q._RANGES)} data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """``(scale, zero_point)`` from min/max values per tensor (0-dim) or per channel (1-D)."""
        if not check_min_max_valid(min_val, max_val):
            return factories.tensor([1.0]), factories.tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = api.minimum(min_val, api.zeros_like(min_val))
        max_val_pos = api.maximum(max_val, api.zeros_like(max_val))
        zero_point = api.zeros(tuple(min_val_neg.shape), dtype=_dt.int64)
        if self.qscheme in q.SYMMETRIC:
            max_val_pos = api.maximum(-min_val_neg, max_val_pos)
            scale = api.maximum(max_val_pos / (float(quant_max - quant_min) / 2), self.eps)
            if q.name_of(self.dtype) in ("quint8", "uint8"):
                mid = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = api.full_like(zero_point, mid)
            elif q.name_of(self.dtype) == "uint16":
                zero_point = api.full_like(zero_point, 2 ** 15)
        elif self.qscheme is q.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = api.where(scale > self.eps, scale, api.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = api.maximum((max_val_pos - min_val_neg) / float(quant_max - quant_min), self.eps)
            zero_point = quant_min - api.round(min_val_neg / scale).to(_dt.int32)
            zero_point = api.clamp(zero_point, quant_min, quant_max)
        if scale.dim() == 0:
            scale = factories.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            cast = float if zero_point.dtype.is_floating_point else int
            zero_point = factories.tensor([cast(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


def resize_to_saved(module: Module, state_dict, prefix: str, names) -> None:
    """Give ``module``'s buffers ``names`` the shapes of their saved values, so loading can copy into them."""
    for name in names:
        if prefix + name in state_dict:
            getattr(module, name).resize_(state_dict[prefix + name].shape)


def _refuse_reduced_symmetric_quint8(observer) -> None:
    if observer.qscheme in q.SYMMETRIC and observer.reduce_range and observer.dtype is quint8:
        raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")


class MinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of every tensor seen; per-tensor affine or symmetric parameters."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range: bool = False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps: float = _FLOAT32_EPS, is_dynamic: bool = False,
                 **kwargs):
        if qscheme not in q.PER_TENSOR:
            raise NotImplementedError(
                "MinMaxObserver's qscheme only support toolkit.per_tensor_symmetric and toolkit.per_tensor_affine.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", factories.tensor(float("inf"), **(factory_kwargs or {})))
        self.register_buffer("max_val", factories.tensor(float("-inf"), **(factory_kwargs or {})))
        _refuse_reduced_symmetric_quint8(self)

    def _batch_min_max(self, x_orig):
        return api.aminmax(x_orig.detach().to(self.min_val.dtype))

    def forward(self, x_orig):
        """Record the running min and max of ``x_orig``; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        cur_min, cur_max = self._batch_min_max(x_orig)
        self.min_val.copy_(api.minimum(cur_min, self.min_val))
        self.max_val.copy_(api.maximum(cur_max, self.max_val))
        return x_orig

    def calculate_qparams(self):
        """``(scale, zero_point)``, one-element tensors."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self) -> None:
        """Forget what was seen."""
        self.min_val.fill_(float("inf"))
        self.max_val.fill_(float("-inf"))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Moving averages of each batch's min and max: ``m += averaging_constant * (batch_min - m)``."""

    def __init__(self, averaging_constant: float = 0.01, dtype=quint8, qscheme=per_tensor_affine,
                 reduce_range: bool = False, quant_min=None, quant_max=None, eps: float = _FLOAT32_EPS,
                 is_dynamic: bool = False, **kwargs):
        if qscheme not in q.PER_TENSOR:
            raise NotImplementedError(
                "MovingAverageMinMaxObserver's qscheme only support toolkit.per_tensor_symmetric and "
                f"toolkit.per_tensor_affine. but got: {qscheme}")
        self.averaging_constant = averaging_constant
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic quantization for "
                                      f"averaging constant of {averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        """Update the moving min and max (the first batch sets them); return ``x_orig`` unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        min_val, max_val = self.min_val, self.max_val
        cur_min, cur_max = self._batch_min_max(x_orig)
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            min_val, max_val = cur_min, cur_max
        else:
            min_val = min_val + self.averaging_constant * (cur_min - min_val)
            max_val = max_val + self.averaging_constant * (cur_max - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Running min and max of each slice along ``ch_axis``; per-channel parameters (weights of conv/linear)."""

    def __init__(self, ch_axis: int = 0, dtype=quint8, qscheme=per_channel_affine, reduce_range: bool = False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps: float = _FLOAT32_EPS,
                 is_dynamic: bool = False, **kwargs):
        if qscheme not in q.PER_CHANNEL:
            raise NotImplementedError(
                "PerChannelMinMaxObserver's qscheme only support toolkit.per_channel_symmetric, "
                "toolkit.per_channel_affine and toolkit.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", factories.tensor([], **(factory_kwargs or {})))
        self.register_buffer("max_val", factories.tensor([], **(factory_kwargs or {})))
        _refuse_reduced_symmetric_quint8(self)

    def forward(self, x_orig):
        """Record each channel's running min and max; return ``x_orig`` unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        y = api.movedim(x, self.ch_axis, 0).to(self.min_val.dtype).flatten(1)
        cur_min, cur_max = api.aminmax(y, dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = cur_min, cur_max
        else:
            min_val, max_val = api.minimum(cur_min, self.min_val), api.maximum(cur_max, self.max_val)
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig

    def calculate_qparams(self):
        """``(scales, zero_points)``, one per channel."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # the running values start empty: take the saved ones' shape before the copy
        resize_to_saved(self, state_dict, prefix, ("min_val", "max_val"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_min_max_vals(self) -> None:
        """Forget what was seen."""
        self.min_val = factories.tensor([], dtype=self.min_val.dtype)
        self.max_val = factories.tensor([], dtype=self.max_val.dtype)


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=q.qint8, qscheme=q.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=q.qint8,
                                                                         qscheme=q.per_channel_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(dtype=q.qint8, qscheme=q.per_tensor_symmetric,
                                                                quant_min=-127, quant_max=127, eps=2 ** -12)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=q.qint8, qscheme=q.per_channel_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=q.quint8, qscheme=q.per_channel_affine_float_qparams, ch_axis=0)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=q.quint4x2, qscheme=q.per_channel_affine_float_qparams, ch_axis=0)

# PyTorch's observer module also names the observers that live in sibling modules here (and the observer state
# helpers); those modules import this one, so the names are looked up on first use instead of imported at the top.
_SIBLING_NAMES = {
    "fixed_qparams": ("FixedQParamsObserver", "default_fixed_qparams_range_0to1_observer",
                      "default_fixed_qparams_range_neg1to1_observer", "default_affine_fixed_qparams_observer",
                      "default_symmetric_fixed_qparams_observer"),
    "histogram_observer": ("HistogramObserver", "default_histogram_observer"),
    "moving_average_observers": ("MovingAveragePerChannelMinMaxObserver",),
    "placeholder_observers": ("PlaceholderObserver", "NoopObserver", "RecordingObserver", "ReuseInputObserver",
                              "default_debug_observer", "default_dynamic_quant_observer",
                              "default_placeholder_observer", "default_reuse_input_observer"),
    "observer_state": ("get_observer_state_dict", "load_observer_state_dict"),
}

__getattr__ = sibling_getattr(__name__, _SIBLING_NAMES)

__all__ = [
    "default_float_qparams_observer", "default_float_qparams_observer_4bit", "default_observer",
    "default_per_channel_weight_observer", "default_weight_observer",
    "per_channel_weight_observer_range_neg_127_to_127", "weight_observer_range_neg_127_to_127", "MinMaxObserver",
    "MovingAverageMinMaxObserver", "ObserverBase", "PerChannelMinMaxObserver", "UniformQuantizationObserverBase",
] + [name for names in _SIBLING_NAMES.values() for name in names]
