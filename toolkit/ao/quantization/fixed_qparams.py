"""Fixed quantization parameters for ops whose output range is known in advance (sigmoid in ``[0, 1]``, tanh in
``[-1, 1]``): an observer that always answers the same scale and zero point, and the fake-quantize module built on
it, which quantization-aware training attaches to those modules instead of the qconfig's observer."""

from __future__ import annotations

from ... import factories
from ..._core import dtypes as _dt
from . import _qtypes as q
from .fake_quantize import FakeQuantize
from .observer import ObserverBase


class FixedQParamsObserver(ObserverBase):
    """Passes its input through; ``calculate_qparams`` gives the ``scale`` and ``zero_point`` it was built with."""

    def __init__(self, scale: float, zero_point: int, dtype=q.quint8, qscheme=q.per_tensor_affine,
                 quant_min: int = 0, quant_max: int = 255, is_dynamic: bool = False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.register_buffer("scale", factories.tensor([scale], dtype=_dt.float32))
        self.register_buffer("zero_point", factories.tensor([zero_point], dtype=_dt.int32))
        self.qscheme = qscheme

    def forward(self, X):
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake quantization with a ``FixedQParamsObserver``'s parameters (shared with it, never updated)."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        if type(self.activation_post_process) is not FixedQParamsObserver:
            raise AssertionError(f"{type(self).__name__}'s observer must be a {FixedQParamsObserver.__name__}")
        self._observer_ctr = observer
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point
        if self.qscheme not in q.PER_TENSOR:
            raise AssertionError("Only per tensor quantization is supported FixedQParamsFakeQuantize module, got "
                                 f"qscheme:{self.qscheme}")

    def calculate_qparams(self):
        return self.scale, self.zero_point


default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=q.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=q.quint8, quant_min=0, quant_max=255)
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
