"""``Adamax``: Adam with the infinity norm of past gradients in place of their second moment."""

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

__all__ = ["Adamax", "adamax"]



class Adamax(Optimizer):
    """Adamax (Kingma & Ba, section 7), step for step equal to ``torch.optim.Adamax`` (its single-tensor path).

    Example::

        opt = toolkit.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Any, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_options({"lr": lr, "eps": eps, "betas": betas, "weight_decay": weight_decay})
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, exp_avgs, exp_infs, state_steps) -> None:
        self._gather_group_state(
            group, params, grads, step=(state_steps, _new_step), exp_avg=(exp_avgs, toolkit.zeros_like),
            exp_inf=(exp_infs, toolkit.zeros_like))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_infs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_infs, state_steps)
            adamax(params, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"], beta1=beta1, beta2=beta2,
                   lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                   differentiable=group["differentiable"])
        return loss


def adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_infs: list[Tensor],
           state_steps: list[Tensor], foreach: bool | None = None, maximize: bool = False,
           differentiable: bool = False, capturable: bool = False, has_complex: bool = False, *, eps: float,
           beta1: float, beta2: float, lr: float, weight_decay: float) -> None:
    """Functional Adamax over lists of tensors (PyTorch's single-tensor algorithm)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _scalar_value(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        if not differentiable:
            exp_inf.copy_(toolkit.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
        else:
            norm_buf = toolkit.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(toolkit.amax(norm_buf, 0, keepdim=False))
        bias_correction = 1 - beta1 ** _get_value(step_t)
        clr = lr / bias_correction
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
