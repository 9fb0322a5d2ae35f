"""``toolkit.ao.quantization``: observers and fake quantization for quantization-aware training, the
qconfigs, and the eager-mode workflow (fuse_modules, prepare, convert, quantize, quantize_dynamic, prepare_qat),
as ``torch.ao.quantization`` names them, with its submodules (``observer``, ``fake_quantize``, ``qconfig``,
``quantize``, ``fuser_method_mappings``, ``quantization_mappings``, ``stubs``, ``fuse_modules``, ``quant_type``,
``utils``) offering the same names at the same paths.

Out of scope, and so absent (the test of names lists them):

- FX and PT2E graph-mode quantization (``QConfigMapping``, ``qconfig_mapping``, ``get_default_qconfig_mapping``,
  ``get_default_qat_qconfig_mapping``, ``quantize_fx``, ``fx``, ``backend_config``...): they rewrite
  ``torch.fx`` graphs, which toolkit does not have.
- The TorchScript workflow (``quantize_jit``, ``prepare_jit``, ``convert_jit``, their dynamic forms,
  ``fuse_conv_bn_jit``, ``script_qconfig``, ``script_qconfig_dict``): it runs passes over scripted graphs that
  PyTorch's JIT implements in C++; toolkit's JIT has no quantization passes.
- The torchao affine-quantization names (``AffineQuantizedObserverBase``, ``Granularity``, ``PerAxis``,
  ``PerBlock``, ``PerGroup``, ``PerRow``, ``PerTensor``, ``PerToken``, ``MappingType``, ``ZeroPointDomain``,
  ``TorchAODType``, ``get_block_size``): PyTorch keeps them only as a bridge to torchao's own API.
- Mappings to modules toolkit lacks (reference, sparse and QAT embedding modules); see
  :mod:`.quantization_mappings`.

The ``DEFAULT_*_MODULE_MAPPINGS`` constants name the quantized modules, whose packages load after this one, so
they are built on first access (module ``__getattr__``).
"""

from . import quant_type, quantization_mappings, utils  # noqa: F401  (submodules, as torch.ao.quantization has them)
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
    default_dynamic_fake_quant,
    default_embedding_fake_quant,
    default_embedding_fake_quant_4bit,
    default_fake_quant,
    default_histogram_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
    disable_fake_quant,
    disable_observer,
    enable_fake_quant,
    enable_observer,
)
from .fixed_qparams import (  # noqa: F401
    FixedQParamsFakeQuantize,
    FixedQParamsObserver,
    default_affine_fixed_qparams_fake_quant,
    default_affine_fixed_qparams_observer,
    default_fixed_qparams_range_0to1_fake_quant,
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_fake_quant,
    default_fixed_qparams_range_neg1to1_observer,
    default_symmetric_fixed_qparams_fake_quant,
    default_symmetric_fixed_qparams_observer,
)
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat  # noqa: F401
from .fused_fake_quantize import (  # noqa: F401
    FusedMovingAvgObsFakeQuantize,
    default_fused_act_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
    fused_per_channel_wt_fake_quant_range_neg_127_to_127,
    fused_wt_fake_quant_range_neg_127_to_127,
)
from .fuser_method_mappings import *  # noqa: F401, F403
from .fuser_method_mappings import __all__ as _fuser_all
from .histogram_observer import HistogramObserver, default_histogram_observer  # noqa: F401
from .moving_average_observers import MovingAveragePerChannelMinMaxObserver  # noqa: F401
from .observer import (  # noqa: F401
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    UniformQuantizationObserverBase,
    default_float_qparams_observer,
    default_float_qparams_observer_4bit,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
    per_channel_weight_observer_range_neg_127_to_127,
    weight_observer_range_neg_127_to_127,
)
from .observer_state import get_observer_state_dict, load_observer_state_dict  # noqa: F401
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
from .quant_type import QuantType  # noqa: F401
from .quantization_mappings import (  # noqa: F401
    DEFAULT_MODULE_TO_ACT_POST_PROCESS,
    DEFAULT_QAT_MODULE_MAPPINGS,
    get_default_compare_output_module_list,
    get_default_dynamic_quant_module_mappings,
    get_default_float_to_quantized_operator_mappings,
    get_default_qat_module_mappings,
    get_default_qconfig_propagation_list,
    get_default_static_quant_module_mappings,
    get_dynamic_quant_module_class,
    get_quantized_operator,
    get_static_quant_module_class,
    no_observer_set,
)
from .quantize import *  # noqa: F401, F403
from .quantize import __all__ as _quantize_all
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401

