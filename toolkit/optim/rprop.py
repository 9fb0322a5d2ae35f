"""``Rprop``: resilient backpropagation, per-coordinate step sizes grown or shrunk by the sign of the gradient."""

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

__all__ = ["Rprop", "rprop"]



class Rprop(Optimizer):
    """Rprop, step for step equal to ``torch.optim.Rprop`` (its single-tensor path).

    ``etas`` are the (shrink, grow) factors, ``step_sizes`` the (smallest, largest) step allowed.

    Example::

        opt = toolkit.optim.Rprop(model.parameters(), lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-6, 50))
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_options({"lr": lr, "etas": etas})
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps) -> None:
        lr = _scalar_value(group["lr"])
        self._gather_group_state(
            group, params, grads, step=(state_steps, _new_step), prev=(prevs, toolkit.zeros_like),
            step_size=(step_sizes, lambda p: toolkit.full_like(p.grad, lr)))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes, state_steps = [], [], [], [], []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            self._init_group(group, params, grads, prevs, step_sizes, state_steps)
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"],
                  differentiable=group["differentiable"])
        return loss


def rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor], step_sizes: list[Tensor],
          state_steps: list[Tensor], foreach: bool | None = None, capturable: bool = False,
          maximize: bool = False, differentiable: bool = False, has_complex: bool = False, *,
          step_size_min: float, step_size_max: float, etaminus: float, etaplus: float) -> None:
    """Functional Rprop over lists of tensors (PyTorch's single-tensor algorithm)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev, step_size, step = prevs[i], step_sizes[i], state_steps[i]
        step += 1
        sign = grad.mul(prev.clone() if differentiable else prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
