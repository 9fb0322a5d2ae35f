"""Which parameters the compiled one-pass updates (``_fused_kernels``) take, and the calls that run them.

A parameter takes the compiled update when it, its gradient and its state are float32 or float64 CPU arrays of
one shape and dtype, C-contiguous, the written ones writable and in buffers of their own, and no autograd
graph is being recorded (``differentiable=True`` and calls under grad mode keep the tensor-op form, which
records). Every other parameter (float16, non-contiguous views, CUDA tensors, mixed dtypes) goes through the
tensor-op form, which gives the same numbers. The caller falls back per parameter when these return False.

Each written tensor's version counter moves, as an in-place op moves it.

Example::

    stepper = adam_stepper(amsgrad=False, beta1=0.9, beta2=0.999, lr=1e-3, weight_decay=0, eps=1e-8,
                           maximize=False, decoupled=False)
    stepper(param, grad, exp_avg, exp_avg_sq, None, step_t)   # True: updated in place
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real

import numpy as np

from toolkit._core.load import free_cores
from toolkit.autograd.grad_mode import is_grad_enabled
from toolkit.tensor import Tensor, wrap

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _flat_arrays(grad: Tensor, written: tuple[Tensor, ...]) -> list[np.ndarray] | None:
    """The flat arrays of ``grad`` and of the ``written`` tensors when the compiled update applies, else None."""
    g = grad._data
    if type(g) is not np.ndarray or g.dtype not in _FLOATS or not g.flags.c_contiguous:
        return None
    storages = {id(grad._storage)}
    out = [g.reshape(-1)]
    for t in written:
        a = t._data
        if (type(a) is not np.ndarray or a.dtype != g.dtype or a.shape != g.shape or not a.flags.c_contiguous
                or not a.flags.writeable or id(t._storage) in storages):
            return None
        storages.add(id(t._storage))
        out.append(a.reshape(-1))
    return out


def _bump(*tensors: Tensor) -> None:
    for t in tensors:
        t._storage.version += 1


def _plain(*values) -> bool:
    return all(isinstance(v, Real) and not isinstance(v, np.ndarray) for v in values)


def _advance(step_t: Tensor) -> float | None:
    """``step_t += 1`` on a CPU counter; its new value, or None when the counter needs the tensor op."""
    s = step_t._data
    if type(s) is not np.ndarray or s.ndim != 0 or not s.flags.writeable or step_t._requires_grad:
        return None
    s += 1
    step_t._storage.version += 1
    return s.item()


def adam_stepper(*, amsgrad: bool, beta1, beta2, lr, weight_decay, eps, maximize: bool,
                 decoupled: bool) -> Callable[..., bool] | None:
    """A function updating one parameter with Adam's single-tensor formulas in one compiled pass, returning
    False (having changed nothing) where the parameter needs the tensor-op form; None when no parameter can
    take it under these options (grad mode on, or a hyperparameter that is not a plain number)."""
    if is_grad_enabled() or not _plain(beta1, beta2, lr, weight_decay, eps):
        return None
    from . import _fused_kernels as K  # optional: numba, never loaded by import toolkit

    decay = weight_decay != 0
    w = 1 - beta1
    consts: dict = {}

    def scalars(dt, step):
        """The formula's numbers cast to the arrays' dtype, as the tensor ops cast them (memoized per step)."""
        key = (dt, step)
        c = consts.get(key)
        if c is None:
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            c = consts[key] = (dt(weight_decay), dt(1 - lr * weight_decay), dt(w), dt(w - 1), abs(w) < 0.5,
                               dt(beta2), dt(1 - beta2), dt(bias_correction2**0.5), dt(eps), dt(-step_size))
        return c

    def step(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, max_exp_avg_sq: Tensor | None,
             step_t: Tensor) -> bool:
        written = (param, exp_avg, exp_avg_sq, max_exp_avg_sq) if amsgrad else (param, exp_avg, exp_avg_sq)
        arrays = _flat_arrays(grad, written)
        if arrays is None:
            return False
        count = _advance(step_t)
        if count is None:
            return False
        g, p, m, v = arrays[:4]
        mx = arrays[4] if amsgrad else v
        kernel = K.adam_parallel if p.size >= K.PARALLEL_MIN and free_cores() > 1 else K.adam_update
        kernel(p, g, m, v, mx, amsgrad, maximize, decay, decoupled, *scalars(g.dtype.type, count))
        _bump(*written)
        return True

    return step


def sgd_stepper(*, weight_decay, momentum, lr, dampening, nesterov: bool,
                maximize: bool) -> Callable[..., Tensor | bool] | None:
    """A function updating one parameter with SGD's single-tensor formulas in one compiled pass: it returns the
    momentum buffer (a new one on the first step; None without momentum) or False, having changed nothing,
    where the parameter needs the tensor-op form; None when no parameter can take it under these options."""
    if is_grad_enabled() or not _plain(weight_decay, momentum, lr, dampening):
        return None
    from . import _fused_kernels as K  # optional: numba, never loaded by import toolkit

    decay = weight_decay != 0
    use_momentum = momentum != 0
    consts: dict = {}

    def scalars(dt):
        c = consts.get(dt)
        if c is None:
            c = consts[dt] = (dt(weight_decay), dt(momentum), dt(1 - dampening), dt(-lr))
        return c

    def step(param: Tensor, grad: Tensor, buf: Tensor | None) -> Tensor | bool | None:
        first = use_momentum and buf is None
        written = (param, buf) if use_momentum and not first else (param,)
        arrays = _flat_arrays(grad, written)
        if arrays is None:
            return False
        g, p = arrays[:2]
        if first:  # grad.detach().clone(), written by the kernel
            b = np.empty_like(g)
            buf = wrap(b.reshape(grad._data.shape))
        else:
            b = arrays[2] if use_momentum else p
        kernel = K.sgd_parallel if p.size >= K.PARALLEL_MIN and free_cores() > 1 else K.sgd_update
        kernel(p, g, b, maximize, decay, use_momentum, first, nesterov, *scalars(g.dtype.type))
        _bump(*written)
        return buf

    return step
