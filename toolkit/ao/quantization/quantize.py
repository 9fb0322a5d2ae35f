"""Eager-mode quantization, as ``torch.ao.quantization.quantize`` does it: ``prepare`` gives every quantizable
leaf (a module whose class a mapping names, with a non-None ``qconfig``) an ``activation_post_process`` observer
called from a forward hook on its output; calibration runs the model; ``convert`` swaps each observed module for
its quantized class via ``from_float`` and drops the observers and qconfigs. ``quantize``, ``quantize_dynamic``,
``prepare_qat`` and ``quantize_qat`` chain these steps::

    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)           # observers in place
    prepared(calibration_batch)
    quantized = convert(prepared)       # nn.Conv2d -> toolkit.ao.nn.quantized.Conv2d, ...

Observers are placed exactly where PyTorch places them (same names, same types), so a model's ``named_modules()``
after ``prepare`` reads the same under both libraries.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import warnings

from ... import nn
from ..._core import dtypes as _dt
from ...nn.utils.parametrize import type_before_parametrizations
from ..nn.intrinsic.modules.fused import _FusedModule
from . import _qtypes as q
from .fake_quantize import FakeQuantizeBase
from .observer import ObserverBase
from .qconfig import (
    _activation_is_memoryless,
    _assert_valid_qconfig,
    default_dynamic_qconfig,
    float16_dynamic_qconfig,
    float_qparams_weight_only_qconfig,
)
from .quantization_mappings import _functional_classes as _mapped_functional_classes
from .quantization_mappings import (
    _get_special_act_post_process,
    _has_special_act_post_process,
    get_default_dynamic_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_qconfig_propagation_list,
    get_default_static_quant_module_mappings,
)
from .stubs import DeQuantStub, QuantWrapper
from .utils import has_no_children_ignoring_parametrizations


def _is_activation_post_process(module) -> bool:
    return isinstance(module, (ObserverBase, FakeQuantizeBase))


is_activation_post_process = _is_activation_post_process


_has_no_children = has_no_children_ignoring_parametrizations


# Custom modules swapped in whole by prepare (float -> observed) and convert (observed -> quantized). PyTorch lists
# its quantizable LSTM and MultiheadAttention here; toolkit has no quantizable versions of them, so both mappings
# start empty and users add their own classes.
_DEFAULT_CUSTOM_CONFIG_DICT: dict = {
    "float_to_observed_custom_module_class": {},
    "observed_to_quantized_custom_module_class": {},
}


def get_default_custom_config_dict() -> dict:
    """The default custom-module configuration (the one shared dict, as PyTorch returns it)."""
    return _DEFAULT_CUSTOM_CONFIG_DICT


# ------------------------------------------------------------------ qconfig propagation
def _propagate_qconfig_helper(module, qconfig_dict, qconfig_parent=None, prefix: str = "") -> None:
    module_qconfig = qconfig_dict.get(type_before_parametrizations(module), qconfig_parent)
    module_qconfig = qconfig_dict.get(prefix, module_qconfig)
    module_qconfig = getattr(module, "qconfig", module_qconfig)
    _assert_valid_qconfig(module_qconfig, module)
    module.qconfig = module_qconfig
    for name, child in module.named_children():
        _propagate_qconfig_helper(child, qconfig_dict, module_qconfig, f"{prefix}.{name}" if prefix else name)


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None) -> None:
    """Give every submodule a ``qconfig``: its own if set, else the one ``qconfig_dict`` names for its qualified
    name or type, else its parent's. In place."""
    _propagate_qconfig_helper(module, qconfig_dict or {})


# ------------------------------------------------------------------ observers
def _observer_forward_hook(self, input, output):
    """Forward hook: the observer sees (and, a fake quantizer, transforms) the output."""
    return self.activation_post_process(output)


def _observer_forward_pre_hook(self, input):
    """Forward pre-hook: the observer sees the input (memoryless activation observers)."""
    return self.activation_post_process(input[0])


def _register_activation_post_process_hook(module, pre_hook: bool = False) -> None:
    if not hasattr(module, "activation_post_process"):
        raise AssertionError("Expect activation_post_process attribute already attached to the module")
    if pre_hook:
        module.register_forward_pre_hook(_observer_forward_pre_hook, prepend=True)
    else:
        module.register_forward_hook(_observer_forward_hook, prepend=True)


def _functional_classes() -> tuple:
    return tuple(c for c in _mapped_functional_classes() if c is not None)


