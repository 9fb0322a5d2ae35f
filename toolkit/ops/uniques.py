"""Distinct values: unique (sorted) and unique_consecutive (runs of equal neighbours).

Both return the values alone, or a tuple with the inverse indices (where each
element went) and the counts when asked, as ``torch.unique`` does; with ``dim``
they compare whole slices along it. NaN equals nothing, so each NaN is its own
run.

Example::

    >>> toolkit.unique_consecutive(toolkit.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from .complex_refusal import no_complex_kernel, refuse_complex
from .registry import SHAPE, op


# ----------------------------------------------------------------------------- unique
def _unique_result(*outputs):
    """``unique`` returns the tensor alone, or a tuple when inverse indices or counts were asked for."""
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _check_unique_dim(shape, dim):
    if dim is None:
        return None
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, len(shape), "unique")
    if any(s == 0 for i, s in enumerate(shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return d


def _unique_parts(self: np.ndarray, dim):
    d = _check_unique_dim(self.shape, dim)
    if d is None:
        values, inverse, counts = np.unique(self.reshape(-1), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        return values, inverse.reshape(self.shape), counts
    if self.shape[d] == 0:
        return self.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    values, inverse, counts = np.unique(self, return_inverse=True, return_counts=True, axis=d)
    return values, inverse.reshape(-1), counts


@op("unique(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False, int? dim=None) "
    "-> (Tensor, Tensor, Tensor)", kind=SHAPE, out=False, differentiable=False)
def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (or slices along ``dim``) in ascending order, with inverse indices and counts on request.

    Returns a tensor, or a tuple ``(values, inverse, counts)`` holding the parts asked for, as ``torch.unique``.
    """
    values, inverse, counts = _unique_parts(self, dim)
    out = [values]
    if return_inverse:
        out.append(inverse.astype(np.int64, copy=False))
    if return_counts:
        out.append(counts.astype(np.int64, copy=False))
    return tuple(out)


unique.return_type = _unique_result


@unique.meta_rule
def _(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    shape = tuple(self.shape)
    d = _check_unique_dim(shape, dim)
    data = getattr(self, "_data", None)
    n = len(_unique_parts(data, dim)[2]) if isinstance(data, np.ndarray) else None  # known only for real data
    if d is None:
        out = [TensorMeta((n,), self.dtype, self.device)]
        inverse = shape
    else:
        out = [TensorMeta(shape[:d] + (n,) + shape[d + 1:], self.dtype, self.device)]
        inverse = (shape[d],)
    if return_inverse:
        out.append(TensorMeta(inverse, _dt.int64, self.device))
    if return_counts:
        out.append(TensorMeta((n,), _dt.int64, self.device))
    return out[0] if len(out) == 1 else tuple(out)


@unique.sample_inputs
def _(rng):
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 1.0, 3.0])
    yield (x,), {}
    yield (x,), {"return_inverse": True, "return_counts": True}
    yield (x.reshape(1, 7),), {"return_counts": True}
    yield (rng.integers(0, 3, (4, 3)).astype(np.float64).T,), {"return_inverse": True}
    yield (np.array([[1, 2], [1, 2], [0, 5]]),), {"dim": 0, "return_inverse": True, "return_counts": True}
    yield (np.array([[1, 2, 1], [3, 4, 3]]),), {"dim": -1}
    yield (np.array(2.0),), {"return_inverse": True}
    yield (np.zeros((0, 2)),), {"return_inverse": True, "return_counts": True}
    yield (np.zeros((0, 2)),), {"dim": 0}
    yield (np.array([True, False, True]),), {"return_counts": True}


# ----------------------------------------------------------------------------- unique_consecutive
def _runs(starts: np.ndarray):
    """Inverse indices and lengths of the runs beginning where ``starts`` is True."""
    return np.cumsum(starts) - 1, np.diff(np.append(np.flatnonzero(starts), len(starts)))


def _consecutive_parts(self: np.ndarray, dim):
    d = _check_unique_dim(self.shape, dim)
    if d is None:
        flat = self.reshape(-1)
        if not flat.size:
            return flat.copy(), np.zeros(self.shape, np.int64), np.zeros(0, np.int64)
        starts = np.ones(flat.size, bool)
        starts[1:] = flat[1:] != flat[:-1]
        inverse, counts = _runs(starts)
        return flat[starts], inverse.reshape(self.shape), counts
    m = self.shape[d]
    if m == 0:
        return self.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = np.moveaxis(self, d, 0).reshape(m, -1)
    starts = np.ones(m, bool)
    starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    inverse, counts = _runs(starts)
    return np.take(self, np.flatnonzero(starts), axis=d), inverse, counts


@op("unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) "
    "-> (Tensor, Tensor, Tensor)", kind=SHAPE, out=False, differentiable=False)
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """The first value of each run of equal neighbours (flattened, or slices along ``dim``), with inverse indices
    and run lengths on request: a tensor, or a tuple holding the parts asked for, as ``torch.unique_consecutive``."""
    values, inverse, counts = _consecutive_parts(self, dim)
    out = [values]
    if return_inverse:
        out.append(inverse.astype(np.int64, copy=False))
    if return_counts:
        out.append(counts.astype(np.int64, copy=False))
    return tuple(out)


unique_consecutive.return_type = _unique_result


@unique_consecutive.meta_rule
def _(self, return_inverse=False, return_counts=False, dim=None):
    shape = tuple(self.shape)
    d = _check_unique_dim(shape, dim)
    data = getattr(self, "_data", None)
    n = len(_consecutive_parts(data, dim)[2]) if isinstance(data, np.ndarray) else None  # known only with data
    out = [TensorMeta((n,) if d is None else shape[:d] + (n,) + shape[d + 1:], self.dtype, self.device)]
    if return_inverse:
        out.append(TensorMeta(shape if d is None else (shape[d],), _dt.int64, self.device))
    if return_counts:
        out.append(TensorMeta((n,), _dt.int64, self.device))
    return out[0] if len(out) == 1 else tuple(out)


@unique_consecutive.sample_inputs
def _(rng):
    x = np.array([3.0, 3.0, 1.0, 3.0, 2.0, 2.0, 2.0])
    yield (x,), {}
    yield (x,), {"return_inverse": True, "return_counts": True}
    yield (np.array([1.0, 1.0, np.nan, np.nan, 2.0]),), {"return_counts": True}  # NaN equals nothing
    yield (rng.integers(0, 2, (4, 3)).astype(np.float64).T,), {"return_inverse": True}
    yield (np.array([[1, 2], [1, 2], [3, 4], [1, 2]]),), {"dim": 0, "return_inverse": True, "return_counts": True}
    yield (np.array([[1, 1, 2], [3, 3, 4]]),), {"dim": -1, "return_counts": True}
    yield (np.array(2.0),), {"return_inverse": True, "return_counts": True}
    yield (np.zeros((0, 2)),), {"return_inverse": True, "return_counts": True}
    yield (np.zeros((0, 2)),), {"dim": 0, "return_inverse": True}
    yield (np.array([True, True, False]),), {"return_counts": True}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("unique",), no_complex_kernel("unique"))
