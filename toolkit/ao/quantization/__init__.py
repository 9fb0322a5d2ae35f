"""``toolkit.ao.quantization``: observers and fake quantization for quantization-aware training, as
``torch.ao.quantization`` names them (``HistogramObserver`` is not here yet)."""

from ._qtypes import (  # noqa: F401
    per_channel_affine,
    per_channel_affine_float_qparams,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qint8,
    qint32,
    quint8,
)
from .fake_quantize import (  # noqa: F401
    FakeQuantize,
    FakeQuantizeBase,
    default_fake_quant,
    default_weight_fake_quant,
)
from .observer import (  # noqa: F401
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    UniformQuantizationObserverBase,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)

__all__ = [
    "FakeQuantize", "FakeQuantizeBase", "MinMaxObserver", "MovingAverageMinMaxObserver", "ObserverBase",
    "PerChannelMinMaxObserver", "UniformQuantizationObserverBase", "default_fake_quant", "default_observer",
    "default_per_channel_weight_observer", "default_weight_fake_quant", "default_weight_observer",
]
