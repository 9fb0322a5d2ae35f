"""``Adadelta``: per-coordinate step sizes from running averages of squared gradients and squared updates."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.tensor import Tensor

from .optimizer import (
    Optimizer,
    _check_options,
    _new_step,
    _run_closure,
    _scalar_value,
    _steps_as_tensors,
    _use_grad_for_differentiable,
)

__all__ = ["Adadelta", "adadelta"]



class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), step for step equal to ``torch.optim.Adadelta`` (its single-tensor path).

    Example::

        opt = toolkit.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_options({"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay})
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, square_avgs, acc_deltas, state_steps) -> None:
        self._gather_group_state(
            group, params, grads, step=(state_steps, _new_step), square_avg=(square_avgs, toolkit.zeros_like),
            acc_delta=(acc_deltas, toolkit.zeros_like))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            self._init_group(group, params, grads, square_avgs, acc_deltas, state_steps)
            adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"], rho=group["rho"],
                     eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                     differentiable=group["differentiable"])
        return loss


def adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor], acc_deltas: list[Tensor],
             state_steps: list[Tensor], capturable: bool = False, foreach: bool | None = None,
             differentiable: bool = False, has_complex: bool = False, *, lr: float, rho: float, eps: float,
             weight_decay: float, maximize: bool) -> None:
    """Functional Adadelta over lists of tensors (PyTorch's single-tensor algorithm)."""
    lr = _scalar_value(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
