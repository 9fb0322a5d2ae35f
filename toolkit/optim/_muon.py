"""``Muon``: momentum SGD for 2-D parameters whose update is orthogonalized by a Newton–Schulz iteration
(Jordan et al.), with decoupled weight decay and a shape-dependent learning-rate adjustment."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit.tensor import Tensor

from .optimizer import Optimizer, _lerp_, _run_closure, _scalar_value

__all__ = ["Muon", "muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                                eps: float) -> Tensor:
    """An approximately orthogonal matrix with ``grad``'s singular vectors (``U S' V^T``, ``S'`` near 1).

    PyTorch iterates in bfloat16; toolkit has no bfloat16, so the iteration runs in float32 and agrees with
    PyTorch to bfloat16's precision.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.to(dtype=toolkit.float32)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    ortho_grad = ortho_grad.div(ortho_grad.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = toolkit.addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = toolkit.addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    return ortho_grad


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: Any) -> float:
    """Scale ``lr`` so updates of rectangular matrices have a comparable RMS (``"original"``: sqrt(max(1, A/B));
    ``"match_rms_adamw"``: 0.2 * sqrt(max(A, B)))."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(A, B))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


class Muon(Optimizer):
    """Muon, step for step equal to ``torch.optim.Muon`` up to bfloat16 rounding (see
    ``_zeropower_via_newtonschulz``). Only 2-D parameters are accepted; optimize biases and embeddings with
    another optimizer such as AdamW.

    Example::

        opt = toolkit.optim.Muon([p for p in model.parameters() if p.ndim == 2], lr=0.02, momentum=0.95)
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                                        DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}")

    def _init_group(self, group, params, grads, muon_momentum_bufs) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = toolkit.zeros_like(p.grad)
            muon_momentum_bufs.append(state["momentum_buffer"])

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss when one is given."""
        with toolkit.no_grad():
            loss = _run_closure(closure)
            for group in self.param_groups:
                params, grads, bufs = [], [], []
                self._init_group(group, params, grads, bufs)
                muon(params, grads, bufs, lr=group["lr"], weight_decay=group["weight_decay"],
                     momentum=group["momentum"], nesterov=group["nesterov"], ns_coefficients=group["ns_coefficients"],
                     eps=group["eps"], ns_steps=group["ns_steps"], adjust_lr_fn=group["adjust_lr_fn"],
                     has_complex=False)
        return loss


def muon(params: list[Tensor], grads: list[Tensor], muon_momentum_bufs: list[Tensor], *,
         foreach: bool | None = None, lr: float, weight_decay: float, momentum: float, nesterov: bool,
         ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float, adjust_lr_fn: str | None,
         has_complex: bool) -> None:
    """Functional Muon over lists of tensors (PyTorch's single-tensor algorithm)."""
    if foreach is not None and foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = _scalar_value(lr)
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    for i, param in enumerate(params):
        grad = grads[i]
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = muon_momentum_bufs[i]
        _lerp_(buf, grad, 1 - momentum)
        update = _lerp_(grad.clone(), buf, momentum) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, param.shape)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-adjusted_lr)
