"""Tensor hooks and ``retain_grad``: functions run on a gradient as it flows past a tensor."""

from __future__ import annotations

import weakref

from .._core.names import names_of, set_names
from ..ops import api
from ..tensor import Tensor
from .graph import gradient_edge
from .handle import ListHookHandle, RemovableHandle


def register_tensor_hook(t: Tensor, hook) -> RemovableHandle:
    """``hook(grad)`` runs when the gradient w.r.t. ``t`` is computed; it may return a replacement."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is None:
        hooks = t._extras().setdefault("hooks", [])
    else:
        node, nr = gradient_edge(t)
        hooks = node._tensor_hooks_for(nr)
    hooks.append(hook)
    return ListHookHandle(hooks, hook)


def register_post_accumulate_grad_hook(t: Tensor, hook) -> RemovableHandle:
    """``hook(tensor)`` runs after a leaf's ``.grad`` has been accumulated (optimizer-in-backward style)."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = t._extras().setdefault("post_accumulate_hooks", [])
    hooks.append(hook)
    return ListHookHandle(hooks, hook)


def _retain_hook(t: Tensor):
    ref = weakref.ref(t)

    def retain(grad):
        owner = ref()
        if owner is None:
            return

        owner._grad = api.clone(grad) if owner._grad is None else owner._grad + grad
        set_names(owner._grad, names_of(owner))  # a gradient carries its tensor's names

    return retain


def retain_grad(t: Tensor) -> None:
    """Keep ``.grad`` for a non-leaf tensor, as ``Tensor.retain_grad`` (a no-op on leaves)."""
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t.retains_grad:
        return
    ex = t._extras()
    ex["retains_grad"] = True
    fn = ex["retain_hook"] = _retain_hook(t)
    node = t.grad_fn
    if node._retain_hooks is None:
        node._retain_hooks = {}
    node._retain_hooks[t._output_nr] = fn


def move_retain_grad(t: Tensor, old_fn, old_nr: int) -> None:
    """After an in-place op gave ``t`` a new ``grad_fn``, its retain_grad hook follows it (as in PyTorch)."""
    ex = t._extra
    if not ex or not ex.get("retains_grad") or t.grad_fn is old_fn:
        return
    fn = ex["retain_hook"]
    if old_fn is not None and old_fn._retain_hooks and old_fn._retain_hooks.get(old_nr) is fn:
        del old_fn._retain_hooks[old_nr]
    node = t.grad_fn
    if node._retain_hooks is None:
        node._retain_hooks = {}
    node._retain_hooks[t._output_nr] = fn
