"""``F.embedding(..., sparse=True)``: the weight's gradient is a sparse COO tensor with one row per looked-up
index (uncoalesced: repeated indices stay repeated), as PyTorch produces it."""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.autograd import Function
from toolkit.tensor import Tensor

from ._coo import make


class _SparseEmbedding(Function):
    @staticmethod
    def forward(ctx, weight, input, padding_idx, scale_grad_by_freq):
        flat = np.ascontiguousarray(input.detach().cpu().numpy().reshape(-1), dtype=np.int64)
        ctx.lookup = (flat, tuple(weight.shape), padding_idx, scale_grad_by_freq)
        rows = weight.detach().index_select(0, toolkit.from_numpy(flat))
        return rows.reshape((*input.shape, weight.shape[1]))

    @staticmethod
    def backward(ctx, grad):
        flat, shape, padding_idx, scale = ctx.lookup
        vals = grad.reshape((-1, shape[1]))
        if scale:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        if padding_idx is not None and padding_idx >= 0:
            keep = np.flatnonzero(flat != padding_idx)
            flat = flat[keep]
            vals = vals.index_select(0, toolkit.from_numpy(keep.astype(np.int64)))
        return make(flat.reshape(1, -1).copy(), vals, shape, False), None, None, None


def sparse_embedding(weight: Tensor, input: Tensor, padding_idx: int, scale_grad_by_freq: bool) -> Tensor:
    """The rows of ``weight`` at ``input``; the gradient for ``weight`` is sparse."""
    return _SparseEmbedding.apply(weight, input, padding_idx, scale_grad_by_freq)
