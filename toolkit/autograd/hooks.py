"""Tensor hooks and ``retain_grad``: functions run on a gradient as it flows past a tensor."""

from __future__ import annotations

from ..tensor import Tensor


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, container: list, fn):
        self._container = container
        self._fn = fn

    def remove(self) -> None:
        try:
            self._container.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_tensor_hook(t: Tensor, hook) -> RemovableHandle:
    """``hook(grad)`` runs when the gradient w.r.t. ``t`` is computed; it may return a replacement."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is None:
        hooks = t._extras().setdefault("hooks", [])
    else:
        hooks = t.grad_fn._hooks_for(t._output_nr)
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def retain_grad(t: Tensor) -> None:
    """Keep ``.grad`` for a non-leaf tensor, as ``Tensor.retain_grad``."""
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t.retains_grad:
        return
    t._extras()["retains_grad"] = True
    import weakref

    ref = weakref.ref(t)

    def _retain(grad):
        owner = ref()
        if owner is not None:
            from ..dispatch import STATE

            if owner._grad is None:
                owner._grad = grad.clone() if STATE.grad_enabled else grad.detach().clone()
            else:
                owner._grad = owner._grad + grad
        return None

    t.grad_fn._hooks_for(t._output_nr).insert(0, _retain)
