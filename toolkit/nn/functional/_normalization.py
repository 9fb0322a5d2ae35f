"""``F.batch_norm``'s eps checks over the registry op; layer_norm and group_norm come from the registry as is."""

from __future__ import annotations

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["batch_norm"]


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalize per channel (dim 1): batch statistics when training (updating the running ones), else running."""
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _api.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
