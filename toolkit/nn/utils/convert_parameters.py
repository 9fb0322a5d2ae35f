"""Flatten parameters into one vector and back (as used by second-order optimisers)."""

from __future__ import annotations

from collections.abc import Iterable

import toolkit as api

from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old_param_device):
    if old_param_device is None:
        return param.device.index if param.is_cuda else -1
    warn = (param.device.index != old_param_device) if param.is_cuda else (old_param_device != -1)
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter, flattened and concatenated (differentiable)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return api.cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (replacing their ``.data``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
