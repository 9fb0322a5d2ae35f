"""``QConfig``: which observer (or fake-quantize module) a layer's activations and weights get, as a pair of
constructors, and the configurations ``torch.ao.quantization`` names for each backend.

For the x86 and fbgemm backends activations are observed with a histogram over a range reduced by one bit (their
int8 kernels accumulate in 16 bits without overflow that way) and weights per channel, symmetric, as int8::

    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)
"""

from __future__ import annotations

import warnings
from collections import namedtuple

from ..._core import dtypes as _dt
from ...nn import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, Identity, Module
from . import _qtypes as q
from ._siblings import sibling_getattr
from .fake_quantize import (
    FakeQuantize,
    FakeQuantizeBase,
    default_dynamic_fake_quant,
    default_embedding_fake_quant,
    default_embedding_fake_quant_4bit,
    default_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
)
from .fused_fake_quantize import (
    FusedMovingAvgObsFakeQuantize,
    default_fused_act_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
    fused_per_channel_wt_fake_quant_range_neg_127_to_127,
    fused_wt_fake_quant_range_neg_127_to_127,
)
from .histogram_observer import HistogramObserver
from .observer import (
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    PerChannelMinMaxObserver,
    _PartialWrapper,
    default_float_qparams_observer,
    default_float_qparams_observer_4bit,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
    per_channel_weight_observer_range_neg_127_to_127,
    weight_observer_range_neg_127_to_127,
)
from .placeholder_observers import (
    NoopObserver,
    PlaceholderObserver,
    default_debug_observer,
    default_dynamic_quant_observer,
    default_placeholder_observer,
    default_reuse_input_observer,
)

_BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """The observer constructors (classes or ``with_args`` factories, never instances: each layer gets its
    own) for a layer's output activations and its weights."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """The older name for a dynamic quantization configuration (``QConfig`` serves both now)."""

    __slots__ = ()

    def __new__(cls, activation=Identity, weight=Identity):
        warnings.warn("`QConfigDynamic` is going to be deprecated in PyTorch 1.12, please use `QConfig` instead",
                      FutureWarning, stacklevel=2)
        if isinstance(weight, Module):
            raise ValueError("QConfigDynamic received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(weight=default_weight_observer, activation=default_debug_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=_dt.float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=_dt.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=_dt.float16),
                                 weight=PlaceholderObserver.with_args(dtype=_dt.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
float_qparams_weight_only_qconfig_4bit = QConfig(activation=default_placeholder_observer,
                                                 weight=default_float_qparams_observer_4bit)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(activation=default_dynamic_fake_quant, weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=Identity)
default_qat_qconfig_v2 = QConfig(activation=default_fused_act_fake_quant, weight=default_fused_wt_fake_quant)
default_reuse_input_qconfig = QConfig(activation=default_reuse_input_observer, weight=NoopObserver)
default_quint8_weight_qconfig = QConfig(activation=HistogramObserver, weight=MinMaxObserver)
default_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=q.qint8, reduce_range=False, eps=2 ** -12),
    weight=weight_observer_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=q.qint8, reduce_range=False, eps=2 ** -12),
    weight=per_channel_weight_observer_range_neg_127_to_127)
_symmetric_qat_activation = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=q.qint8, reduce_range=False,
    eps=2 ** -12)
default_symmetric_qnnpack_qat_qconfig = QConfig(activation=_symmetric_qat_activation,
                                                weight=fused_wt_fake_quant_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qat_qconfig = QConfig(activation=_symmetric_qat_activation,
                                                            weight=fused_per_channel_wt_fake_quant_range_neg_127_to_127)

default_embedding_qat_qconfig = QConfig(activation=NoopObserver.with_args(dtype=_dt.float32),
                                        weight=default_embedding_fake_quant)
default_embedding_qat_qconfig_4bit = QConfig(activation=NoopObserver.with_args(dtype=_dt.float32),
                                             weight=default_embedding_fake_quant_4bit)

# A module's qconfig: a QConfig, or None where it stays float.
QConfigAny = QConfig | None


def _check_backend(backend: str) -> None:
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of {_BACKENDS}")


def get_default_qconfig(backend: str = "x86", version: int = 0) -> QConfig:
    """The post-training qconfig PyTorch picks for ``backend``: a histogram observer for activations (range
    reduced by one bit on x86/fbgemm) and per-channel symmetric int8 weights (per-tensor on qnnpack)."""
    _check_backend(backend)
    if version != 0:
        raise AssertionError(f"Version number: {version} in get_default_qconfig is not supported. Version number "
                             "must be 0")
    reduce_range = backend in ("x86", "fbgemm")
    weight = default_weight_observer if backend == "qnnpack" else default_per_channel_weight_observer
    return QConfig(activation=HistogramObserver.with_args(reduce_range=reduce_range), weight=weight)


def get_default_qat_qconfig(backend: str = "x86", version: int = 1) -> QConfig:
    """The quantization-aware-training qconfig PyTorch picks for ``backend``: moving-average fake quantization of
    activations (range reduced on x86/fbgemm) and per-channel weights (per-tensor on qnnpack); version 1 uses the
    fused module, version 0 ``FakeQuantize``."""
    _check_backend(backend)
    per_tensor_weights = backend == "qnnpack"
    if version == 0:
        activation = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            **({} if backend == "onednn" else
                                               {"reduce_range": backend in ("x86", "fbgemm")}))
        weight = default_weight_fake_quant if per_tensor_weights else default_per_channel_weight_fake_quant
    elif version == 1:
        activation = FusedMovingAvgObsFakeQuantize.with_args(
            observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
            **({} if backend == "onednn" else {"reduce_range": backend in ("x86", "fbgemm")}))
        weight = default_fused_wt_fake_quant if per_tensor_weights else default_fused_per_channel_wt_fake_quant
    else:
        raise AssertionError(f"Version number: {version}in get_default_qat_qconfig is not supported. Version "
                             "number must be 0 or 1")
    return QConfig(activation=activation, weight=weight)


def _assert_valid_qconfig(qconfig, mod: Module) -> None:
    """Per-channel weight observers are refused for transposed convolutions, as PyTorch refuses them."""
    if qconfig is None or qconfig.weight is None:
        return
    if isinstance(mod, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) and \
            isinstance(qconfig.weight(), PerChannelMinMaxObserver):
        raise AssertionError("Per channel weight observer is not supported yet for ConvTranspose{n}d.")


def _activation_is_memoryless(qconfig: QConfig) -> bool:
    """Whether the activation observer forgets each batch (a moving average with constant 1): its observer then
    watches the module's input, in a pre-hook, as PyTorch places it."""
    act = qconfig.activation()
    if isinstance(act, FakeQuantizeBase) and hasattr(act, "activation_post_process"):
        act = act.activation_post_process
    return getattr(act, "averaging_constant", None) == 1


