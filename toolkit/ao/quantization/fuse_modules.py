"""``fuse_modules`` and ``fuse_modules_qat``: replace named sequences of submodules (conv-bn-relu, linear-relu, ...)
by one fused module, the rest by ``Identity``, as ``torch.ao.quantization.fuse_modules`` does::

    fused = fuse_modules(model.eval(), [["conv1", "bn1", "relu1"], ["fc", "relu2"]])

In eval mode BatchNorm is folded into the preceding conv/linear weights; ``fuse_modules_qat`` (training mode)
keeps it, as the ``nni`` fused modules that ``prepare_qat`` turns into QAT modules. The first module's pre-hooks
and the last one's hooks move to the fused module."""

from __future__ import annotations

import copy

from ... import nn
from ...nn.utils.parametrize import type_before_parametrizations
from .fuser_method_mappings import fuse_conv_bn, fuse_conv_bn_relu, get_fuser_method  # noqa: F401  (PyTorch's names here)


def _get_module(model, submodule_key: str):
    for token in submodule_key.split("."):
        model = getattr(model, token)
    return model


def _set_module(model, submodule_key: str, module) -> None:
    *parents, last = submodule_key.split(".")
    for token in parents:
        model = getattr(model, token)
    setattr(model, last, module)


def fuse_known_modules(mod_list, is_qat: bool, additional_fuser_method_mapping=None) -> list:
    """``mod_list`` fused: ``[fused, Identity(), ...]`` for a known sequence of types (see
    ``fuser_method_mappings``); NotImplementedError for any other."""
    types = tuple(type_before_parametrizations(m) for m in mod_list)
    fuser_method = get_fuser_method(types, additional_fuser_method_mapping)
    if fuser_method is None:
        raise NotImplementedError(f"Cannot fuse modules: {types}")
    fused = fuser_method(is_qat, *mod_list)
    for pre_hook_fn in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(pre_hook_fn)
    mod_list[0]._forward_pre_hooks.clear()
    for hook_fn in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook_fn)
    mod_list[-1]._forward_hooks.clear()
    new_mod = [fused]
    for _ in mod_list[1:]:
        identity = nn.Identity()
        identity.training = mod_list[0].training
        new_mod.append(identity)
    return new_mod


def _fuse_modules_helper(model, modules_to_fuse, is_qat, fuser_func=fuse_known_modules,
                         fuse_custom_config_dict=None) -> None:
    additional = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    mod_list = [_get_module(model, item) for item in modules_to_fuse]
    for item, new in zip(modules_to_fuse, fuser_func(mod_list, is_qat, additional)):
        _set_module(model, item, new)


def _fuse_modules(model, modules_to_fuse, is_qat: bool, inplace: bool = False, fuser_func=fuse_known_modules,
                  fuse_custom_config_dict=None):
    if not inplace:
        model = copy.deepcopy(model)
    groups = [modules_to_fuse] if all(isinstance(m, str) for m in modules_to_fuse) else modules_to_fuse
    for group in groups:
        _fuse_modules_helper(model, group, is_qat, fuser_func, fuse_custom_config_dict)
    return model


def fuse_modules(model, modules_to_fuse, inplace: bool = False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuse each list of submodule names in ``modules_to_fuse`` (or the one list, if it is a list of names) for
    post-training quantization; a copy of ``model`` unless ``inplace``."""
    return _fuse_modules(model, modules_to_fuse, is_qat=False, inplace=inplace, fuser_func=fuser_func,
                         fuse_custom_config_dict=fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace: bool = False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """``fuse_modules`` for quantization-aware training: BatchNorm stays a separate, trainable part."""
    return _fuse_modules(model, modules_to_fuse, is_qat=True, inplace=inplace, fuser_func=fuser_func,
                         fuse_custom_config_dict=fuse_custom_config_dict)


__all__ = ["fuse_known_modules", "fuse_modules", "fuse_modules_qat"]
