"""Combinations of elements and positions: combinations, cartesian_prod, unravel_index.

``combinations`` gathers the r-element combinations of a 1-D tensor (in
itertools' order, as PyTorch gives them), so its gradient adds each output
element's gradient back to the element it came from. ``cartesian_prod`` is
PyTorch's composition of ``meshgrid`` and ``stack``, and ``unravel_index`` its
Python function over integer division.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import INDEXING, SHAPE, op


def _vector(shape) -> int:
    if len(shape) != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(shape)}")
    return shape[0]


# ---------------------------------------------------------------------------------------------
# combinations
# ---------------------------------------------------------------------------------------------
def combination_indices(n: int, r: int, with_replacement: bool) -> np.ndarray:
    """The ``(count, r)`` positions of every r-element combination of ``n`` elements, in itertools' order."""
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return np.array(list(pick(range(n), r)), dtype=np.int64).reshape(-1, r)


def _combinations_shape(n: int, r: int, with_replacement: bool) -> tuple:
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return (0,)
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    return (count, r)


@op("combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor", kind=SHAPE, out=False, method=False,
    composite=True)
def combinations(self, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements, one per row (Python's ``itertools`` order):
    ``index_select`` at the combinations' positions, so it runs on every device.

    >>> toolkit.combinations(toolkit.tensor([1, 2, 3]), r=2)
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    n = _vector(tuple(self.shape))
    if r == 0:
        return api.empty((0,), dtype=self.dtype, device=self.device)
    positions = combination_indices(n, r, with_replacement)
    index = self.new_tensor(positions.reshape(-1), dtype=_dt.int64)
    return api.index_select(self, 0, index).reshape(positions.shape)


@combinations.meta_rule
def _(self, r=2, with_replacement=False):
    return TensorMeta(_combinations_shape(_vector(self.shape), r, with_replacement), self.dtype, self.device)


@combinations.grad
def _(grad, self_shape, r, with_replacement):
    total = grad.new_zeros(self_shape)
    if r == 0:
        return total
    index = grad.new_tensor(combination_indices(self_shape[0], r, with_replacement).reshape(-1), dtype=_dt.int64)
    return api.index_add(total, 0, index, grad.reshape(-1))


@combinations.sample_inputs
def _(rng):
    x = rng.standard_normal(4)
    yield (x,), {}
    yield (x, 3), {}
    yield (x, 2, True), {}
    yield (x,), {"r": 1, "with_replacement": False}
    yield (x, 5), {}
    yield (x, 0), {}
    yield (np.arange(3), 2), {}


# ---------------------------------------------------------------------------------------------
# cartesian_prod
# ---------------------------------------------------------------------------------------------
def _check_vectors(tensors) -> None:
    for t in tensors:
        _vector(tuple(t.shape))


@op("cartesian_prod(Tensor[] tensors) -> Tensor", kind=SHAPE, out=False, method=False, composite=True)
def cartesian_prod(tensors):
    """Every tuple of one element from each 1-D tensor, one per row (itertools.product's order); one tensor
    comes back as it is."""
    _check_vectors(tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = api.meshgrid(list(tensors), indexing="ij")
    return api.stack([g.flatten() for g in grids], 1)


@cartesian_prod.meta_rule
def _(tensors):
    _check_vectors(tensors)
    if len(tensors) == 1:
        return TensorMeta(tuple(tensors[0].shape), tensors[0].dtype, tensors[0].device)
    return TensorMeta((math.prod(t.shape[0] for t in tensors), len(tensors)), tensors[0].dtype, tensors[0].device)


@cartesian_prod.grad
def _(grad, tensors_shape):
    if len(tensors_shape) == 1:
        return [grad]
    sizes = [s[0] for s in tensors_shape]
    out = []
    for i in range(len(sizes)):
        column = grad.select(1, i).reshape(sizes)
        others = tuple(d for d in range(len(sizes)) if d != i)
        out.append(column.sum(others))
    return out


@cartesian_prod.sample_inputs
def _(rng):
    yield (rng.standard_normal(3), rng.standard_normal(2)), {}  # separate tensors, as torch.cartesian_prod takes
    yield (rng.standard_normal(2), rng.standard_normal(1), rng.standard_normal(3)), {}
    yield (rng.standard_normal(4),), {}
    yield (np.arange(2), np.arange(3)), {}


# ---------------------------------------------------------------------------------------------
# unravel_index
# ---------------------------------------------------------------------------------------------
def _unravel_shape(indices_dtype, shape) -> tuple:
    if indices_dtype.is_floating_point or indices_dtype.is_complex or indices_dtype is _dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices_dtype}")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    return shape


@op("unravel_index(Tensor indices, int[] shape) -> Tensor[]", kind=INDEXING, method=False, composite=True,
    differentiable=False)
def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of each flat (row-major) index: a tuple of one int64 tensor
    per dim. Indices out of range wrap around, as PyTorch's (negative ones count from the end).

    >>> toolkit.unravel_index(toolkit.tensor([5, 7]), (3, 4))
    (tensor([1, 1]), tensor([1, 3]))
    """
    shape = _unravel_shape(indices.dtype, shape)
    coefs = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    coords = indices.to(_dt.int64).unsqueeze(-1)
    divisors = indices.new_tensor(coefs, dtype=_dt.int64)
    sizes = indices.new_tensor(shape, dtype=_dt.int64)
    return coords.div(divisors, rounding_mode="floor").remainder(sizes).unbind(-1)


@unravel_index.meta_rule
def _(indices, shape):
    shape = _unravel_shape(indices.dtype, shape)
    return [TensorMeta(tuple(indices.shape), _dt.int64, indices.device) for _ in shape]


@unravel_index.sample_inputs
def _(rng):
    yield (np.array([5, 7, 0]), (3, 4)), {}
    yield (np.array(5), [6]), {}
    yield (np.array([[1, 23], [-1, 12]]), (2, 3, 4)), {}
    yield (np.array([0]), ()), {}