def _obs_or_fq_ctr_equals(a, b) -> bool:
    if isinstance(a, _PartialWrapper) and isinstance(b, _PartialWrapper):
        ka, kb = dict(a.p.keywords), dict(b.p.keywords)
        same = True
        if "observer" in ka and "observer" in kb:
            same = _obs_or_fq_ctr_equals(ka.pop("observer"), kb.pop("observer"))
        return same and ka == kb and a.p.func == b.p.func and a.p.args == b.p.args
    return a == b


def qconfig_equals(q1, q2) -> bool:
    """Whether two qconfigs build the same observers (``with_args`` factories compared by their arguments)."""
    if q1 is None or q2 is None:
        return q1 == q2
    try:
        return _obs_or_fq_ctr_equals(q1.activation, q2.activation) and _obs_or_fq_ctr_equals(q1.weight, q2.weight)
    except AttributeError:
        return q1 == q2


# the default qconfig dicts are built from this module's qconfigs, in a module of their own that imports this one
_SIBLING_NAMES = {"default_qconfig_dicts": ("get_default_qconfig_dict", "get_default_qat_qconfig_dict")}
__getattr__ = sibling_getattr(__name__, _SIBLING_NAMES)

__all__ = [
    "QConfig", "QConfigAny", "QConfigDynamic", "default_embedding_qat_qconfig", "default_embedding_qat_qconfig_4bit",
    "float_qparams_weight_only_qconfig_4bit", "default_activation_only_qconfig", "default_debug_qconfig",
    "default_dynamic_qat_qconfig", "default_dynamic_qconfig", "default_per_channel_qconfig",
    "default_per_channel_symmetric_qnnpack_qat_qconfig", "default_per_channel_symmetric_qnnpack_qconfig",
    "default_qat_qconfig", "default_qat_qconfig_v2", "default_qconfig", "default_quint8_weight_qconfig",
    "default_reuse_input_qconfig", "default_symmetric_qnnpack_qat_qconfig", "default_symmetric_qnnpack_qconfig",
    "default_weight_only_qconfig", "float16_dynamic_qconfig", "float16_static_qconfig",
    "float_qparams_weight_only_qconfig", "get_default_qat_qconfig", "get_default_qconfig",
    "per_channel_dynamic_qconfig", "qconfig_equals",
] + [name for names in _SIBLING_NAMES.values() for name in names]
