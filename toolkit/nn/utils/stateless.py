"""``functional_call``: run a module with some of its parameters and buffers replaced for one call.

The given tensors are swapped into the module (by dotted name, e.g. ``"0.weight"``) for the duration of the
call and the originals put back afterwards, so gradients flow to the given tensors instead of the module's.

    >>> out = functional_call(model, {"weight": w}, (x,))
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _swap_tensor(module: Module, name: str, tensor, allow_missing: bool = False):
    """Put ``tensor`` (or remove it, for ``_MISSING``) under ``name`` on ``module``; returns what was there."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError(f'tensor name "{name}" can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for table in (module._parameters, module._buffers):
        if name in table:
            orig_tensor = table[name]
            if tensor is not _MISSING:
                table[name] = tensor
            else:
                del table[name]
            return orig_tensor
    if hasattr(module, name):
        orig_tensor = getattr(module, name)
    elif not allow_missing:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    else:
        orig_tensor = _MISSING
    if orig_tensor is not _MISSING and not isinstance(orig_tensor, Tensor):
        raise TypeError(f"attribute `{name}`: {orig_tensor} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig_tensor


def _swap_tensors_dict(module: Module, named_tensors: dict[str, Any], allow_missing: bool = False) -> dict:
    """Swap every dotted name in ``named_tensors``; returns the originals (``_MISSING`` where none was)."""
    originals = {}
    try:
        for name, tensor in named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            owner = module.get_submodule(prefix) if prefix else module
            originals[name] = _swap_tensor(owner, attr, tensor, allow_missing)
    except Exception:
        _swap_tensors_dict(module, dict(reversed(originals.items())), allow_missing=True)
        raise
    return originals


def _untie_named_tensors_map(module: Module, parameters_and_buffers: dict[str, Tensor]) -> dict[str, Tensor]:
    """Extend the given names to every name tied to them (the same tensor under several names)."""
    all_named_tensors: dict[str, Tensor] = {}
    all_named_tensors.update(module.named_parameters(remove_duplicate=False))
    all_named_tensors.update(module.named_buffers(remove_duplicate=False))
    tensor_to_tied_names: dict[int, set[str]] = {}
    for name, tensor in all_named_tensors.items():
        tensor_to_tied_names.setdefault(id(tensor), set()).add(name)
    tied_names_map: dict[str, set[str]] = {}
    for tied_names in tensor_to_tied_names.values():
        if len(tied_names) > 1:
            for tied_name in tied_names:
                tied_names_map[tied_name] = tied_names
    given_names = set(parameters_and_buffers.keys())
    given_for_tied = {name for name in given_names if name in tied_names_map}
    for given_name in given_for_tied:
        tied_names = tied_names_map[given_name]
        values = {id(parameters_and_buffers[n]) for n in tied_names if n in parameters_and_buffers}
        if len(tied_names.intersection(given_for_tied)) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied_names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = parameters_and_buffers.copy()
    for given_name in given_for_tied:
        for tied_name in tied_names_map[given_name]:
            untied[tied_name] = parameters_and_buffers[given_name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict[str, Tensor], tie_weights: bool = False,
                          strict: bool = False, stack_weights: bool = False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid_keys = {name for name, _ in module.named_parameters(remove_duplicate=False)}
        valid_keys |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
        keys = set(untied)
        missing_keys, unexpected_keys = sorted(valid_keys - keys), sorted(keys - valid_keys)
        error_msgs = []
        if unexpected_keys:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if missing_keys:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(error_msgs)))
    originals: dict[str, Any] = {}
    try:
        originals = _swap_tensors_dict(module, untied, allow_missing=True)
        yield
    finally:
        if stack_weights:
            originals = dict(reversed(originals.items()))
        new = _swap_tensors_dict(module, originals, allow_missing=True)
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any | tuple | None = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False):
    """Deprecated name of ``toolkit.func.functional_call``."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any | tuple | None = None,
                     kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
