"""``SparseAdam``: Adam restricted to the entries a sparse gradient holds (``nn.Embedding(sparse=True)``)."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit.ops.sparse_coo import linear_indices
from toolkit.tensor import Tensor

from .optimizer import Optimizer, _check_options, _run_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, constructed and validated as ``torch.optim.SparseAdam``.

    It only accepts sparse-layout gradients (``nn.Embedding(sparse=True)`` gives them); a dense gradient gets
    PyTorch's error, and parameters without a gradient are skipped, as in PyTorch.

    Example::

        opt = toolkit.optim.SparseAdam(embedding.parameters(), lr=1e-3)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        _check_options({"lr": lr, "eps": eps, "betas": betas}, positive=("lr", "eps"))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params, complex_params = [], []
        for index, param_group in enumerate(self.param_groups):
            for d_index, d_param in enumerate(param_group["params"]):
                if getattr(d_param, "is_sparse", False):
                    sparse_params.append([index, d_index])
                if d_param.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support complex parameters")

    def step(self, closure=None):
        """One step of Adam on the rows a (coalesced) sparse gradient holds; a dense gradient raises
        ``RuntimeError`` as in PyTorch. The moments of rows the gradient lacks are left as they are."""
        with toolkit.no_grad():
            loss = _run_closure(closure)
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not getattr(p.grad, "is_sparse", False):
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam instead")
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = toolkit.zeros_like(p, memory_format=toolkit.preserve_format)
                        state["exp_avg_sq"] = toolkit.zeros_like(p, memory_format=toolkit.preserve_format)
                    state["step"] += 1
                    _sparse_adam_row_update(p, p.grad, state, group["lr"], beta1, beta2, group["eps"],
                                            group["maximize"])
        return loss


def _sparse_adam_row_update(p: Tensor, grad: Tensor, state: dict, lr, beta1: float, beta2: float, eps: float,
                            maximize: bool) -> None:
    """PyTorch's sparse Adam update, written over the flattened rows the gradient's indices name."""
    g = grad.coalesce()
    sd = g.sparse_dim()
    lin = toolkit.from_numpy(linear_indices(g._sp_indices, tuple(p.shape[:sd])))
    vals = g._values()
    if maximize:
        vals = -vals
    rows = (-1, *p.shape[sd:])
    m, v, flat_p = state["exp_avg"].view(rows), state["exp_avg_sq"].view(rows), p.view(rows)
    old_m, old_v = m.index_select(0, lin), v.index_select(0, lin)
    m_update = (vals - old_m) * (1 - beta1)
    v_update = (vals * vals - old_v) * (1 - beta2)
    m.index_add_(0, lin, m_update)
    v.index_add_(0, lin, v_update)
    numer = m_update + old_m
    denom = (v_update + old_v).sqrt() + eps
    step = state["step"]
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    flat_p.index_add_(0, lin, -step_size * (numer / denom))
