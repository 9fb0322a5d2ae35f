"""``RAdam``: Adam with the variance of its adaptive step rectified (Liu et al.), optionally with decoupled
weight decay."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.tensor import Tensor

from .optimizer import (
    Optimizer,
    _check_options,
    _get_value,
    _lerp_,
    _new_step,
    _run_closure,
    _scalar_value,
    _steps_as_tensors,
    _use_grad_for_differentiable,
)

__all__ = ["RAdam", "radam"]



class RAdam(Optimizer):
    """RAdam, step for step equal to ``torch.optim.RAdam`` (its single-tensor path).

    Example::

        opt = toolkit.optim.RAdam(model.parameters(), lr=1e-3, decoupled_weight_decay=True, weight_decay=0.01)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_options({"lr": lr, "eps": eps, "betas": betas, "weight_decay": weight_decay})
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False,
                                  capturable=False)
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, state_steps) -> None:
        self._gather_group_state(
            group, params, grads, step=(state_steps, _new_step), exp_avg=(exp_avgs, toolkit.zeros_like),
            exp_avg_sq=(exp_avg_sqs, toolkit.zeros_like))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, state_steps)
            radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], differentiable=group["differentiable"])
        return loss


def radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
          state_steps: list[Tensor], decoupled_weight_decay: bool = False, foreach: bool | None = None,
          differentiable: bool = False, capturable: bool = False, has_complex: bool = False,
          maximize: bool = False, *, beta1: float, beta2: float, lr: float, weight_decay: float,
          eps: float) -> None:
    """Functional RAdam over lists of tensors (PyTorch's single-tensor algorithm)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _scalar_value(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t += 1
        step = _get_value(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            exp_avg_sq_sqrt = exp_avg_sq.sqrt()
            exp_avg_sq_sqrt = exp_avg_sq_sqrt.add(eps) if differentiable else exp_avg_sq_sqrt.add_(eps)
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq_sqrt
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
