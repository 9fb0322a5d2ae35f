"""``SparseAdam``: Adam restricted to the entries a sparse gradient holds (``nn.Embedding(sparse=True)``)."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.tensor import Tensor

from .optimizer import Optimizer, _check_options, _run_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, constructed and validated as ``torch.optim.SparseAdam``.

    It only accepts sparse-layout gradients; toolkit tensors are dense, so ``step`` refuses every gradient it
    meets with PyTorch's error (parameters without a gradient are skipped, as in PyTorch).

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
        """Perform a single optimization step; a dense gradient raises ``RuntimeError`` as in PyTorch."""
        with toolkit.no_grad():
            loss = _run_closure(closure)
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None and not getattr(p.grad, "is_sparse", False):
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
