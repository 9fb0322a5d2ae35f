"""``toolkit.ao.quantization``: observers and fake quantization for quantization-aware training, the
qconfigs, and the eager-mode workflow (fuse_modules, prepare, convert, quantize, quantize_dynamic, prepare_qat),
as ``torch.ao.quantization`` names them."""

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
from .fake_quantize import (  # noqa: F401  # noqa: F401
    FakeQuantize,
    FakeQuantizeBase,
    default_dynamic_fake_quant,
    default_fake_quant,
    default_histogram_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
)
from .fixed_qparams import (  # noqa: F401
    FixedQParamsFakeQuantize,
    FixedQParamsObserver,
    default_fixed_qparams_range_0to1_fake_quant,
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_fake_quant,
    default_fixed_qparams_range_neg1to1_observer,
)
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat  # noqa: F401
from .fused_fake_quantize import (  # noqa: F401
    FusedMovingAvgObsFakeQuantize,
    default_fused_act_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
)
from .fuser_method_mappings import get_fuser_method  # noqa: F401
from .histogram_observer import HistogramObserver, default_histogram_observer  # noqa: F401
from .moving_average_observers import MovingAveragePerChannelMinMaxObserver  # noqa: F401
from .observer import (  # noqa: F401  # noqa: F401
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    UniformQuantizationObserverBase,
    default_float_qparams_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
    per_channel_weight_observer_range_neg_127_to_127,
    weight_observer_range_neg_127_to_127,
)
from .placeholder_observers import (  # noqa: F401
    NoopObserver,
    PlaceholderObserver,
    RecordingObserver,
    ReuseInputObserver,
    default_debug_observer,
    default_dynamic_quant_observer,
    default_placeholder_observer,
    default_reuse_input_observer,
)
from .qconfig import *  # noqa: F401, F403
from .qconfig import __all__ as _qconfig_all
from .quantization_mappings import *  # noqa: F401, F403
from .quantization_mappings import __all__ as _mappings_all
from .quantize import *  # noqa: F401, F403
from .quantize import __all__ as _quantize_all
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401

__all__ = [
    "FakeQuantize", "FakeQuantizeBase", "MinMaxObserver", "MovingAverageMinMaxObserver", "ObserverBase",
    "PerChannelMinMaxObserver", "UniformQuantizationObserverBase", "default_fake_quant", "default_observer",
    "default_per_channel_weight_observer", "default_weight_fake_quant", "default_weight_observer",
] + [
    "DeQuantStub", "FixedQParamsFakeQuantize", "FixedQParamsObserver", "FusedMovingAvgObsFakeQuantize",
    "HistogramObserver", "MovingAveragePerChannelMinMaxObserver", "NoopObserver", "PlaceholderObserver",
    "QuantStub", "QuantWrapper", "RecordingObserver", "ReuseInputObserver", "default_debug_observer",
    "default_dynamic_fake_quant", "default_dynamic_quant_observer", "default_fixed_qparams_range_0to1_fake_quant",
    "default_fixed_qparams_range_0to1_observer", "default_fixed_qparams_range_neg1to1_fake_quant",
    "default_fixed_qparams_range_neg1to1_observer", "default_float_qparams_observer",
    "default_fused_act_fake_quant", "default_fused_per_channel_wt_fake_quant", "default_fused_wt_fake_quant",
    "default_histogram_fake_quant", "default_histogram_observer", "default_per_channel_weight_fake_quant",
    "default_placeholder_observer", "default_reuse_input_observer", "fuse_known_modules", "fuse_modules",
    "fuse_modules_qat", "get_fuser_method", "per_channel_weight_observer_range_neg_127_to_127",
    "weight_observer_range_neg_127_to_127",
] + _qconfig_all + _mappings_all + _quantize_all
