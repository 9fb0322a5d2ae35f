"""Helpers the eager quantization workflow shares (``torch.ao.quantization.utils``): what a qconfig quantizes to
(``get_quant_type``, ``activation_dtype``...), a quantizer's parameters as a dict (``get_qparam_dict``), the
integer range rules (``calculate_qmin_qmax``...), and the fusion pattern wildcard ``MatchAllNode``.

Dtypes are compared by name, so the quantized dtypes and the plain integer ones PyTorch accepts (``int8``,
``uint16``...) are recognised whichever of them the core defines.

Left out: ``NodePattern`` and ``check_node`` (they take ``torch.fx`` nodes: FX graph mode only),
``get_fqn_to_example_inputs`` (FX ``prepare_fx`` input), ``determine_qparams`` (the PT2E decomposed path) and
``DEPRECATION_WARNING`` (PyTorch's notice about its own package moving to torchao).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..._core import dtypes as _dt
from ...nn.utils.parametrize import is_parametrized
from . import _qtypes as q
from .observer import calculate_qmin_qmax, check_min_max_valid, validate_qmin_qmax
from .placeholder_observers import PlaceholderObserver
from .quant_type import QuantType

__all__ = [
    "Pattern", "MatchAllNode", "get_combined_dict", "is_per_tensor", "is_per_channel", "getattr_from_fqn",
    "get_qparam_dict", "get_swapped_custom_module_class", "activation_dtype", "weight_dtype",
    "activation_is_statically_quantized", "activation_is_dynamically_quantized", "activation_is_int8_quantized",
    "activation_is_int32_quantized", "weight_is_quantized", "weight_is_statically_quantized",
    "op_is_int8_dynamically_quantized", "get_qconfig_dtypes", "get_quant_type", "check_min_max_valid",
    "calculate_qmin_qmax", "has_no_children_ignoring_parametrizations", "to_underlying_dtype",
    "validate_qmin_qmax",
]

# A fusion pattern: a module type or function, or a tuple of them, nested (``(nn.ReLU, (nn.BatchNorm2d,
# nn.Conv2d))`` reads "ReLU of BatchNorm of Conv").
Pattern = Callable | tuple[Callable, Callable] | tuple[Callable, tuple[Callable, Callable]] | Any


class MatchAllNode:
    """The pattern element that matches anything: a fuser registered for ``(MatchAllNode, nn.ReLU)`` fuses any
    module followed by ReLU (``get_fuser_method_new`` tries each position with it)."""


_STATIC = ("quint8", "qint8", "qint32", "float16", "uint8", "int8", "int16", "int32", "float8_e5m2",
           "float8_e4m3fn")
_INT8 = ("quint8", "qint8", "uint8", "int8")
_WEIGHT = ("quint8", "qint8", "float16", "quint4x2", "uint8", "int8", "int16", "int32", "float8_e5m2",
           "float8_e4m3fn")
_QUANT_TYPE_STATIC = ("quint8", "qint8", "quint4x2", "qint32", "uint8", "int8", "int16", "int32", "float8_e5m2",
                      "float8_e4m3fn")
_UNDERLYING = {"quint8": "uint8", "qint8": "int8", "qint32": "int32", "quint4x2": "uint8", "quint2x4": "uint8",
               "uint8": "uint8", "int8": "int8", "uint16": "uint16", "int16": "int16", "int32": "int32",
               "float8_e5m2": "float8_e5m2", "float8_e4m3fn": "float8_e4m3fn"}


def _named(dtype, names: tuple[str, ...]) -> bool:
    return dtype is not None and not isinstance(dtype, str) and q.name_of(dtype) in names


def get_combined_dict(default_dict: dict, additional_dict: dict) -> dict:
    """A copy of ``default_dict`` updated with ``additional_dict``."""
    combined = default_dict.copy()
    combined.update(additional_dict)
    return combined


def is_per_tensor(qscheme) -> bool:
    """Whether ``qscheme`` has one scale for the whole tensor."""
    return qscheme in q.PER_TENSOR


def is_per_channel(qscheme) -> bool:
    """Whether ``qscheme`` has a scale per channel."""
    return qscheme in q.PER_CHANNEL


def getattr_from_fqn(obj: Any, fqn: str) -> Any:
    """``obj.foo.bar.baz`` for ``fqn == "foo.bar.baz"``."""
    return functools.reduce(getattr, fqn.split("."), obj)


def to_underlying_dtype(qdtype):
    """The plain dtype a quantized dtype stores its integers in (``quint8`` -> ``uint8``)."""
    name = None if isinstance(qdtype, str) else q.name_of(qdtype)
    if name not in _UNDERLYING or not hasattr(_dt, _UNDERLYING[name]):
        raise AssertionError("Unsupported dtype: " + str(qdtype))
    return getattr(_dt, _UNDERLYING[name])


def get_qparam_dict(observer_or_fake_quant) -> dict:
    """The parameters a quantized tensor needs from ``observer_or_fake_quant``: qscheme (symmetric schemes
    reported as affine, as quantized tensors store them), dtype, scale, zero point, axis and range."""
    qscheme = getattr(observer_or_fake_quant, "qscheme", None)
    dtype = observer_or_fake_quant.dtype
    qparams: dict[str, Any] = {"qscheme": qscheme, "dtype": dtype}
    if not qscheme or isinstance(observer_or_fake_quant, PlaceholderObserver):
        return {"qscheme": None, "dtype": dtype}
    if is_per_tensor(qscheme):
        qscheme = q.per_tensor_affine
    elif is_per_channel(qscheme):
        if qscheme is q.per_channel_symmetric:
            qscheme = q.per_channel_affine
        qparams["axis"] = observer_or_fake_quant.ch_axis
    else:
        raise RuntimeError(f"Unrecognized qscheme: {qscheme}")
    qparams["qscheme"] = qscheme
    qparams["scale"], qparams["zero_point"] = observer_or_fake_quant.calculate_qparams()
    if hasattr(observer_or_fake_quant, "quant_min"):
        qparams["quant_min"] = observer_or_fake_quant.quant_min
    if hasattr(observer_or_fake_quant, "quant_max"):
        qparams["quant_max"] = observer_or_fake_quant.quant_max
    return qparams


def get_swapped_custom_module_class(custom_module, custom_module_class_mapping: dict, qconfig):
    """The observed (or quantized) class ``custom_module`` swaps to, from the mapping of ``qconfig``'s
    quantization type."""
    class_mapping = custom_module_class_mapping.get(get_quant_type(qconfig), {})
    if type(custom_module) not in class_mapping:
        raise AssertionError("did not find corresponding observed "
                             f"module class for {type(custom_module)} in mapping: {class_mapping}")
    return class_mapping[type(custom_module)]


def activation_dtype(qconfig):
    """The dtype ``qconfig``'s activation observer quantizes to."""
    if qconfig is None:
        raise AssertionError("qconfig must be provided to determine activation dtype")
    return qconfig.activation().dtype


