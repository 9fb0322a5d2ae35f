"""Finding where values are: searchsorted, bucketize, isin and nonzero_static.

None of them is differentiable (their results are positions and flags).
``searchsorted`` runs PyTorch's binary search itself, for all values at once, so
that a NaN (in the values or the sequence) and an unsorted sequence give the
positions PyTorch gives; both sides compare in the two dtypes' promoted type.

Example::

    >>> toolkit.searchsorted(toolkit.tensor([1, 3, 5, 7]), toolkit.tensor([3, 6]))
    tensor([1, 3])
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .registry import INDEXING, op

_SCALARS = (bool, int, float, np.number, np.bool_)


def _dtype(a):
    """The toolkit dtype of an array (kernels), a tensor's metadata (meta rules) or a Python number."""
    if isinstance(a, np.ndarray):
        return _dt.from_numpy_dtype(a.dtype)
    if isinstance(a, _SCALARS):
        return _dt.scalar_default_dtype(a)
    return a.dtype


def _shape(a) -> tuple:
    return () if isinstance(a, _SCALARS) else tuple(a.shape)


def _common_dtype(*operands):
    """PyTorch's promotion of the operands: tensors with dims, then 0-d tensors, then Python numbers."""
    numbers = [a for a in operands if isinstance(a, _SCALARS)]
    tensors = [a for a in operands if not isinstance(a, _SCALARS)]
    return _dt.result_type_from([_dtype(a) for a in tensors if _shape(a)],
                                [_dtype(a) for a in tensors if not _shape(a)], numbers)


# ----------------------------------------------------------------------------- searchsorted, bucketize
def _side_is_right(right: bool, side) -> bool:
    if side is None:
        return right
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side == "right"


def _check_searchsorted(seq, values, sorter) -> None:
    seq_shape, values_shape = _shape(seq), _shape(values)
    if _dtype(seq) is _dt.bool:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    if not seq_shape:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if sorter is not None:
        if _dtype(sorter) is not _dt.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_dt.title(_dtype(sorter))}")
        if _shape(sorter) != seq_shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(seq_shape)}and got sorter tensor {list(_shape(sorter))}")
    if len(seq_shape) == 1:
        return
    if not values_shape:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({len(seq_shape)}) and input value's dim(0) numel(1)")
    if len(seq_shape) != len(values_shape) or seq_shape[:-1] != values_shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq_shape)} and input value tensor {list(values_shape)}")


def _binary_search(seq: np.ndarray, values: np.ndarray, right: bool, sorter) -> np.ndarray:
    """PyTorch's lower (upper) bound of each row of ``values`` in the same row of ``seq``: a position moves right
    while ``not seq[mid] >= value`` (``>`` for ``right``), which puts a NaN value after every element."""
    rows, n = seq.shape
    lo = np.zeros(values.shape, np.int64)
    hi = np.full(values.shape, n, np.int64)
    row = np.arange(rows)[:, None]
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = lo + ((hi - lo) >> 1)
        at = np.minimum(mid, n - 1)
        if sorter is not None:
            at = sorter[row, at]
        mid_val = seq[row, at]
        move = ~(mid_val > values) if right else ~(mid_val >= values)
        lo = np.where(active & move, mid + 1, lo)
        hi = np.where(active & ~move, mid, hi)


def _ordered(seq: np.ndarray) -> bool:
    """Ascending with no NaN: where numpy's binary search gives PyTorch's positions."""
    return bool(np.all(seq[1:] >= seq[:-1])) and not (seq.dtype.kind == "f" and np.isnan(seq[:1]).any())


def _searchsorted(seq: np.ndarray, values, out_int32: bool, right: bool, side, sorter):
    _check_searchsorted(seq, values, sorter)
    right = _side_is_right(right, side)
    common = _common_dtype(seq, values).np
    v = np.asarray(values).astype(common, copy=False)
    s = seq.astype(common, copy=False)
    out_shape = v.shape
    if s.ndim == 1:
        s, v = s.reshape(1, -1), v.reshape(1, -1)
        srt = None if sorter is None else sorter.reshape(1, -1)
    else:
        s, v = s.reshape(-1, s.shape[-1]), v.reshape(-1, v.shape[-1])
        srt = None if sorter is None else sorter.reshape(-1, sorter.shape[-1])
    if not s.shape[1]:
        pos = np.zeros(v.shape, np.int64)
    elif s.shape[0] == 1 and srt is None and _ordered(s[0]) and not (v.dtype.kind == "f" and np.isnan(v).any()):
        pos = np.searchsorted(s[0], v, side="right" if right else "left")  # the same positions, in C
    else:
        pos = _binary_search(s, v, right, srt)
    return pos.reshape(out_shape).astype(np.int32 if out_int32 else np.int64)


