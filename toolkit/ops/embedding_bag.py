"""embedding_bag (and aten's _embedding_bag): sums, means or maxima of bags of embedding rows.

Bag ``b`` holds ``indices[offsets[b]:offsets[b + 1]]`` (the last bag runs to the
end of ``indices``). The four results are PyTorch's: the pooled rows, each
index's bag (``offset2bag``), each bag's size and, for 'max', the row each
maximum came from. The derivative is written with registered ops (index_select,
index_add), so it is differentiable again.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, op

MODES = {0: "sum", 1: "mean", 2: "max"}
_FAST_DTYPES = tuple(np.dtype(n) for n in ("float32", "float16"))


def _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset) -> int:
    """PyTorch's checks; returns the number of bags."""
    if len(weight.shape) != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {len(weight.shape)}")
    for name, t in (("indices", indices), ("offsets", offsets)):
        if np.dtype(t.dtype.name).name not in ("int64", "int32"):
            raise RuntimeError(f"embedding_bag: Expected tensor for argument #{2 if name == 'indices' else 3} "
                               f"'{name}' to have one of the following scalar types: Long, Int; but got "
                               f"{t.dtype} instead (while checking arguments for embedding_bag)")
    if len(indices.shape) != 1:
        raise RuntimeError(f"input has to be a 1D or 2D Tensor, but got Tensor of dimension {len(indices.shape)}")
    if len(offsets.shape) != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {len(offsets.shape)}")
    if mode not in MODES:
        raise RuntimeError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), but got {mode}")
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if tuple(per_sample_weights.shape) != tuple(indices.shape):
            raise RuntimeError(f"embedding_bag: expected per_sample_weights.sizes() == indices.sizes(), but got "
                               f"{list(per_sample_weights.shape)} and {list(indices.shape)}")
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    return max(bags, 0)


def wrap_padding_idx(padding_idx, num: int) -> int:
    """The ``.padding_idx`` overload's padding index: -1 for none, a negative one counted from the end."""
    if padding_idx is None:
        return -1
    if not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but got "
                           f"{padding_idx}")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _bag_of_each(offsets: np.ndarray, bags: int, n: int) -> np.ndarray:
    marks = np.zeros(n + 1, dtype=np.int64)
    np.add.at(marks, np.clip(offsets[1:bags], 0, n), 1)
    return np.cumsum(marks[:n])


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    bags = _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    n, dim = indices.shape[0], weight.shape[1]
    kind = indices.dtype
    indices = indices.astype(np.int64)
    offsets = offsets.astype(np.int64)
    if bags and offsets[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {offsets[0]}")
    if bags and offsets[bags - 1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{offsets[bags - 1]}")
    if n and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("embedding_bag: index out of range in self")
    if padding_idx is None:
        padding_idx = -1
    bag = _bag_of_each(offsets, bags, n)
    keep = indices != padding_idx if padding_idx >= 0 else np.ones(n, dtype=bool)
    sizes = np.bincount(bag[keep], minlength=bags).astype(np.int64)[:bags]
    rows = weight[indices]
    zero_idx = np.zeros(bags, dtype=np.int64)
    if mode == 2:
        out = np.zeros((bags, dim), dtype=weight.dtype)
        arg = np.zeros((bags, dim), dtype=np.int64)
        for b in range(bags):
            members = np.nonzero((bag == b) & keep)[0]
            if members.size:
                pick = np.argmax(rows[members], axis=0)
                out[b] = rows[members][pick, np.arange(dim)]
                arg[b] = indices[members][pick]
        return out, bag.astype(kind), sizes.astype(kind), arg.astype(kind)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    rows = rows * keep[:, None]
    out = np.zeros((bags, dim), dtype=weight.dtype)
    np.add.at(out, bag, rows)
    if mode == 1:
        out = (out / np.maximum(sizes, 1)[:, None]).astype(weight.dtype)
        return out, bag.astype(kind), sizes.astype(kind), sizes.astype(kind)
    # PyTorch's fast path for reduced-precision and float32 weights leaves offset2bag empty
    fast = padding_idx < 0 and weight.dtype in _FAST_DTYPES
    offset2bag = np.zeros(0, dtype=np.int64) if fast else bag
    return out, offset2bag.astype(kind), zero_idx.astype(kind), zero_idx.astype(kind)


_ARGS = ("Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
         "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False")
_RETURNS = " -> (Tensor, Tensor, Tensor, Tensor)"


@op(f"embedding_bag({_ARGS})" + _RETURNS, kind=NN, method=False, nondiff_args=("indices", "offsets"))
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False):
    """Pool bags of rows of ``weight`` (mode 0 sum, 1 mean, 2 max); returns (output, offset2bag, bag_size,
    max_indices) as PyTorch."""
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                          include_last_offset)


@op("embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, "
    "bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx)" + _RETURNS, kind=NN,
    method=False, nondiff_args=("indices", "offsets"))
def embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                              include_last_offset, padding_idx):
    """``embedding_bag`` leaving out the indices equal to ``padding_idx`` (None: none left out; negative: from
    the end)."""
    padding_idx = wrap_padding_idx(padding_idx, weight.shape[0])
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                          include_last_offset, padding_idx)


@op(f"_embedding_bag({_ARGS}, int padding_idx=-1)" + _RETURNS, kind=NN, method=False, function=False,
    nondiff_args=("indices", "offsets"))
