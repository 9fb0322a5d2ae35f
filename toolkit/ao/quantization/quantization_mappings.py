"""Which module each float module becomes: ``convert``'s static, dynamic and QAT mappings, the modules that get a
qconfig in ``prepare``, and the fixed-range fake quantization of sigmoid/tanh-like modules, as
``torch.ao.quantization.quantization_mappings`` lists them.

The float side (``nn``, the fused ``nni`` and QAT modules) is known here; the quantized modules live in
``toolkit.ao.nn.quantized`` (and ``.dynamic``, ``toolkit.ao.nn.intrinsic.quantized``), which load after this
package, so each mapping is built when asked for, naming the target classes then. A target class its package does
not define is left out of the mapping (``convert`` then leaves that module as it is); a package that cannot be
imported at all raises its ImportError.

The ``DEFAULT_*`` constants PyTorch exports are there too: ``DEFAULT_QAT_MODULE_MAPPINGS`` at once (its classes
are known here), the others built on first access (after the quantized packages have loaded) and kept, so they are
one dict each, as in PyTorch. ``DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS`` pairs each float function with the
``toolkit.ops.quantized`` op of the same name where that op is registered.

Left out, for want of the modules they map to: the reference quantized modules
(``DEFAULT_REFERENCE_STATIC_QUANT_MODULE_MAPPINGS``, ``get_default_static_quant_reference_module_mappings``), the
sparse quantized modules (``DEFAULT_STATIC_SPARSE_QUANT_MODULE_MAPPINGS``,
``DEFAULT_DYNAMIC_SPARSE_QUANT_MODULE_MAPPINGS`` and their getters) and the QAT Embedding/EmbeddingBag
(``get_embedding_qat_module_mappings``, ``get_embedding_static_quant_module_mappings``)."""

from __future__ import annotations

import copy
import importlib

from ... import nn, ops
from ...nn import functional as F
from ..nn import intrinsic as nni
from ..nn import qat as nnqat
from ..nn.intrinsic import qat as nniqat
from .fixed_qparams import (
    default_fixed_qparams_range_0to1_fake_quant,
    default_fixed_qparams_range_neg1to1_fake_quant,
)
from .stubs import DeQuantStub, QuantStub

_NNQ, _NNQD, _NNIQ, _NNIQD = "quantized", "quantized.dynamic", "intrinsic.quantized", "intrinsic.quantized.dynamic"
_OPTIONAL = {_NNIQ, _NNIQD}  # the fused int8 modules: without them fused modules stay float

_NDQL = nn.modules.linear.NonDynamicallyQuantizableLinear

# (float class, package under toolkit.ao.nn, class name there)
_STATIC = [
    (QuantStub, _NNQ, "Quantize"), (DeQuantStub, _NNQ, "DeQuantize"),
    (nn.BatchNorm2d, _NNQ, "BatchNorm2d"), (nn.BatchNorm3d, _NNQ, "BatchNorm3d"), (nn.Dropout, _NNQ, "Dropout"),
    (nn.Conv1d, _NNQ, "Conv1d"), (nn.Conv2d, _NNQ, "Conv2d"), (nn.Conv3d, _NNQ, "Conv3d"),
    (nn.ConvTranspose1d, _NNQ, "ConvTranspose1d"), (nn.ConvTranspose2d, _NNQ, "ConvTranspose2d"),
    (nn.ConvTranspose3d, _NNQ, "ConvTranspose3d"), (nn.ELU, _NNQ, "ELU"), (nn.Embedding, _NNQ, "Embedding"),
    (nn.EmbeddingBag, _NNQ, "EmbeddingBag"), (nn.GroupNorm, _NNQ, "GroupNorm"), (nn.Hardswish, _NNQ, "Hardswish"),
    (nn.InstanceNorm1d, _NNQ, "InstanceNorm1d"), (nn.InstanceNorm2d, _NNQ, "InstanceNorm2d"),
    (nn.InstanceNorm3d, _NNQ, "InstanceNorm3d"), (nn.LayerNorm, _NNQ, "LayerNorm"),
    (nn.LeakyReLU, _NNQ, "LeakyReLU"), (_NDQL, _NNQ, "Linear"), (nn.Linear, _NNQ, "Linear"),
    (nn.ReLU6, _NNQ, "ReLU6"), (nn.PReLU, _NNQ, "PReLU"),
    (nni.BNReLU2d, _NNIQ, "BNReLU2d"), (nni.BNReLU3d, _NNIQ, "BNReLU3d"), (nni.ConvReLU1d, _NNIQ, "ConvReLU1d"),
    (nni.ConvReLU2d, _NNIQ, "ConvReLU2d"), (nni.ConvReLU3d, _NNIQ, "ConvReLU3d"),
    (nni.ConvAdd2d, _NNIQ, "ConvAdd2d"), (nni.ConvAddReLU2d, _NNIQ, "ConvAddReLU2d"),
    (nni.LinearReLU, _NNIQ, "LinearReLU"), (nni.LinearLeakyReLU, _NNIQ, "LinearLeakyReLU"),
    (nni.LinearTanh, _NNIQ, "LinearTanh"),
    (nniqat.ConvBn1d, _NNQ, "Conv1d"), (nniqat.ConvBn2d, _NNQ, "Conv2d"), (nniqat.ConvBn3d, _NNQ, "Conv3d"),
    (nniqat.ConvBnReLU1d, _NNIQ, "ConvReLU1d"), (nniqat.ConvBnReLU2d, _NNIQ, "ConvReLU2d"),
    (nniqat.ConvBnReLU3d, _NNIQ, "ConvReLU3d"), (nniqat.ConvReLU2d, _NNIQ, "ConvReLU2d"),
    (nniqat.ConvReLU3d, _NNIQ, "ConvReLU3d"), (nniqat.LinearReLU, _NNIQ, "LinearReLU"),
    (nniqat.LinearBn1d, _NNQ, "Linear"), (nnqat.Linear, _NNQ, "Linear"), (nnqat.Conv2d, _NNQ, "Conv2d"),
    (nnqat.Conv3d, _NNQ, "Conv3d"),
]

