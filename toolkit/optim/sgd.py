"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from typing import Any

from toolkit.tensor import Tensor

from ._fused_steps import sgd_stepper
from .optimizer import (
    Optimizer,
    _check_fused,
    _check_options,
    _device_dtype_check_for_fused,
    _run_closure,
    _scalar_value,
    _use_grad_for_differentiable,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent, step for step equal to ``torch.optim.SGD`` (its single-tensor path)."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float | Tensor = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_options({"lr": lr, "momentum": momentum, "weight_decay": weight_decay}, refuse_nan=False)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            for p in group["params"]:
                if p.grad is not None:
                    if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                        _device_dtype_check_for_fused(p)
                        self._need_device_dtype_check_for_fused = False
                    params.append(p)
                    grads.append(p.grad)
                    if group["momentum"] != 0:
                        bufs.append(self.state[p].get("momentum_buffer"))
            sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=group["momentum"],
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"], foreach=group["foreach"], fused=group["fused"])
            if group["momentum"] != 0:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params: list[Tensor], d_p_list: list[Tensor], momentum_buffer_list: list[Tensor | None],
        has_sparse_grad: bool = False, foreach: bool | None = None, fused: bool | None = None,
        grad_scale: Tensor | None = None, found_inf: Tensor | None = None, *, weight_decay: float,
        momentum: float, lr: float, dampening: float, nesterov: bool, maximize: bool) -> None:
    """Functional SGD over lists of tensors; new momentum buffers are written into ``momentum_buffer_list``.

    PyTorch's ``foreach`` and ``fused`` forms compute the same update; here every form runs it as one
    compiled pass per CPU parameter (``_fused_steps``), and as tensor ops where that does not apply (CUDA,
    float16, non-contiguous tensors, under grad mode).
    """
    if fused and has_sparse_grad:
        raise RuntimeError("`_fused_sgd` does not support sparse gradients")
    lr = _scalar_value(lr)
    weight_decay = _scalar_value(weight_decay)
    fast = sgd_stepper(weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening, nesterov=nesterov,
                       maximize=maximize) if params else None
    for i, param in enumerate(params):
        if d_p_list[i].is_sparse:  # a sparse gradient's update is the dense one's (weight decay refused, as PyTorch)
            if weight_decay != 0:
                raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
            d_p_list[i] = d_p_list[i].to_dense()
        if fast is not None:
            buf = fast(param, d_p_list[i], momentum_buffer_list[i] if momentum != 0 else None)
            if buf is not False:
                if momentum != 0:
                    momentum_buffer_list[i] = buf
                continue
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)
