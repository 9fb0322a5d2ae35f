"""``F.normalize``: divide by the ``p``-norm along ``dim``, kept away from zero by ``eps``."""

from __future__ import annotations

from ... import autograd as _autograd
from ...tensor import Tensor

__all__ = ["normalize"]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``, as PyTorch composes it (so its gradient is PyTorch's).

    Example: ``F.normalize(x, dim=-1)`` gives rows of unit Euclidean length.
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    if _autograd.is_grad_enabled() and (input.requires_grad or out.requires_grad):
        raise RuntimeError("div(): functions with out=... arguments don't support automatic differentiation, but "
                           "one of the arguments requires grad.")
    result = input / denom
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    return out.copy_(result)
