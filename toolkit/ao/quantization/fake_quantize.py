"""``FakeQuantize``: an observer and fake quantization in one module, for quantization-aware training.

Each forward lets the observer see the input (while ``observer_enabled``), refreshes ``scale`` and
``zero_point`` from it, and returns the input fake-quantized with them (while ``fake_quant_enabled``):
``(clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale`` with the
straight-through gradient. The flags are uint8 buffers, as PyTorch keeps them, so state dicts match.

Example::

    >>> fq = default_fake_quant()
    >>> y = fq(toolkit.randn(4, 8))
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ... import factories
from ..._core import dtypes as _dt
from ...nn import Module
from ...ops import api
from . import _qtypes as q
from ._siblings import sibling_getattr
from .histogram_observer import HistogramObserver
from .moving_average_observers import MovingAveragePerChannelMinMaxObserver
from .observer import MovingAverageMinMaxObserver, _with_args, resize_to_saved


class FakeQuantizeBase(ABC, Module):
    """Base of fake-quantize modules: the two switches, as one-element uint8 buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fake_quant_enabled", factories.tensor([1], dtype=_dt.uint8))
        self.register_buffer("observer_enabled", factories.tensor([1], dtype=_dt.uint8))

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    def enable_fake_quant(self, enabled: bool = True) -> None:
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self) -> None:
        self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True) -> None:
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self) -> None:
        self.enable_observer(False)

    @classmethod
    def with_args(cls, **kwargs):
        return _with_args(cls, **kwargs)


def _observer_dtype(observer, observer_kwargs: dict):
    """The dtype the observer will be built with: a ``with_args`` binding wins over the keyword arguments."""
    dtype = observer_kwargs.get("dtype", q.quint8)
    return getattr(getattr(observer, "p", None), "keywords", {}).get("dtype", dtype)


class FakeQuantize(FakeQuantizeBase):
    """Observe, then fake-quantize with the observed parameters (per tensor or per channel)."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic: bool = False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            low, high = q.int_range(_observer_dtype(observer, observer_kwargs))
            if low > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > high:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        float_qparams = self.activation_post_process.qscheme is q.per_channel_affine_float_qparams
        self.register_buffer("scale", factories.tensor([1.0], dtype=_dt.float32))
        self.register_buffer("zero_point", factories.tensor([0], dtype=_dt.float32 if float_qparams else _dt.int32))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        if self.qscheme not in q.PER_TENSOR + q.PER_CHANNEL:
            raise AssertionError("Only per channel and per tensor quantization are supported in fake quantize "
                                 f"got qscheme: {self.qscheme}")
        self.is_per_channel = self.qscheme in q.PER_CHANNEL

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if int(self.observer_enabled[0]) == 1:
            self.activation_post_process(X.detach())
            self._store_qparams(*self.calculate_qparams())
        if int(self.fake_quant_enabled[0]) == 1:
            qmin, qmax = self.activation_post_process.quant_min, self.activation_post_process.quant_max
            if self.is_per_channel:
                X = api.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis, qmin, qmax)
            else:
                X = api.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, qmin, qmax)
        return X

    def _store_qparams(self, scale, zero_point) -> None:
        """Copy new parameters into the ``scale``/``zero_point`` buffers (resized when per-channel)."""
        if tuple(self.scale.shape) != tuple(scale.shape):
            self.scale.resize_(scale.shape)
            self.zero_point.resize_(zero_point.shape)
        self.scale.copy_(scale)
        self.zero_point.copy_(zero_point)

    def extra_repr(self) -> str:
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={self.activation_post_process.quant_min}, "
                f"quant_max={self.activation_post_process.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # per-channel parameters may have more elements than the one-element buffers they load into
        resize_to_saved(self, state_dict, prefix, ("scale", "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=q.quint8, qscheme=q.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=q.qint8, qscheme=q.per_tensor_symmetric,
                                                   reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=q.qint8,
    qscheme=q.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_dynamic_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                                    is_dynamic=True, dtype=q.quint8, averaging_constant=1)
default_histogram_fake_quant = FakeQuantize.with_args(observer=HistogramObserver, quant_min=0, quant_max=255,
                                                      dtype=q.quint8, qscheme=q.per_tensor_affine, reduce_range=True)
default_embedding_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, qscheme=q.per_channel_affine_float_qparams, dtype=q.quint8,
    quant_min=0, quant_max=255, ch_axis=0, averaging_constant=1)
default_embedding_fake_quant_4bit = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, qscheme=q.per_channel_affine_float_qparams, ch_axis=0,
    dtype=q.quint4x2, averaging_constant=1)


def disable_fake_quant(mod) -> None:
    """Let ``mod`` pass its input through unquantized, if it is a fake-quantize module; for ``model.apply``::

        model.apply(toolkit.ao.quantization.disable_fake_quant)
    """
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod) -> None:
    """Fake-quantize ``mod``'s output again, if it is a fake-quantize module (``model.apply(enable_fake_quant)``)."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod) -> None:
    """Freeze ``mod``'s observed range (and so its scale and zero point), if it is a fake-quantize module; QAT
    recipes do this for the last epochs: ``model.apply(disable_observer)``."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod) -> None:
    """Let ``mod`` observe its inputs again, if it is a fake-quantize module (``model.apply(enable_observer)``)."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()


# PyTorch's fake_quantize module also names the fake quantizers that live in sibling modules here; those modules
# import this one, so the names are looked up on first use instead of imported at the top.
_SIBLING_NAMES = {
    "fixed_qparams": ("FixedQParamsFakeQuantize", "default_fixed_qparams_range_neg1to1_fake_quant",
                      "default_fixed_qparams_range_0to1_fake_quant", "default_symmetric_fixed_qparams_fake_quant",
                      "default_affine_fixed_qparams_fake_quant"),
    "fused_fake_quantize": ("FusedMovingAvgObsFakeQuantize", "default_fused_act_fake_quant",
                            "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
                            "fused_wt_fake_quant_range_neg_127_to_127",
                            "fused_per_channel_wt_fake_quant_range_neg_127_to_127"),
}


__getattr__ = sibling_getattr(__name__, _SIBLING_NAMES)


__all__ = [
    "FakeQuantizeBase", "FakeQuantize", "disable_fake_quant", "disable_observer", "enable_fake_quant",
    "enable_observer", "default_fake_quant", "default_weight_fake_quant", "default_dynamic_fake_quant",
    "default_per_channel_weight_fake_quant", "default_embedding_fake_quant", "default_embedding_fake_quant_4bit",
    "default_histogram_fake_quant",
] + [name for names in _SIBLING_NAMES.values() for name in names]
