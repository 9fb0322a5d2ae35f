"""``put``: write (or, with ``accumulate``, add) ``source`` into ``self`` seen as a 1-D tensor.

The flat-index twin of ``take``: ``index`` names positions of the flattened
``self`` (negative ones count from the end), ``source`` gives one value per
index, whatever the shapes of both::

    x = toolkit.zeros(2, 3)
    x.put_(toolkit.tensor([0, -1]), toolkit.tensor([1.0, 2.0]))  # [[1, 0, 0], [0, 0, 2]]
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from .gather_scatter import _rand
from .indexing import _np_dtype, dtype_title
from .registry import INDEXING, op


def _put_checks(self, index, source):
    if _np_dtype(index.dtype) != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {dtype_title(index.dtype)}")
    if _np_dtype(self.dtype) != _np_dtype(source.dtype):
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {dtype_title(self.dtype)} and source.dtype = {dtype_title(source.dtype)}"
        )
    n_index = int(np.prod(index.shape, dtype=np.int64))
    n_source = int(np.prod(source.shape, dtype=np.int64))
    if n_index != n_source:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {n_source}, index.numel() = {n_index}"
        )


@op("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", kind=INDEXING, out=False, inplace=True,
    nondiff_args=("index",), no_overlap=("source",))
def put(self, index, source, accumulate=False):
    """A copy of ``self`` with ``source`` written at the flat positions ``index`` (added, with ``accumulate``)."""
    _put_checks(self, index, source)
    out = self.copy()
    flat, idx = out.reshape(-1), index.reshape(-1)
    n = flat.size
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = idx[(idx >= n) | (idx < -n)][0]
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} elements.")
    if accumulate:
        np.add.at(flat, idx, source.reshape(-1))
    else:
        flat[idx] = source.reshape(-1)
    return out


@put.meta_rule
def _(self, index, source, accumulate=False):
    _put_checks(self, index, source)
    return TensorMeta(self.shape, self.dtype, self.device)


@put.grad
def _(grad, index, source_shape, accumulate):
    g_self = grad if accumulate else grad.put(index, grad.new_zeros(tuple(source_shape)))
    return g_self, grad.take(index).reshape(tuple(source_shape))


@put.sample_inputs
def _(rng):
    yield (_rand(rng, 3, 4), np.array([[0, 11], [5, -2]]), _rand(rng, 2, 2)), {}
    yield (_rand(rng, 3, 4), np.array([0, 11, 0, -1]), _rand(rng, 4)), {"accumulate": True}
    yield (_rand(rng, 4, 3).T, np.array([1, 7, 2]), _rand(rng, 3, 1)), {}
    yield (_rand(rng), np.array(0), _rand(rng)), {"accumulate": True}
    yield (_rand(rng, 2, 3), np.zeros((0,), np.int64), _rand(rng, 0)), {}
    yield (rng.integers(-9, 9, (2, 3)), np.array([4, 4, 1]), rng.integers(-9, 9, (3,))), {"accumulate": True}
