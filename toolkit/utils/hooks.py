"""``toolkit.utils.hooks``: the hook handle and hook helpers of ``torch.utils.hooks``.

``RemovableHandle`` is the handle every ``register_*_hook`` returns (``toolkit.autograd.handle``: tensors,
nodes, modules, optimizers), constructed as PyTorch's; ``BackwardHook`` is what runs a module's full
backward hooks (``toolkit.nn``'s). ``unserializable_hook`` marks a hook that
``warn_if_has_hooks`` (called before saving a tensor) should not warn about::

    @toolkit.utils.hooks.unserializable_hook
    def log_grad(grad): print(grad.norm())
    x.register_hook(log_grad)
    toolkit.utils.hooks.warn_if_has_hooks(x)        # silent: the hook said it is not meant to be saved
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..autograd.handle import RemovableHandle
from ..nn.modules._hooks import BackwardHook
from ..tensor import Tensor

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f: Callable) -> Callable:
    """Mark ``f`` as a hook that is not saved with its tensor, so saving the tensor does not warn about it."""
    f.__torch_unserializable__ = True
    return f


def _backward_hooks(tensor: Tensor) -> list:
    """The hooks ``tensor.register_hook`` put on ``tensor``: a leaf keeps them itself, a result on its grad_fn."""
    if tensor.grad_fn is None:
        return list((tensor._extra or {}).get("hooks", ()))
    return list((tensor.grad_fn._tensor_hooks or {}).get(tensor._output_nr, ()))


def warn_if_has_hooks(tensor: Tensor) -> None:
    """Warn about each backward hook on ``tensor`` that will not be serialized with it (unless marked)."""
    for hook in _backward_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @toolkit.utils.hooks.unserializable_hook to suppress this "
                          "warning", stacklevel=2)