def weight_dtype(qconfig):
    """The dtype ``qconfig``'s weight observer quantizes to."""
    if qconfig is None:
        raise AssertionError("qconfig must be provided to determine weight dtype")
    return qconfig.weight().dtype


def activation_is_statically_quantized(qconfig) -> bool:
    """Whether activations are quantized ahead of time (an integer or float16 dtype, not dynamic)."""
    return _named(activation_dtype(qconfig), _STATIC) and not activation_is_dynamically_quantized(qconfig)


def activation_is_dynamically_quantized(qconfig) -> bool:
    """Whether activations are quantized on the fly, batch by batch."""
    return get_qconfig_dtypes(qconfig)[2]


def activation_is_int8_quantized(qconfig) -> bool:
    """Whether activations are quantized to 8-bit integers."""
    return _named(activation_dtype(qconfig), _INT8)


def activation_is_int32_quantized(qconfig) -> bool:
    """Whether activations are quantized to 32-bit integers."""
    return _named(activation_dtype(qconfig), ("qint32", "int32"))


def weight_is_quantized(qconfig) -> bool:
    """Whether weights are quantized at all (integers or float16)."""
    return _named(weight_dtype(qconfig), _WEIGHT)


def weight_is_statically_quantized(qconfig) -> bool:
    """Whether weights are quantized to 8-bit integers."""
    return _named(weight_dtype(qconfig), _INT8)


def op_is_int8_dynamically_quantized(qconfig) -> bool:
    """Whether ``qconfig`` is int8 dynamic quantization: quint8 activations chosen per batch, qint8 weights."""
    act, weight, act_is_dynamic = get_qconfig_dtypes(qconfig)
    return _named(act, ("quint8", "uint8")) and _named(weight, ("qint8", "int8")) and act_is_dynamic


def get_qconfig_dtypes(qconfig) -> tuple:
    """``(activation dtype, weight dtype, whether activations are dynamic)``."""
    if qconfig is None:
        raise AssertionError("qconfig must be provided to extract dtypes")
    activation, weight = qconfig.activation(), qconfig.weight()
    return activation.dtype, weight.dtype, getattr(activation, "is_dynamic", False)


def get_quant_type(qconfig) -> QuantType:
    """Which quantization ``qconfig`` asks for: dynamic, static or weight-only."""
    if qconfig is None:
        raise AssertionError("qconfig must be provided to determine quant type")
    activation, weight = qconfig.activation(), qconfig.weight()
    is_dynamic = getattr(activation, "is_dynamic", False)
    if _named(weight.dtype, _QUANT_TYPE_STATIC):
        if is_dynamic:
            return QuantType.DYNAMIC
        if _named(activation.dtype, _QUANT_TYPE_STATIC):
            return QuantType.STATIC
        return QuantType.WEIGHT_ONLY
    if weight.dtype == _dt.float16:
        if is_dynamic:
            return QuantType.DYNAMIC
        if activation.dtype == _dt.float16:
            return QuantType.STATIC
    raise Exception(  # noqa: TRY002 - PyTorch's type
        f"Unrecognized dtype combination in get_quant_type: activation({activation.dtype}),"
        f"weight({weight.dtype})")


def has_no_children_ignoring_parametrizations(module) -> bool:
    """Whether ``module`` is a leaf, counting a parametrized module whose only child is its
    ``parametrizations`` as one."""
    if len(module._modules) == 0:
        return True
    if is_parametrized(module):
        return len(module._modules) == 1 and "parametrizations" in module._modules
    return False
