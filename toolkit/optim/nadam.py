"""``NAdam``: Adam with Nesterov momentum (Dozat), with a momentum schedule and optional decoupled weight decay."""

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
    _step_counter,
    _steps_as_tensors,
    _use_grad_for_differentiable,
)

__all__ = ["NAdam", "nadam"]



def _new_mu_product(p: Tensor) -> Tensor:
    """The running product of momentum coefficients, starting at one."""
    return _step_counter(1.0)


class NAdam(Optimizer):
    """NAdam, step for step equal to ``torch.optim.NAdam`` (its single-tensor path).

    ``state[p]["mu_product"]`` is the running product of the momentum schedule, a 0-d tensor as in PyTorch.

    Example::

        opt = toolkit.optim.NAdam(model.parameters(), lr=2e-3, momentum_decay=4e-3)
    """

    def __init__(self, params: Any, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_options({"lr": lr, "eps": eps, "betas": betas, "weight_decay": weight_decay,
                        "momentum_decay": momentum_decay})
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(maximize=False, foreach=None, capturable=False, differentiable=False,
                                  decoupled_weight_decay=False)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = _step_counter(float(p_state["mu_product"]))
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps) -> None:
        self._gather_group_state(
            group, params, grads, step=(state_steps, _new_step), mu_product=(mu_products, _new_mu_product),
            exp_avg=(exp_avgs, toolkit.zeros_like), exp_avg_sq=(exp_avg_sqs, toolkit.zeros_like))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps = [], [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps)
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], differentiable=group["differentiable"])
        return loss


def nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
          mu_products: list[Tensor], state_steps: list[Tensor], decoupled_weight_decay: bool = False,
          foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
          has_complex: bool = False, maximize: bool = False, *, beta1: float, beta2: float, lr: float,
          weight_decay: float, momentum_decay: float, eps: float) -> None:
    """Functional NAdam over lists of tensors (PyTorch's single-tensor algorithm)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _scalar_value(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product, step_t = exp_avgs[i], exp_avg_sqs[i], mu_products[i], state_steps[i]
        step_t += 1
        step = _get_value(step_t)
        bias_correction2 = 1 - beta2**step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        if differentiable:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            param.addcdiv_(grad, denom)
            param.addcdiv_(exp_avg, denom)
        else:
            mu_product_next = _get_value(mu_product) * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - _get_value(mu_product))))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
