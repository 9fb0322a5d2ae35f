"""``Adam``: adaptive moment estimation, with AMSGrad, maximize and (optionally decoupled) weight decay."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.tensor import Tensor

from ._fused_steps import adam_stepper
from .optimizer import (
    Optimizer,
    _check_fused,
    _check_options,
    _device_dtype_check_for_fused,
    _get_scalar_dtype,
    _get_value,
    _lerp_,
    _run_closure,
    _scalar_value,
    _step_counter,
    _steps_as_tensors,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    """Adam, step for step equal to ``torch.optim.Adam`` (its single-tensor path)."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_options({"lr": lr, "eps": eps, "betas": betas, "weight_decay": weight_decay})
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(amsgrad=False, maximize=False, foreach=None, capturable=False,
                                  differentiable=False, decoupled_weight_decay=False, fused=None)
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                # the counter lives with the parameter, in float32, for the fused and capturable forms
                state["step"] = (toolkit.zeros((), dtype=toolkit.float32 if group["fused"] else _get_scalar_dtype(),
                                               device=p.device)
                                 if group["capturable"] or group["fused"] else _step_counter())
                state["exp_avg"] = toolkit.zeros_like(p)
                state["exp_avg_sq"] = toolkit.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = toolkit.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")
            state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps = [], [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps)
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad=group["amsgrad"],
                 beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=group["foreach"], capturable=group["capturable"],
                 differentiable=group["differentiable"], fused=group["fused"],
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
         max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
         capturable: bool = False, differentiable: bool = False, fused: bool | None = None,
         grad_scale: Tensor | None = None, found_inf: Tensor | None = None, has_complex: bool = False,
         decoupled_weight_decay: bool = False, *, amsgrad: bool, beta1: float, beta2: float, lr: float,
         weight_decay: float, eps: float, maximize: bool) -> None:
    """Functional Adam over lists of tensors (PyTorch's single-tensor algorithm).

    PyTorch's ``foreach`` and ``fused`` forms compute the same update; here every form runs it as one
    compiled pass per CPU parameter (``_fused_steps``), and as tensor ops where that does not apply (CUDA,
    float16, non-contiguous tensors, ``differentiable``). The flags are checked as PyTorch checks them.
    """
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if not params:
        return
    if fused and differentiable:
        raise RuntimeError("Adam with fused=True does not support differentiable=True")
    if foreach and not fused and not capturable:
        _check_foreach_scalars(lr, beta1, beta2)
    lr, beta1, beta2 = _scalar_value(lr), _scalar_value(beta1), _scalar_value(beta2)
    fast = None if differentiable else adam_stepper(
        amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps, maximize=maximize,
        decoupled=decoupled_weight_decay)
    for i, param in enumerate(params):
        if fast is not None and fast(param, grads[i], exp_avgs[i], exp_avg_sqs[i],
                                     max_exp_avg_sqs[i] if amsgrad else None, state_steps[i]):
            continue
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step_t += 1
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = _get_value(step_t)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        if amsgrad:
            max_exp_avg_sqs[i].copy_(toolkit.maximum(max_exp_avg_sqs[i], exp_avg_sq))
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)


def _check_foreach_scalars(lr, beta1, beta2) -> None:
    """PyTorch's foreach form takes no tensor hyperparameters without ``capturable``."""
    if isinstance(lr, Tensor):
        raise RuntimeError("lr as a Tensor is not supported for capturable=False and foreach=True")
    for name, beta in (("beta1", beta1), ("beta2", beta2)):
        if isinstance(beta, Tensor):
            raise ValueError(f"{name} as a Tensor is not supported for capturable=False and foreach=True")
