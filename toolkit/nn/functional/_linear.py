"""``F.embedding``: PyTorch's Python signature over the registry's aten-style ``embedding`` op.

``linear`` has PyTorch's functional signature in the registry itself, so
``toolkit.nn.functional`` exports it directly; ``bilinear`` is ``torch.bilinear``.
"""

from __future__ import annotations

from ... import autograd as _autograd
from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["embedding", "bilinear"]


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Rescale (in place, untracked) the rows ``input`` uses whose ``norm_type``-norm exceeds ``max_norm``."""
    with _autograd.no_grad():
        w = weight.detach()
        idx = _api.unique(input.reshape(-1))
        rows = w.index_select(0, idx)
        norms = rows.norm(norm_type, 1)
        one = _api.ones((), dtype=norms.dtype)
        scale = _api.where(norms > max_norm, max_norm / (norms + 1e-7), one)
        w.index_copy_(0, idx, rows * scale.unsqueeze(1))


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx``'s row gets no gradient."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if sparse and weight.requires_grad and _autograd.is_grad_enabled():
        from toolkit.sparse._embedding import sparse_embedding  # noqa: PLC0415  (sparse layouts load on use)

        if input.is_floating_point():
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                               f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
                               "embedding)")
        return sparse_embedding(weight, input, padding_idx, scale_grad_by_freq)
    return _api.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1^T W_k x2 + b_k`` over the last dims of ``input1`` and ``input2``."""
    return _api.bilinear(input1, input2, weight, bias)