def _searchsorted_meta(seq, values, out_int32, right, side, sorter):
    _check_searchsorted(seq, values, sorter)
    _side_is_right(right, side)
    device = seq.device
    return TensorMeta(_shape(values), _dt.int32 if out_int32 else _dt.int64, device)


_SEARCH_TAIL = "*, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor"


@op(f"searchsorted.Tensor(Tensor sorted_sequence, Tensor self, {_SEARCH_TAIL}", kind=INDEXING, method=False,
    differentiable=False)
def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """Where each of ``self``'s values would go in the innermost dim of ``sorted_sequence`` to keep it sorted: the
    first such position, or the last with ``right`` (``side="right"``); ``sorter`` sorts an unsorted sequence."""
    return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)


@op(f"searchsorted.Scalar(Tensor sorted_sequence, Scalar self, {_SEARCH_TAIL}", kind=INDEXING, method=False,
    differentiable=False)
def searchsorted_scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """:func:`searchsorted` of one number: a 0-d result."""
    return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)


searchsorted.meta_rule(_searchsorted_meta)
searchsorted_scalar.meta_rule(_searchsorted_meta)


@searchsorted.sample_inputs
def _(rng):
    seq = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
    values = np.array([[2.0, 0.0, 5.0], [6.0, 2.5, 1.0]])
    yield (seq, values), {}
    yield (seq, values), {"right": True}
    yield (seq, values), {"side": "right", "out_int32": True}
    yield (np.sort(rng.uniform(0, 1, (2, 6)), 1), rng.uniform(0, 1, (2, 3))), {}  # one sequence per row
    yield (np.array([1.0, 2.0, np.nan]), np.array([np.nan, 2.0, 9.0])), {}  # NaN: after every element
    yield (np.array([1, 3, 5, 7]), np.array([2.5, 7.0])), {"right": True}  # compared in the promoted dtype
    yield (np.array([1.0, 2.0]), np.zeros(0)), {}
    yield (np.zeros(0), np.array([1.0])), {}


@searchsorted_scalar.sample_inputs
def _(rng):
    yield (np.array([1.0, 2.0, 2.0, 3.0]), 2), {}
    yield (np.array([1, 2, 2, 3]), 2.5), {"right": True}
    yield (np.array([1.0, 2.0, 2.0, 3.0]), 2.0), {"side": "right", "out_int32": True}


def _check_boundaries(boundaries) -> None:
    if len(_shape(boundaries)) != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({len(_shape(boundaries))})")


