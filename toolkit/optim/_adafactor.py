"""``Adafactor``: Adam-like steps with the second moment of a matrix stored as a row and a column factor
(Shazeer & Stern), so its memory grows with rows + columns instead of rows * columns."""

from __future__ import annotations

from typing import Any

import numpy as np

import toolkit
from toolkit.tensor import Tensor

from .optimizer import Optimizer, _lerp_, _run_closure, _scalar_value, _step_counter, _steps_as_tensors

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor, step for step equal to ``torch.optim.Adafactor`` (its single-tensor path).

    A parameter of two or more dimensions keeps ``row_var`` and ``col_var`` (the last dimension, then the one
    before it, reduced to 1); a vector keeps a full ``variance``.

    Example::

        opt = toolkit.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False)
        _steps_as_tensors(self)

    def _init_group(self, group, params, grads, row_vars, col_vars, variances, state_steps) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_counter()
                if p.grad.dim() > 1:
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = toolkit.zeros_like(p.grad)
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            state_steps.append(state["step"])

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        with toolkit.no_grad():
            loss = _run_closure(closure)
            for group in self.param_groups:
                params, grads, row_vars, col_vars, variances, state_steps = [], [], [], [], [], []
                eps1, eps2 = group["eps"]
                self._init_group(group, params, grads, row_vars, col_vars, variances, state_steps)
                adafactor(params, grads, row_vars, col_vars, variances, state_steps, d=group["d"], lr=group["lr"],
                          beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"], eps1=eps1,
                          eps2=eps2, maximize=group["maximize"])
        return loss


def adafactor(params: list[Tensor], grads: list[Tensor], row_vars: list[Tensor | None],
              col_vars: list[Tensor | None], variances: list[Tensor | None], state_steps: list[Tensor],
              foreach: bool | None = None, grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
              has_complex: bool = False, *, d: float, lr: float | Tensor, beta2_decay: float, weight_decay: float,
              eps1: float | None, eps2: float, maximize: bool) -> None:
    """Functional Adafactor over lists of tensors (PyTorch's single-tensor algorithm).

    ``eps1=None`` takes the machine epsilon of the first parameter's dtype, as PyTorch does.
    """
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _scalar_value(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t, row_var, col_var, variance = state_steps[i], row_vars[i], col_vars[i], variances[i]
        if eps1 is None:
            eps1 = float(np.finfo(param.dtype.np).eps)
        step_t += 1
        step_float = step_t.item()
        one_minus_beta2_t = step_float**beta2_decay
        rho_t = min(lr, 1 / (step_float**0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_mean = toolkit.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            _lerp_(row_var, row_mean, one_minus_beta2_t)
            col_mean = toolkit.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            _lerp_(col_var, col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            grad_squared = grad * grad
            _lerp_(variance, grad_squared, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