DEFAULT_QAT_MODULE_MAPPINGS = {
    nn.Conv2d: nnqat.Conv2d, nn.Conv3d: nnqat.Conv3d, nn.Linear: nnqat.Linear, _NDQL: nnqat.Linear,
    nni.ConvBn1d: nniqat.ConvBn1d, nni.ConvBn2d: nniqat.ConvBn2d, nni.ConvBn3d: nniqat.ConvBn3d,
    nni.ConvBnReLU1d: nniqat.ConvBnReLU1d, nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    nni.ConvBnReLU3d: nniqat.ConvBnReLU3d, nni.ConvReLU2d: nniqat.ConvReLU2d, nni.ConvReLU3d: nniqat.ConvReLU3d,
    nni.LinearReLU: nniqat.LinearReLU, nni.LinearBn1d: nniqat.LinearBn1d,
}

_DYNAMIC = [
    (nn.GRUCell, _NNQD, "GRUCell"), (nn.Linear, _NNQD, "Linear"), (_NDQL, _NNQD, "Linear"),
    (nn.LSTM, _NNQD, "LSTM"), (nn.GRU, _NNQD, "GRU"), (nn.LSTMCell, _NNQD, "LSTMCell"),
    (nn.RNNCell, _NNQD, "RNNCell"), (nni.LinearReLU, _NNIQD, "LinearReLU"),
    (nn.EmbeddingBag, _NNQ, "EmbeddingBag"), (nn.Embedding, _NNQ, "Embedding"),
]

DEFAULT_MODULE_TO_ACT_POST_PROCESS = {
    nn.Hardsigmoid: default_fixed_qparams_range_0to1_fake_quant,
    nn.Sigmoid: default_fixed_qparams_range_0to1_fake_quant,
    nn.Softmax: default_fixed_qparams_range_0to1_fake_quant,
    nn.Tanh: default_fixed_qparams_range_neg1to1_fake_quant,
}


def _package(name: str):
    try:
        return importlib.import_module(f"toolkit.ao.nn.{name}")
    except ImportError:
        if name in _OPTIONAL:
            return None
        raise


def _functional_classes():
    """``(FloatFunctional, QFunctional)`` from the quantized package, or Nones before it exists."""
    try:
        nnq = importlib.import_module("toolkit.ao.nn.quantized")
    except ImportError:
        return None, None
    return getattr(nnq, "FloatFunctional", None), getattr(nnq, "QFunctional", None)


def _resolve(table) -> dict:
    mapping = {}
    for float_cls, package, name in table:
        mod = _package(package)
        target = getattr(mod, name, None) if mod is not None else None
        if target is not None:
            mapping[float_cls] = target
    return mapping


def get_default_static_quant_module_mappings() -> dict:
    """Float (or QAT) module class -> int8 module class, for post-training static quantization."""
    mapping = _resolve(_STATIC)
    float_functional, q_functional = _functional_classes()
    if float_functional is not None and q_functional is not None:
        mapping[float_functional] = q_functional
    return mapping


