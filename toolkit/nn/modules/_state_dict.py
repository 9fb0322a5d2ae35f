"""Module state dicts: saving and loading a Module tree's parameters and buffers, with their hooks.

``StateDictMixin`` gives ``Module`` its ``state_dict``/``load_state_dict`` methods and the four state-dict hook
registrations; loading follows PyTorch's key checks and error messages, so checkpoints and their failures read
the same as PyTorch's.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter
from ._hooks import RemovableHandle

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def load_from_state_dict(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                         error_msgs) -> None:
    """Copy this module's own parameters and persistent buffers (not its children's) from ``state_dict``."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    persistent = {k: v for k, v in module._buffers.items() if k not in module._non_persistent_buffers_set}
    local_state = {k: v for k, v in [*module._parameters.items(), *persistent.items()] if v is not None}
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = state_dict[key]
        if not isinstance(input_param, Tensor):
            error_msgs.append(
                f'While copying the parameter named "{key}", expected toolkit.Tensor or Tensor-like object from '
                f"checkpoint but received {type(input_param)}"
            )
            continue
        if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
            input_param = input_param[0]
        if input_param.shape != param.shape:
            error_msgs.append(
                f"size mismatch for {key}: copying a param with shape {input_param.shape} from checkpoint, "
                f"the shape in current model is {param.shape}."
            )
            continue
        try:
            with no_grad():
                if assign:
                    if isinstance(param, Parameter):
                        if not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param, requires_grad=param.requires_grad)
                        else:
                            input_param.requires_grad_(param.requires_grad)
                    setattr(module, name, input_param)
                else:
                    param.copy_(input_param)
        except Exception as ex:
            error_msgs.append(
                f'While copying the parameter named "{key}", whose dimensions in the model are {param.size()} and '
                f"whose dimensions in the checkpoint are {input_param.size()}, an exception occurred : {ex.args}."
            )
    extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
    base_setter = StateDictMixin.set_extra_state
    if getattr(module.__class__, "set_extra_state", base_setter) is not base_setter:
        if extra_state_key in state_dict:
            module.set_extra_state(state_dict[extra_state_key])
        elif strict:
            missing_keys.append(extra_state_key)
    elif strict and extra_state_key in state_dict:
        unexpected_keys.append(extra_state_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_state_key:
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in module._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(module, state_dict: Mapping, strict: bool = True, assign: bool = False):
    """``Module.load_state_dict``: recurse over the tree, then raise one RuntimeError listing every problem."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    error_msgs: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    def load(mod, local_state_dict, prefix=""):
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        mod._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys,
                                  error_msgs)
        for name, child in mod._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                load(child, child_state_dict, child_prefix)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in mod._load_state_dict_post_hooks.values():
            out = hook(mod, incompatible)
            if out is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return new "
                    "values, if incompatible_keys need to be modified, it should be done inplace."
                )

    load(module, state_dict)
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            module.__class__.__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)


class StateDictMixin:
    """``Module``'s state-dict methods: what a checkpoint holds, how it is loaded back, and hooks around both."""

    def get_extra_state(self) -> Any:
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. Please file an issue"
        )

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. Please file an issue"
        )

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = lambda sd, prefix, *rest: hook(self, sd, prefix, *rest)
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        base_getter = StateDictMixin.get_extra_state
        if getattr(self.__class__, "get_extra_state", base_getter) is not base_getter:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False) -> dict[str, Any]:
        """An OrderedDict of parameters and persistent buffers, keyed by dotted names (detached unless keep_vars)."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                             error_msgs)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict``; returns ``(missing_keys, unexpected_keys)``."""
        return load_state_dict(self, state_dict, strict, assign)
