"""Weight normalisation, the hook form: ``w = g * v / ||v||`` recomputed before every forward.

``weight_norm(module)`` replaces the parameter ``weight`` by ``weight_g`` (the magnitude, norms over every
dimension but ``dim``) and ``weight_v`` (the direction), and installs a forward pre-hook that rebuilds
``module.weight`` from them. ``parametrizations.weight_norm`` is the newer form of the same idea.

    >>> m = weight_norm(nn.Linear(20, 40))
    >>> m.weight_g.size(), m.weight_v.size()
    (toolkit.Size([40, 1]), toolkit.Size([40, 20]))
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import toolkit as api

from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

T_module = TypeVar("T_module", bound=Module)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm over every dimension but ``dim`` (all of them when ``dim == -1``)."""
    return v * (g / api.norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that rebuilds ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(api.norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Reparametrise ``module.<name>`` as ``<name>_g * <name>_v / ||<name>_v||`` (deprecated form)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Fold ``<name>_g`` and ``<name>_v`` back into one parameter ``<name>`` and drop the hook."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