def _add_observer_(module, qconfig_propagation_list=None, non_leaf_module_list=None, device=None,
                   custom_module_class_mapping=None) -> None:
    """Attach an ``activation_post_process`` (and its hook) to each leaf of ``module`` that has a qconfig and a
    quantizable type, to each fused module, and to FloatFunctional's own slot. In place."""
    if qconfig_propagation_list is None:
        qconfig_propagation_list = get_default_qconfig_propagation_list()
    custom_module_class_mapping = custom_module_class_mapping or {}
    functional = _functional_classes()

    def needs_observation(m) -> bool:
        return getattr(m, "qconfig", None) is not None

    def insert_activation_post_process(m, special_act_post_process=None) -> None:
        if needs_observation(m) and not isinstance(m, DeQuantStub):
            make = m.qconfig.activation if special_act_post_process is None else special_act_post_process
            m.add_module("activation_post_process", make())
            _register_activation_post_process_hook(m, pre_hook=_activation_is_memoryless(m.qconfig))

    for name, child in module.named_children():
        kind = type_before_parametrizations(child)
        if kind is nn.Dropout:
            continue
        if functional and issubclass(kind, functional):
            if needs_observation(child):
                if not hasattr(child, "activation_post_process"):
                    raise AssertionError(f"functional class {kind} has no pre-defined `activation_post_process`")
                child.activation_post_process = child.qconfig.activation()
        elif isinstance(child, _FusedModule):
            if needs_observation(child):
                insert_activation_post_process(child)
        elif non_leaf_module_list is not None and kind in non_leaf_module_list:
            if needs_observation(child):
                insert_activation_post_process(child)
        elif _has_special_act_post_process(child):
            insert_activation_post_process(child, _get_special_act_post_process(child))
        elif needs_observation(child) and kind in custom_module_class_mapping:
            observed = custom_module_class_mapping[kind].from_float(child)
            setattr(module, name, observed)
            insert_activation_post_process(observed)
        else:
            _add_observer_(child, qconfig_propagation_list, non_leaf_module_list, device, custom_module_class_mapping)

    kind = type_before_parametrizations(module)
    if _has_no_children(module) and not isinstance(module, nn.Sequential) and kind in qconfig_propagation_list:
        insert_activation_post_process(module)
    if hasattr(module, "weight_fake_quant") and not isinstance(module, nn.Sequential) and \
            kind in qconfig_propagation_list:
        insert_activation_post_process(module)