def _embedding_bag_op(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                      per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    """aten's kernel behind ``embedding_bag`` (``padding_idx`` -1: none)."""
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                          include_last_offset, padding_idx)


def _meta(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
          include_last_offset=False, padding_idx=-1):
    bags = _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    padding_idx = -1 if padding_idx is None else padding_idx
    dev, i64 = weight.device, indices.dtype
    n = indices.shape[0]
    fast = mode == 0 and (padding_idx is None or padding_idx < 0) and weight.dtype in (_dt.float32, _dt.float16)
    o2b = (0,) if fast else (n,)
    arg = (bags, weight.shape[1]) if mode == 2 else (bags,)
    return (TensorMeta((bags, weight.shape[1]), weight.dtype, dev), TensorMeta(o2b, i64, dev),
            TensorMeta((bags,), i64, dev), TensorMeta(arg, i64, dev))


embedding_bag.meta_rule(_meta)
_embedding_bag_op.meta_rule(_meta)


@embedding_bag_padding_idx.meta_rule
def _(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
      padding_idx):
    return _meta(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
                 wrap_padding_idx(padding_idx, weight.shape[0]))


def _grad(grad, weight, indices, offsets, result, scale_grad_by_freq=False, mode=0, per_sample_weights=None,
          include_last_offset=False, padding_idx=-1):
    """Gradients of weight and per_sample_weights, written with registered ops.

    ``scale_grad_by_freq`` and ``padding_idx`` change the gradient on purpose (no true Jacobian), so the registry
    samples leave them out; tests/nn/test_functional_misc.py compares those gradients with PyTorch's."""
    g = grad[0]
    num, dim = weight.shape
    n = indices.shape[0]
    idx = indices.to(_dt.int64)
    bags = g.shape[0]
    if mode == 2:
        arg = result[3].to(_dt.int64)
        nonempty = (result[2] > 0).to(g.dtype).unsqueeze(1)
        flat = (arg * dim + api.arange(dim, dtype=_dt.int64, device=g.device)).reshape(-1)
        gw = api.zeros((num * dim,), dtype=g.dtype, device=g.device).index_add(0, flat, (g * nonempty).reshape(-1))
        return gw.reshape(num, dim), None
    starts = offsets.to(_dt.int64).narrow(0, 0, bags)
    marks = api.zeros((n + 1,), dtype=_dt.int64, device=g.device)
    if bags > 1:
        marks = marks.index_add(0, starts.narrow(0, 1, bags - 1).clamp(0, n),
                                api.ones((bags - 1,), dtype=_dt.int64, device=g.device))
    bag = marks.narrow(0, 0, n).cumsum(0)
    rows = g.index_select(0, bag)
    keep = (idx != padding_idx).to(g.dtype).unsqueeze(1) if padding_idx >= 0 else None
    if mode == 1:
        rows = rows / result[2].clamp(min=1).to(g.dtype).index_select(0, bag).unsqueeze(1)
    grad_psw = None
    if per_sample_weights is not None:
        grad_psw = rows * weight.index_select(0, idx)
        grad_psw = (grad_psw * keep if keep is not None else grad_psw).sum(1)
        rows = rows * per_sample_weights.unsqueeze(1)
    if keep is not None:
        rows = rows * keep
    if scale_grad_by_freq:
        counts = api.zeros((num,), dtype=g.dtype, device=g.device).index_add(
            0, idx, api.ones((n,), dtype=g.dtype, device=g.device))
        rows = rows / counts.index_select(0, idx).unsqueeze(1)
    gw = api.zeros((num, dim), dtype=g.dtype, device=g.device).index_add(0, idx, rows)
    return gw, grad_psw


embedding_bag.grad(_grad)
_embedding_bag_op.grad(_grad)


@embedding_bag_padding_idx.grad
def _(grad, weight, indices, offsets, result, scale_grad_by_freq, mode, per_sample_weights, include_last_offset,
      padding_idx):
    return _grad(grad, weight, indices, offsets, result, scale_grad_by_freq, mode, per_sample_weights,
                 include_last_offset, wrap_padding_idx(padding_idx, weight.shape[0]))


def _samples(padding: bool):
    def gen(rng):
        u = rng.uniform
        w = u(-1, 1, (6, 3))
        i = np.array([1, 2, 4, 4, 3, 0, 5])
        o = np.array([0, 2, 2, 5])
        pad = [None] if padding else []
        for mode in (0, 1, 2):
            yield (w, i, o, False, mode, False, None, False, *pad), {}
        yield (w, i, o, False, 0, False, u(0.5, 1.5, (7,)), False, *pad), {}
        yield (w, i, o, False, 1, False, None, True, *pad), {}
        yield (w, i.astype(np.int32), np.array([0, 3, 3], dtype=np.int32), False, 0, False, None, False, *pad), {}
        if padding:
            for mode in (0, 1, 2):
                yield (w, i, o, False, mode, False, None, False, 4), {}
            yield (w, i, o, False, 0, False, u(0.5, 1.5, (7,)), False, 2), {}
    return gen


embedding_bag.sample_inputs(_samples(False))
embedding_bag_padding_idx.sample_inputs(_samples(True))
_embedding_bag_op.sample_inputs(_samples(False))
