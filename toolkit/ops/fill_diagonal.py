"""``fill_diagonal_``: write one value along the main diagonal of a matrix or an equal-sided tensor.

The diagonal is the positions ``(i, i, ..., i)``; a tall matrix with ``wrap=True``
continues it after every ``width + 1`` rows, as numpy's ``fill_diagonal`` does::

    toolkit.zeros(3, 3).fill_diagonal_(1.0)  # the identity
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from . import api
from .registry import INPLACE, op


def _fill_diagonal_checks(shape: tuple) -> None:
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(n != shape[0] for n in shape):
        raise RuntimeError("all dimensions of input must be of equal length")


@op("fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!)", kind=INPLACE,
    function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal of ``self`` with ``fill_value`` (``wrap``: repeat it down a tall matrix)."""
    _fill_diagonal_checks(self.shape)
    out = np.array(self, order="C")
    flat = out.reshape(-1)
    step = sum(int(np.prod(self.shape[k + 1:], dtype=np.int64)) for k in range(self.ndim))
    count = min(self.shape[0], self.shape[1])
    if wrap and self.ndim == 2 and self.shape[0] > self.shape[1] + 1:
        count = -(-out.size // step)  # the diagonal's positions continue every width + 1 elements
    flat[np.arange(count, dtype=np.int64) * step] = fill_value
    return out


@fill_diagonal_.meta_rule
def _(self, fill_value, wrap=False):
    _fill_diagonal_checks(tuple(self.shape))
    return TensorMeta(self.shape, self.dtype, self.device)


@fill_diagonal_.grad
def _(grad, wrap):
    return api.clone(grad).fill_diagonal_(0, wrap)
