"""The default qconfig dicts (``get_default_qconfig_dict``, ``get_default_qat_qconfig_dict``): PyTorch's older,
dict form of its default ``QConfigMapping``: a global qconfig, and per object type (module class, function or
method name) the exceptions: per-tensor weights for transposed convolutions on x86/fbgemm, float weights for
layer norm, fixed-range observers for sigmoid/tanh-like ops. Deprecated in PyTorch (a ``FutureWarning``), kept
for code that still calls them::

    qconfig_dict = get_default_qconfig_dict("x86")
    qconfig_dict[""]            # the global qconfig
"""

from __future__ import annotations

import warnings

from ... import conv_transpose1d, conv_transpose2d, conv_transpose3d, nn, sigmoid, tanh
from ...nn import functional as F
from .fake_quantize import default_weight_fake_quant
from .fixed_qparams import (
    FixedQParamsFakeQuantize,
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer,
)
from .observer import default_weight_observer
from .placeholder_observers import default_placeholder_observer
from .qconfig import (
    QConfig,
    default_quint8_weight_qconfig,
    default_reuse_input_qconfig,
    get_default_qat_qconfig,
    get_default_qconfig,
)

__all__ = ["get_default_qconfig_dict", "get_default_qat_qconfig_dict"]

_DEPRECATED = ("`toolkit.ao.quantization.{name}` is deprecated, as PyTorch deprecates it (in favour of its FX-mode "
               "QConfigMapping), and will be removed in a future version.")

_FIXED_QPARAMS_OP_TO_OBSERVER = {
    nn.Hardsigmoid: default_fixed_qparams_range_0to1_observer,
    F.hardsigmoid: default_fixed_qparams_range_0to1_observer,
    "hardsigmoid": default_fixed_qparams_range_0to1_observer,
    "hardsigmoid_": default_fixed_qparams_range_0to1_observer,
    nn.Sigmoid: default_fixed_qparams_range_0to1_observer,
    sigmoid: default_fixed_qparams_range_0to1_observer,
    "sigmoid": default_fixed_qparams_range_0to1_observer,
    "sigmoid_": default_fixed_qparams_range_0to1_observer,
    nn.Softmax: default_fixed_qparams_range_0to1_observer,
    nn.Tanh: default_fixed_qparams_range_neg1to1_observer,
    tanh: default_fixed_qparams_range_neg1to1_observer,
    "tanh": default_fixed_qparams_range_neg1to1_observer,
    "tanh_": default_fixed_qparams_range_neg1to1_observer,
}


def _default_qconfig_dict(is_qat: bool, backend: str, version: int) -> dict:
    qconfig = get_default_qat_qconfig(backend, version) if is_qat else get_default_qconfig(backend, version)
    default_weight = default_weight_fake_quant if is_qat else default_weight_observer
    # per-channel weights do not suit the x86/fbgemm transposed convolutions: per tensor there
    transpose = (QConfig(activation=qconfig.activation, weight=default_weight) if backend in ("fbgemm", "x86")
                 else qconfig)
    layernorm = QConfig(activation=qconfig.activation, weight=default_placeholder_observer)  # float weights
    object_types = [
        ("reshape", default_reuse_input_qconfig),
        (nn.ConvTranspose1d, transpose), (nn.ConvTranspose2d, transpose), (nn.ConvTranspose3d, transpose),
        (conv_transpose1d, transpose), (conv_transpose2d, transpose), (conv_transpose3d, transpose),
        (F.layer_norm, layernorm), (nn.LayerNorm, layernorm), (nn.PReLU, default_quint8_weight_qconfig),
    ]
    fixed_qconfigs: dict = {}
    for op, observer in _FIXED_QPARAMS_OP_TO_OBSERVER.items():
        if observer not in fixed_qconfigs:
            activation = FixedQParamsFakeQuantize.with_args(observer=observer) if is_qat else observer
            fixed_qconfigs[observer] = QConfig(activation=activation, weight=default_weight)
        object_types.append((op, fixed_qconfigs[observer]))
    return {"": qconfig, "object_type": object_types, "module_name_regex": [], "module_name": [],
            "module_name_object_type_order": []}


def get_default_qconfig_dict(backend: str = "x86", version: int = 0) -> dict:
    """The default post-training qconfig dict for ``backend`` (deprecated, as in PyTorch)."""
    warnings.warn(_DEPRECATED.format(name="get_default_qconfig_dict"), FutureWarning, stacklevel=2)
    return _default_qconfig_dict(False, backend, version)


def get_default_qat_qconfig_dict(backend: str = "x86", version: int = 1) -> dict:
    """The default quantization-aware-training qconfig dict for ``backend`` (deprecated, as in PyTorch)."""
    warnings.warn(_DEPRECATED.format(name="get_default_qat_qconfig_dict"), FutureWarning, stacklevel=2)
    return _default_qconfig_dict(True, backend, version)