@op("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    kind=INDEXING, method=False, differentiable=False)
def bucketize(self, boundaries, out_int32=False, right=False):
    """The bucket of each value of ``self`` among the sorted 1-D ``boundaries``: :func:`searchsorted` with the
    arguments the other way round (``right`` puts a value equal to a boundary in the bucket after it)."""
    _check_boundaries(boundaries)
    return _searchsorted(boundaries, self, out_int32, right, None, None)


@op("bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    kind=INDEXING, out=False, method=False, differentiable=False)
def bucketize_scalar(self, boundaries, out_int32=False, right=False):
    """:func:`bucketize` of one number: a 0-d result."""
    _check_boundaries(boundaries)
    return _searchsorted(boundaries, self, out_int32, right, None, None)


def _bucketize_meta(self, boundaries, out_int32=False, right=False):
    _check_boundaries(boundaries)
    return _searchsorted_meta(boundaries, self, out_int32, right, None, None)


bucketize.meta_rule(_bucketize_meta)
bucketize_scalar.meta_rule(_bucketize_meta)


@bucketize.sample_inputs
def _(rng):
    boundaries = np.array([1.0, 3.0, 5.0, 7.0])
    yield (np.array([[0.0, 3.0, 6.0], [7.0, 9.0, 1.0]]), boundaries), {}
    yield (np.array([0.0, 3.0, 6.0, 7.0]), boundaries), {"right": True, "out_int32": True}
    yield (np.array(4), boundaries), {}
    yield (rng.integers(0, 9, 6), np.array([2, 4])), {}


@bucketize_scalar.sample_inputs
def _(rng):
    yield (3, np.array([1.0, 3.0, 5.0])), {}
    yield (3.0, np.array([1, 3, 5])), {"right": True}


# ----------------------------------------------------------------------------- isin
def _check_isin(*operands) -> None:
    for a in operands:
        if _dtype(a) is _dt.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")


def _isin(elements, test_elements, invert: bool) -> np.ndarray:
    _check_isin(elements, test_elements)
    common = _common_dtype(elements, test_elements).np
    e = np.asarray(elements).astype(common, copy=False)
    t = np.asarray(test_elements).astype(common, copy=False).reshape(-1)
    t = t[~np.isnan(t)] if t.dtype.kind == "f" else t  # NaN equals nothing
    return np.asarray(np.isin(e, t, invert=invert))


_ISIN_TAIL = "*, bool assume_unique=False, bool invert=False) -> Tensor"


@op(f"isin.Tensor_Tensor(Tensor elements, Tensor test_elements, {_ISIN_TAIL}", kind=INDEXING, method=False,
    differentiable=False)
def isin(elements, test_elements, assume_unique=False, invert=False):
    """Whether each of ``elements`` equals some value of ``test_elements`` (compared in their promoted dtype; NaN
    equals nothing); ``invert`` negates the result. ``assume_unique`` changes nothing here."""
    return _isin(elements, test_elements, invert)


@op(f"isin.Tensor_Scalar(Tensor elements, Scalar test_element, {_ISIN_TAIL}", kind=INDEXING, method=False,
    differentiable=False)
def isin_tensor_scalar(elements, test_element, assume_unique=False, invert=False):
    """:func:`isin` with one test value."""
    return _isin(elements, test_element, invert)


@op(f"isin.Scalar_Tensor(Scalar element, Tensor test_elements, {_ISIN_TAIL}", kind=INDEXING, method=False,
    differentiable=False)
def isin_scalar_tensor(element, test_elements, assume_unique=False, invert=False):
    """:func:`isin` of one number: a 0-d result."""
    return _isin(element, test_elements, invert)


def _isin_meta(elements, test_elements, assume_unique=False, invert=False):
    _check_isin(elements, test_elements)
    device = getattr(elements, "device", None) or test_elements.device
    return TensorMeta(_shape(elements), _dt.bool, device)


for _o in (isin, isin_tensor_scalar, isin_scalar_tensor):
    _o.meta_rule(_isin_meta)


@isin.sample_inputs
def _(rng):
    yield (rng.integers(0, 6, (3, 4)), np.array([1, 4, 9])), {}
    yield (rng.integers(0, 6, (3, 4)), np.array([1, 4, 9])), {"invert": True, "assume_unique": True}
    yield (np.array([1, 2, 3]), np.array([2.0, 3.5])), {}  # compared in the promoted dtype
    yield (np.array([1.0, np.nan, 2.0]), np.array([np.nan, 1.0])), {}
    yield (np.zeros((0, 2)), np.array([1.0])), {}
    yield (np.array([1.0, 2.0]), np.zeros(0)), {}


@isin_tensor_scalar.sample_inputs
def _(rng):
    yield (np.array([[1, 2], [3, 2]]), 2), {}
    yield (np.array([1.0, 2.5]), 2.5), {"invert": True}


@isin_scalar_tensor.sample_inputs
def _(rng):
    yield (2, np.array([2.0, 3.5])), {}
    yield (2.5, np.array([1, 2])), {"invert": True}


# ----------------------------------------------------------------------------- nonzero_static
def _check_size(size: int) -> None:
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")


@op("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor", kind=INDEXING, differentiable=False)
def nonzero_static(self, size, fill_value=-1):
    """The coordinates of the first ``size`` nonzero elements, one row each, padded with rows of ``fill_value``:
    :func:`nonzero` with a shape known before the data is."""
    _check_size(size)
    coords = np.stack(np.nonzero(self), axis=1) if self.ndim else np.zeros((int(bool(self)), 0), np.int64)
    out = np.full((size, self.ndim), fill_value, np.int64)
    n = min(size, coords.shape[0])
    out[:n] = coords[:n]
    return out


@nonzero_static.meta_rule
def _(self, size, fill_value=-1):
    _check_size(size)
    return TensorMeta((size, len(self.shape)), _dt.int64, self.device)


@nonzero_static.sample_inputs
def _(rng):
    yield (rng.integers(0, 2, (3, 4)).astype(np.float64),), {"size": 4}
    yield (rng.integers(0, 2, (3, 4)).astype(np.float64),), {"size": 20, "fill_value": 7}
    yield (np.array([[0, 1], [2, 0]]),), {"size": 0}
    yield (np.array(3.0),), {"size": 2}
    yield (np.zeros((0, 3)),), {"size": 2}
    yield (np.array([True, False, True]),), {"size": 3}
