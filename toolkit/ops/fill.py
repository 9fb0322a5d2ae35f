"""``fill``: a tensor shaped, typed and laid out like ``self``, every element ``value``.

The out-of-place form of ``fill_``, as PyTorch composes it: a new tensor like
``self`` filled in place. The result takes part in autograd as PyTorch's does:
its gradient is zero for ``self`` and, for a 0-dim tensor ``value``, the sum of
the output's gradient.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from . import api
from .registry import FACTORY, op


def _like(self):
    """A fresh tensor like ``self``: a clone when ``self`` requires grad, so the fill's zero gradient reaches it."""
    return api.clone(self) if self.requires_grad else api.empty_like(self)


@op("fill.Scalar(Tensor self, Scalar value) -> Tensor", kind=FACTORY, method=False, composite=True)
def fill(self, value):
    """A tensor like ``self`` (shape, dtype, device, strides) filled with ``value``, cast to ``self``'s dtype.

    >>> toolkit.fill(toolkit.zeros(2, dtype=toolkit.int32), 3.7)
    tensor([3, 3], dtype=toolkit.int32)
    """
    return _like(self).fill_(value)


@op("fill.Tensor(Tensor self, Tensor value) -> Tensor", kind=FACTORY, method=False, composite=True)
def fill_tensor(self, value):
    """A tensor like ``self`` filled with the value of the 0-dim tensor ``value``."""
    if value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    return _like(self).fill_(value)


@fill.meta_rule
def _(self, value):
    return TensorMeta(self.shape, self.dtype, self.device)


@fill_tensor.meta_rule
def _(self, value):
    if len(value.shape) != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {len(value.shape)} "
                           "dimensions.")
    return TensorMeta(self.shape, self.dtype, self.device)


@fill.grad
def _(grad):
    return api.zeros_like(grad)


@fill_tensor.grad
def _(grad):
    return api.zeros_like(grad), grad.sum()


@fill.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), 1.5), {}
    yield (np.arange(4, dtype=np.int32), 3.7), {}
    yield (rng.standard_normal((3, 2)).T, -2), {}
    yield (np.zeros(3, dtype=np.bool_), 1), {}


@fill_tensor.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), np.array(2.5)), {}
    yield (np.arange(4, dtype=np.int64), np.array(7.9)), {}
    yield (rng.standard_normal(4).astype(np.float32), np.array(-1.0, dtype=np.float64)), {}


