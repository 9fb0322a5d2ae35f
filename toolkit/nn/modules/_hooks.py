"""Module forward and backward hooks: registering them, and running them around ``forward``.

``HookRegistrationMixin`` gives ``Module`` its ``register_*_hook`` methods; ``call_with_hooks`` is the slow path of
``Module.__call__`` taken only when some hook is registered; full backward hooks ride on identity Functions, so
they see the gradients w.r.t. a module's outputs and inputs as PyTorch's do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ...autograd import is_grad_enabled
from ...autograd.function import Function
from ...autograd.handle import RemovableHandle
from ...tensor import Tensor


class BackwardHookFunction(Function):
    """Identity on tensors whose backward hands the incoming gradients to a callback (which may replace them)."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.callback(grads))


def _tensors_of(value):
    """The tensors of ``value`` (a tensor or a tuple/list of values) in order, and a function rebuilding it."""
    if isinstance(value, Tensor):
        return [value], lambda ts: ts[0]
    if isinstance(value, (tuple, list)):
        idx = [i for i, v in enumerate(value) if isinstance(v, Tensor)]

        def rebuild(ts):
            out = list(value)
            for i, t in zip(idx, ts):
                out[i] = t
            return type(value)(out) if not hasattr(value, "_fields") else type(value)(*out)

        return [value[i] for i in idx], rebuild
    return [], lambda ts: value


class BackwardHook:
    """Runs a module's full backward pre-hooks and hooks with the gradients w.r.t. its outputs and inputs."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_requires = ()

    def _run_hooks(self, grad_inputs: tuple) -> tuple:
        for hook in self.user_hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is None:
                continue
            if not isinstance(res, (tuple, list)):
                res = (res,)
            if len(res) != len(grad_inputs):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(res)}, but expected "
                    f"{len(grad_inputs)}"
                )
            grad_inputs = tuple(res)
        return grad_inputs

    def setup_input_hook(self, args):
        tensors, rebuild = _tensors_of(args)
        self.n_inputs = len(tensors)
        self.input_requires = tuple(t.requires_grad for t in tensors)
        if not any(self.input_requires) or not self.user_hooks:
            return args

        if not is_grad_enabled():
            return args

        def on_inputs(grads):
            grads = tuple(g if r else None for g, r in zip(grads, self.input_requires))
            return self._run_hooks(grads)

        return rebuild(list(_as_tuple(BackwardHookFunction.apply(on_inputs, *tensors))))

    def setup_output_hook(self, result):
        tensors, rebuild = _tensors_of(result)
        if not tensors or not is_grad_enabled() or not any(t.requires_grad for t in tensors):
            return result

        def on_outputs(grads):
            grads = tuple(grads)
            for hook in self.user_pre_hooks:
                res = hook(self.module, grads)
                if res is None:
                    continue
                if not isinstance(res, (tuple, list)):
                    res = (res,)
                if len(res) != len(grads):
                    raise RuntimeError(
                        f"Backward pre hook returned an invalid number of grad_output, got {len(res)}, but expected "
                        f"{len(grads)}"
                    )
                grads = tuple(res)
            self.grad_outputs = grads
            if self.user_hooks and not any(self.input_requires):
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to module outputs since "
                    "no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                    stacklevel=5,
                )
                self._run_hooks((None,) * self.n_inputs)
            return grads

        return rebuild(list(_as_tuple(BackwardHookFunction.apply(on_outputs, *tensors))))


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def call_with_hooks(module, forward_call, args: tuple, kwargs: dict):
    """``Module.__call__`` when hooks are registered: pre-hooks, backward-hook wrapping, forward, forward hooks."""
    called_always = set()
    try:
        for hook_id, hook in list(module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                res = hook(module, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {res}."
                        )
            else:
                res = hook(module, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        if module._backward_hooks or module._backward_pre_hooks:
            bw_hook = BackwardHook(module, list(module._backward_hooks.values()),
                                   list(module._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        result = forward_call(*args, **kwargs)
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called:
                called_always.add(hook_id)
            if hook_id in module._forward_hooks_with_kwargs:
                hook_result = hook(module, args, kwargs, result)
            else:
                hook_result = hook(module, args, result)
            if hook_result is not None:
                result = hook_result
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result
    except Exception:
        for hook_id, hook in module._forward_hooks.items():
            if hook_id in module._forward_hooks_always_called and hook_id not in called_always:
                try:
                    if hook_id in module._forward_hooks_with_kwargs:
                        hook(module, args, kwargs, None)
                    else:
                        hook(module, args, None)
                except Exception:
                    pass
        raise


class HookRegistrationMixin:
    """``Module``'s forward and backward hook registrations; each returns a handle whose ``remove()`` undoes it."""

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) runs before forward; it may replace args."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after forward; a non-None return replaces the output."""
        handle = RemovableHandle(
            self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called]
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the outputs are known; may replace them."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the inputs are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use "
                "only one of them."
            )
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in PyTorch; here it behaves as :meth:`register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use "
                "only one of them."
            )
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle
