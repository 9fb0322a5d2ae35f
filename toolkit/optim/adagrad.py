"""``Adagrad``: per-coordinate learning rates from the running sum of squared gradients."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.tensor import Tensor

from .optimizer import (
    Optimizer,
    _check_fused,
    _check_options,
    _get_value,
    _run_closure,
    _scalar_value,
    _step_counter,
    _steps_as_tensors,
    _use_grad_for_differentiable,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad, step for step equal to ``torch.optim.Adagrad`` (its single-tensor path)."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_options({"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                        "initial_accumulator_value": initial_accumulator_value, "eps": eps})
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_counter()
                state["sum"] = toolkit.full_like(p, initial_accumulator_value)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False, fused=None)
        _steps_as_tensors(self)

    def share_memory(self) -> None:
        """Kept for PyTorch compatibility; toolkit state already lives in process memory."""

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, state_sums, state_steps = [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_counter()
                    state["sum"] = toolkit.full_like(p, self.defaults["initial_accumulator_value"])
                state_sums.append(state["sum"])
                state_steps.append(state["step"])
            adagrad(params, grads, state_sums, state_steps, lr=group["lr"], weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor], state_steps: list[Tensor],
            fused: bool | None = None, grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
            has_sparse_grad: bool = False, foreach: bool | None = None, differentiable: bool = False,
            has_complex: bool = False, *, lr: float, weight_decay: float, lr_decay: float, eps: float,
            maximize: bool) -> None:
    """Functional Adagrad over lists of tensors (PyTorch's single-tensor algorithm)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _scalar_value(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
