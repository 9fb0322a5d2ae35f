"""Lazy modules: parameters whose shapes are inferred from the first input.

A lazy module holds ``UninitializedParameter``/``UninitializedBuffer`` placeholders (no data). Its first
forward call (or a ``load_state_dict`` that supplies shapes) runs ``initialize_parameters``, which
``materialize``s each placeholder into a real Parameter/Tensor and re-initializes; the module then
becomes its ``cls_to_become`` (``LazyLinear`` becomes ``Linear``), as in PyTorch.
"""

from __future__ import annotations

from ... import autograd as _autograd
from ..parameter import (  # noqa: F401  (re-exported: PyTorch users import them from here too)
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
    is_lazy,
)

__all__ = ["LazyModuleMixin", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


class LazyModuleMixin:
    """Mixed in before a module class: ``initialize_parameters(*args)`` runs on the first forward call, then
    the hooks go away and the instance becomes ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._register_lazy_hooks()

    def _register_lazy_hooks(self) -> None:
        """The forward pre-hook that infers the shapes and the load hook that takes them from a state dict."""
        self._load_hook = self.register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _lazy_load_hook(self, module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs) -> None:
        """Materialize every placeholder whose key the state dict supplies with a real tensor."""
        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with _autograd.no_grad():
                    param.materialize(tuple(state_dict[key].shape))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the placeholders from the first input's shape."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    @staticmethod
    def _infer_parameters(module, args, kwargs=None) -> None:
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