def add_quant_dequant(module):
    """Wrap each leaf that has a qconfig in a ``QuantWrapper`` (the module itself, if it is such a leaf)."""
    if _has_no_children(module) and getattr(module, "qconfig", None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


def prepare(model, inplace: bool = False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """``model`` (a copy unless ``inplace``) with qconfigs propagated and observers attached, ready for
    calibration (or, with fake-quantize qconfigs, for quantization-aware training)."""
    custom = (prepare_custom_config_dict or {}).get("float_to_observed_custom_module_class", {})
    if not inplace:
        model = copy.deepcopy(model)
    propagation_list = get_default_qconfig_propagation_list() if allow_list is None else allow_list
    propagate_qconfig_(model, qconfig_dict=None)
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules",
                      stacklevel=2)
    _add_observer_(model, propagation_list, observer_non_leaf_module_list, custom_module_class_mapping=custom)
    return model


def _remove_activation_post_process(module) -> None:
    if hasattr(module, "activation_post_process") and _is_activation_post_process(module.activation_post_process):
        delattr(module, "activation_post_process")
    for hooks, hook in ((module._forward_pre_hooks, _observer_forward_pre_hook),
                        (module._forward_hooks, _observer_forward_hook)):
        for handle_id in [i for i, fn in hooks.items() if fn is hook]:
            hooks.pop(handle_id)


def _remove_qconfig(module) -> None:
    """Drop the qconfigs, observers and observer hooks left on ``module`` and its children."""
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    _remove_activation_post_process(module)


# ------------------------------------------------------------------ conversion
def swap_module(mod, mapping, custom_module_class_mapping=None, use_precomputed_fake_quant: bool = False):
    """``mod``'s quantized counterpart (``mapping[type(mod)].from_float(mod)``) when it has a qconfig and a
    mapping entry, keeping its pre-hooks and non-observer hooks; else ``mod`` itself."""
    custom_module_class_mapping = custom_module_class_mapping or {}
    if getattr(mod, "qconfig", None) is None:
        return mod
    kind = type_before_parametrizations(mod)
    if kind in custom_module_class_mapping:
        new_mod = custom_module_class_mapping[kind].from_observed(mod)
    elif kind in mapping:
        qmod = mapping[kind]
        if "use_precomputed_fake_quant" in inspect.signature(qmod.from_float).parameters:
            new_mod = qmod.from_float(mod, use_precomputed_fake_quant=use_precomputed_fake_quant)
        else:
            new_mod = qmod.from_float(mod)
    else:
        return mod
    for pre_hook_fn in mod._forward_pre_hooks.values():
        new_mod.register_forward_pre_hook(pre_hook_fn)
    for hook_fn in mod._forward_hooks.values():
        if hook_fn is not _observer_forward_hook:
            new_mod.register_forward_hook(hook_fn)
    return new_mod


def _convert(module, mapping=None, inplace: bool = False, is_reference: bool = False,
             convert_custom_config_dict=None, use_precomputed_fake_quant: bool = False):
    if is_reference:
        raise NotImplementedError("toolkit has no reference quantized modules (is_reference=True)")
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    custom = (convert_custom_config_dict or {}).get("observed_to_quantized_custom_module_class", {})
    if not inplace:
        module = copy.deepcopy(module)
    reassign = {}
    for name, mod in module.named_children():
        if not isinstance(mod, _FusedModule) and type_before_parametrizations(mod) not in custom:
            _convert(mod, mapping, True, is_reference, convert_custom_config_dict, use_precomputed_fake_quant)
        reassign[name] = swap_module(mod, mapping, custom, use_precomputed_fake_quant)
    for key, value in reassign.items():
        module._modules[key] = value
    return module


def convert(module, mapping=None, inplace: bool = False, remove_qconfig: bool = True, is_reference: bool = False,
            convert_custom_config_dict=None, use_precomputed_fake_quant: bool = False):
    """``module`` (a copy unless ``inplace``) with each observed submodule swapped for its quantized class by
    ``mapping`` (the static one by default); qconfigs and observers are removed unless ``remove_qconfig`` is
    False."""
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping, inplace=True, is_reference=is_reference,
             convert_custom_config_dict=convert_custom_config_dict,
             use_precomputed_fake_quant=use_precomputed_fake_quant)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


# ------------------------------------------------------------------ the workflows
def quantize(model, run_fn, run_args, mapping=None, inplace: bool = False):
    """Post-training static quantization: prepare (in eval mode), ``run_fn(model, *run_args)`` to calibrate,
    convert."""
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


_DYNAMIC_TYPES = (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell)


def _dynamic_default(dtype):
    """The qconfig ``quantize_dynamic`` uses for ``dtype`` and the module types it applies to by default."""
    name = q.name_of(dtype)
    if name == "qint8":
        return default_dynamic_qconfig, _DYNAMIC_TYPES
    if dtype is _dt.float16:
        return float16_dynamic_qconfig, _DYNAMIC_TYPES
    if name == "quint8":
        return float_qparams_weight_only_qconfig, (nn.EmbeddingBag, nn.Embedding)
    if name == "quint4x2":
        raise NotImplementedError("toolkit does not store sub-byte quantized tensors (quint4x2)")
    return None, ()


def quantize_dynamic(model, qconfig_spec=None, dtype=q.qint8, mapping=None, inplace: bool = False):
    """Dynamic quantization: Linear and recurrent layers (by default) get int8 weights and quantize their
    activations on the fly. ``qconfig_spec`` is a dict of type or name -> qconfig, or a set of types/names
    given ``dtype``'s default qconfig."""
    if qconfig_spec is None:
        qconfig, types = _dynamic_default(dtype)
        if qconfig is None:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig "
                             "please")
        qconfig_spec = dict(zip(types, itertools.repeat(qconfig)))
    elif isinstance(qconfig_spec, set):
        qconfig, _ = _dynamic_default(dtype)
        if qconfig is None:
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(qconfig)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def prepare_qat(model, mapping=None, inplace: bool = False):
    """Quantization-aware training: swap modules for their QAT versions (fake-quantized weights) and attach
    fake-quantize observers to the outputs. ``model`` must be in training mode."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_dict=None)
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


def quantize_qat(model, run_fn, run_args, inplace: bool = False):
    """Prepare for QAT (training mode), ``run_fn(model, *run_args)`` to train, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model


__all__ = ["add_quant_dequant", "convert", "get_default_custom_config_dict", "prepare", "prepare_qat",
           "propagate_qconfig_", "quantize", "quantize_dynamic", "quantize_qat", "swap_module"]
