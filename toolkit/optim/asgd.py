"""``ASGD``: averaged stochastic gradient descent (Polyak & Juditsky), with its decaying step size ``eta``."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.tensor import Tensor

from .optimizer import (
    Optimizer,
    _check_options,
    _get_scalar_dtype,
    _get_value,
    _new_step,
    _run_closure,
    _scalar_value,
    _step_counter,
    _use_grad_for_differentiable,
)

__all__ = ["ASGD", "asgd"]



def _new_mu(p: Tensor) -> Tensor:
    """The averaging coefficient, starting at one."""
    return _step_counter(1.0)


class ASGD(Optimizer):
    """Averaged SGD, step for step equal to ``torch.optim.ASGD`` (its single-tensor path).

    The running average of the parameters is kept in ``state[p]["ax"]``; ``eta`` (the step size) and ``mu``
    (the averaging weight) are 0-d tensors in the state, as in PyTorch.

    Example::

        opt = toolkit.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_options({"lr": lr, "weight_decay": weight_decay})
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                for key in ("step", "eta", "mu"):
                    if key in p_state and not isinstance(p_state[key], Tensor):
                        p_state[key] = _step_counter(float(p_state[key]))

    def _init_group(self, group, params, grads, mus, axs, etas, state_steps) -> None:
        lr = float(_scalar_value(group["lr"]))
        self._gather_group_state(
            group, params, grads, step=(state_steps, _new_step),
            eta=(etas, lambda p: toolkit.tensor(lr, dtype=_get_scalar_dtype())),
            mu=(mus, _new_mu), ax=(axs, toolkit.zeros_like))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, mus, axs, etas, state_steps = [], [], [], [], [], []
            self._init_group(group, params, grads, mus, axs, etas, state_steps)
            asgd(params, grads, axs, mus, etas, state_steps, lambd=group["lambd"], lr=group["lr"], t0=group["t0"],
                 alpha=group["alpha"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                 differentiable=group["differentiable"])
        return loss


def asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor], etas: list[Tensor],
         state_steps: list[Tensor], foreach: bool | None = None, maximize: bool = False,
         differentiable: bool = False, capturable: bool = False, has_complex: bool = False, *, lambd: float,
         lr: float, t0: float, alpha: float, weight_decay: float) -> None:
    """Functional ASGD over lists of tensors (PyTorch's single-tensor algorithm)."""
    lr = _scalar_value(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta, step_t = mus[i], axs[i], etas[i], state_steps[i]
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = _get_value(step_t)
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))