def get_default_qat_module_mappings() -> dict:
    """Float module class -> QAT module class, for ``prepare_qat``."""
    return copy.copy(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_dynamic_quant_module_mappings() -> dict:
    """Float module class -> dynamically quantized module class (int8 weights, float activations)."""
    return _resolve(_DYNAMIC)


def get_default_qconfig_propagation_list() -> set:
    """The module classes ``prepare`` attaches observers to when they are leaves (every class a mapping names,
    and Sequential)."""
    classes = {c for c, _, _ in _STATIC} | set(DEFAULT_QAT_MODULE_MAPPINGS) | {c for c, _, _ in _DYNAMIC} | {nn.Sequential}
    float_functional, _ = _functional_classes()
    if float_functional is not None:
        classes.add(float_functional)
    return classes


def get_static_quant_module_class(float_module_class, additional_static_quant_mapping=None,
                                  is_reference: bool = False):
    """The int8 class that ``float_module_class`` converts to."""
    if is_reference:
        raise NotImplementedError("toolkit has no reference quantized modules")
    mapping = {**get_default_static_quant_module_mappings(), **(additional_static_quant_mapping or {})}
    if float_module_class not in mapping:
        raise AssertionError(f"Floating point module class {float_module_class} does not have a corresponding "
                             "quantized module class")
    return mapping[float_module_class]


def get_dynamic_quant_module_class(float_module_class, additional_dynamic_quant_mapping=None):
    """The dynamically quantized class that ``float_module_class`` converts to."""
    mapping = {**get_default_dynamic_quant_module_mappings(), **(additional_dynamic_quant_mapping or {})}
    if float_module_class not in mapping:
        raise AssertionError(f"Floating point module class {float_module_class} does not have a corresponding "
                             "quantized module class")
    return mapping[float_module_class]


def no_observer_set() -> set:
    """Module classes that never get an observer attached (none here: toolkit has no quantizable LSTM)."""
    return set()


def _has_special_act_post_process(module) -> bool:
    return module.training and type(module) in DEFAULT_MODULE_TO_ACT_POST_PROCESS


def _get_special_act_post_process(module):
    return DEFAULT_MODULE_TO_ACT_POST_PROCESS.get(type(module))


# float function -> the name of its quantized op under toolkit.ops.quantized (PyTorch's quantized::elu...)
_FLOAT_TO_QUANTIZED_OPERATOR = {F.elu: "elu", F.hardswish: "hardswish", F.instance_norm: "instance_norm",
                                F.layer_norm: "layer_norm", F.leaky_relu: "leaky_relu", F.dropout: "dropout"}


def _float_to_quantized_operator_mappings() -> dict:
    mapping = {}
    for float_op, name in _FLOAT_TO_QUANTIZED_OPERATOR.items():
        try:
            mapping[float_op] = getattr(ops.quantized, name)
        except AttributeError:
            continue
    return mapping


_LAZY_CONSTANTS = {
    "DEFAULT_STATIC_QUANT_MODULE_MAPPINGS": get_default_static_quant_module_mappings,
    "DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS": get_default_dynamic_quant_module_mappings,
    "DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS": _float_to_quantized_operator_mappings,
}


def _constant(name: str) -> dict:
    """The ``DEFAULT_*`` constant ``name``, built on first use and kept in this module."""
    if name not in globals():
        globals()[name] = _LAZY_CONSTANTS[name]()
    return globals()[name]


def __getattr__(name: str):
    if name in _LAZY_CONSTANTS:
        return _constant(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_default_compare_output_module_list() -> set:
    """The module classes whose outputs the numeric suite records: both sides of every module mapping, and
    Sequential."""
    static, dynamic = get_default_static_quant_module_mappings(), get_default_dynamic_quant_module_mappings()
    return (set(static.values()) | set(DEFAULT_QAT_MODULE_MAPPINGS.values()) | set(dynamic.values())
            | set(static) | set(DEFAULT_QAT_MODULE_MAPPINGS) | set(dynamic) | {nn.Sequential})


def get_default_float_to_quantized_operator_mappings() -> dict:
    """Float function -> quantized op, a copy of ``DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS``."""
    return copy.deepcopy(_constant("DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS"))


def get_quantized_operator(float_op):
    """The quantized op for the float function ``float_op``."""
    quantized_op = _constant("DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS").get(float_op)
    if quantized_op is None:
        raise AssertionError(f"Operator {float_op!s} does not have corresponding quantized op")
    return quantized_op


# the constants built on first access: the package imports the other names one by one, so loading it (while the
# quantized packages may still be loading) does not build these
LAZY_NAMES = tuple(_LAZY_CONSTANTS)

__all__ = ["DEFAULT_MODULE_TO_ACT_POST_PROCESS", "DEFAULT_QAT_MODULE_MAPPINGS", *LAZY_NAMES,
           "get_default_dynamic_quant_module_mappings", "get_default_qat_module_mappings",
           "get_default_qconfig_propagation_list", "get_default_static_quant_module_mappings", "get_dynamic_quant_module_class",
           "get_static_quant_module_class", "no_observer_set", "get_default_compare_output_module_list",
           "get_default_float_to_quantized_operator_mappings", "get_quantized_operator"]