# What ``activation_post_process`` may hold: an observer or a fake-quantize module.
ObserverOrFakeQuantize = ObserverBase | FakeQuantizeBase


def default_eval_fn(model, calib_data) -> None:
    """Calibrate ``model`` on ``calib_data``, an iterable of ``(input, target)`` pairs (targets ignored): the
    ``run_fn`` that ``quantize(model, default_eval_fn, [data])`` expects."""
    for data, _target in calib_data:
        model(data)


def __getattr__(name: str):
    if name in quantization_mappings.LAZY_NAMES:
        return getattr(quantization_mappings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DeQuantStub", "FakeQuantize", "FakeQuantizeBase", "FixedQParamsFakeQuantize", "FixedQParamsObserver",
    "FusedMovingAvgObsFakeQuantize", "HistogramObserver", "MinMaxObserver", "MovingAverageMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver", "NoopObserver", "ObserverBase", "ObserverOrFakeQuantize",
    "PerChannelMinMaxObserver", "PlaceholderObserver", "QuantStub", "QuantType", "QuantWrapper", "RecordingObserver",
    "ReuseInputObserver", "UniformQuantizationObserverBase", "default_affine_fixed_qparams_fake_quant",
    "default_affine_fixed_qparams_observer", "default_debug_observer", "default_dynamic_fake_quant",
    "default_dynamic_quant_observer", "default_embedding_fake_quant", "default_embedding_fake_quant_4bit",
    "default_eval_fn", "default_fake_quant", "default_fixed_qparams_range_0to1_fake_quant",
    "default_fixed_qparams_range_0to1_observer", "default_fixed_qparams_range_neg1to1_fake_quant",
    "default_fixed_qparams_range_neg1to1_observer", "default_float_qparams_observer",
    "default_float_qparams_observer_4bit", "default_fused_act_fake_quant", "default_fused_per_channel_wt_fake_quant",
    "default_fused_wt_fake_quant", "default_histogram_fake_quant", "default_histogram_observer",
    "default_observer", "default_per_channel_weight_fake_quant", "default_per_channel_weight_observer",
    "default_placeholder_observer", "default_reuse_input_observer", "default_symmetric_fixed_qparams_fake_quant",
    "default_symmetric_fixed_qparams_observer", "default_weight_fake_quant", "default_weight_observer",
    "disable_fake_quant", "disable_observer", "enable_fake_quant", "enable_observer", "fuse_known_modules",
    "fuse_modules", "fuse_modules_qat", "fused_per_channel_wt_fake_quant_range_neg_127_to_127",
    "fused_wt_fake_quant_range_neg_127_to_127", "get_default_compare_output_module_list",
    "get_default_dynamic_quant_module_mappings", "get_default_float_to_quantized_operator_mappings",
    "get_default_qat_module_mappings", "get_default_qconfig_propagation_list",
    "get_default_static_quant_module_mappings", "get_dynamic_quant_module_class", "get_observer_state_dict",
    "get_quantized_operator", "get_static_quant_module_class", "load_observer_state_dict", "no_observer_set",
    "per_channel_weight_observer_range_neg_127_to_127", "weight_observer_range_neg_127_to_127",
] + _fuser_all + _qconfig_all + _quantize_all
