"""one_hot: integer class labels as int64 indicator vectors."""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .registry import NN, op


def _check(dtype, num_classes: int) -> None:
    if np.dtype(getattr(dtype, "name", dtype)).name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes < -1:
        raise RuntimeError("Class values must be smaller than num_classes.")


@op("one_hot(Tensor self, int num_classes=-1) -> Tensor", kind=NN, method=False, namespace="nn.functional",
    differentiable=False)
def one_hot(self, num_classes=-1):
    """``out[..., c] = 1`` where ``self == c``; ``num_classes`` -1 takes ``self.max() + 1``.

    Example: ``one_hot(tensor([0, 2]), 3)`` is ``[[1, 0, 0], [0, 0, 1]]``.
    """
    _check(self.dtype, num_classes)
    if num_classes == -1:
        if self.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(self.max()) + 1
    if self.size:
        if self.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if self.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (self[..., None] == np.arange(num_classes)).astype(np.int64)


@one_hot.meta_rule
def _(self, num_classes=-1):
    _check(self.dtype, num_classes)
    if num_classes == -1:
        raise RuntimeError("one_hot: num_classes=-1 takes the number of classes from the data; no meta shape")
    return TensorMeta(tuple(self.shape) + (num_classes,), _dt.int64, self.device)


@one_hot.sample_inputs
def _(rng):
    yield (np.array([0, 2, 1, 2]), 3), {}
    yield (np.array([[0, 2], [1, 4]]), 6), {}
    yield (np.array(1), 2), {}
    yield (np.zeros((0, 2), dtype=np.int64), 3), {}
