"""The sparse kernels of ``_sparse_softmax`` / ``_sparse_log_softmax`` (``toolkit.sparse.softmax`` and
``log_softmax``): functions over the specified entries only.

The softmax treats unspecified entries as ``-inf`` (they stay unspecified), so each group of entries that
share every sparse index but ``dim`` is normalised on its own; the shift by the group maximum is a constant
for autograd, as in any stable softmax::

    toolkit.sparse.softmax(s, 1)   # row-wise over each row's entries
"""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit._core.shape import wrap_dim
from toolkit.ops import api
from toolkit.ops import registry as R
from toolkit.ops import sparse_coo as _k

from ._coo import SparseTensor, build, values_of


def _softmax(input: SparseTensor, dim: int, dtype, log: bool) -> SparseTensor:
    d = wrap_dim(dim, input.dim())
    s = input.coalesce()
    vals = values_of(s)
    if dtype is not None:
        vals = vals.to(dtype)
    sd = s.sparse_dim()
    if d >= sd:  # a dense dim: each entry's values on their own
        out = vals.log_softmax(d - sd + 1) if log else vals.softmax(d - sd + 1)
        return build(s._sp_indices, out, s.shape, True)
    others = [k for k in range(sd) if k != d]
    shape = tuple(s.shape[k] for k in others)
    _, group = np.unique(_k.linear_indices(s._sp_indices[others], shape), return_inverse=True)
    group = group.reshape(-1).astype(np.int64)
    n_groups = int(group.max()) + 1 if group.size else 0
    raw = vals.detach().numpy()
    peak = np.full((n_groups, *raw.shape[1:]), -np.inf, dtype=raw.dtype)
    np.maximum.at(peak, group, raw)
    g = toolkit.from_numpy(group)
    shifted = vals - toolkit.from_numpy(peak).index_select(0, g)
    e = shifted.exp()
    sums = toolkit.zeros((n_groups, *raw.shape[1:]), dtype=vals.dtype).index_add(0, g, e).index_select(0, g)
    out = shifted - sums.log() if log else e / sums
    return build(s._sp_indices, out, s.shape, True)


@R.get("_sparse_softmax").kernel("sparse_cpu")
def _sparse_softmax(input: SparseTensor, dim: int, dtype=None) -> SparseTensor:
    return _softmax(input, dim, dtype, False)


@R.get("_sparse_log_softmax").kernel("sparse_cpu")
def _sparse_log_softmax(input: SparseTensor, dim: int, dtype=None) -> SparseTensor:
    return _softmax(input, dim, dtype, True)


def softmax(input: SparseTensor, dim: int, *, dtype=None) -> SparseTensor:
    """Softmax over the specified entries along ``dim`` (unspecified entries count as ``-inf``)."""
    return api._sparse_softmax(input, dim, dtype)


def log_softmax(input: SparseTensor, dim: int, *, dtype=None) -> SparseTensor:
    """Log-softmax over the specified entries along ``dim`` (unspecified entries count as ``-inf``)."""
    return api._sparse_log_softmax(input, dim, dtype)
