"""Max unpooling: max_unpool2d and max_unpool3d, the partial inverses of max pooling.

Each value is written back at the flat index (within its plane) that max
pooling recorded, into zeros of the requested output size. The derivative with
respect to the values reads the output gradient at those same indices (a
``gather``, itself differentiable), so double backward works. ``max_unpool1d``
is ``max_unpool2d`` with a width of one, in ``toolkit.nn.functional``.

Example::

    y, idx = toolkit.nn.functional.max_pool2d(x, 2, return_indices=True)
    x_sparse = toolkit.nn.functional.max_unpool2d(y, idx, 2)
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .pooling_3d import gather_from_planes
from .registry import NN, op

_WORDS = {2: ("two", "(height, width)"), 3: ("three", "(depth, height, width)")}


def unpool_check(nd: int, shape, indices_shape, indices_dtype, output_size, stride=None, padding=None) -> tuple:
    """Check a max_unpool call as PyTorch does; return the output's spatial size."""
    word, dims = _WORDS[nd]
    if _dt.title(indices_dtype) != "Long":
        raise RuntimeError(f"elements in indices should be type int64 but got: {_dt.title(indices_dtype)}" if nd == 2
                           else "elements in indices should be type int64")
    if len(output_size) != nd:
        raise RuntimeError(f"There should be exactly {word} elements {dims} in output_size, but got "
                           f"{len(output_size)} elements.")
    for name, v in (("stride", stride), ("padding", padding)):
        if v is not None and len(v) != nd:
            raise RuntimeError(f"There should be exactly {word} elements {dims} in {name}, but got: {len(v)} elements.")
    if len(shape) not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {len(shape)} dimensions.")
    if tuple(shape) != tuple(indices_shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(shape)}) but got "
                           f"indices tensor with shape: {list(indices_shape)}")
    for d in range(1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got {list(shape)} with dimension {d} being empty.")
    if stride is not None and any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    return tuple(output_size)


def _unpool(x: np.ndarray, indices: np.ndarray, out: tuple, nd: int) -> np.ndarray:
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"max_unpool{nd}d\" not implemented for '{_dt.title(x.dtype)}'")
    plane = int(np.prod(out, dtype=np.int64))
    lead = x.shape[:-nd]
    vals = x.reshape(-1, int(np.prod(x.shape[-nd:], dtype=np.int64)))
    idx = indices.reshape(vals.shape)
    bad = (idx < 0) | (idx >= plane)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {idx[bad][0]} (output volumes are of size "
                           f"{'x'.join(map(str, out))})")
    result = np.zeros((vals.shape[0], plane), x.dtype)
    np.put_along_axis(result, idx, vals, axis=1)
    return result.reshape(lead + out)


@op("max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor", kind=NN, autocast="fp32", method=False,
    function=False, nondiff_args=("indices",))
def max_unpool2d(self, indices, output_size):
    """Write each value at its flat (H, W) index into zeros of ``output_size``."""
    out = unpool_check(2, self.shape, indices.shape, indices.dtype, output_size)
    return _unpool(self, indices, out, 2)


@max_unpool2d.meta_rule
def _(self, indices, output_size):
    out = unpool_check(2, tuple(self.shape), tuple(indices.shape), indices.dtype, output_size)
    return TensorMeta(tuple(self.shape[:-2]) + out, self.dtype, self.device)


@max_unpool2d.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 2)


def _indices(rng, lead, size, plane):
    """Distinct flat indices per plane, as max pooling with non-overlapping windows gives."""
    n = int(np.prod(lead))
    rows = [rng.permutation(plane)[:size] for _ in range(n)]
    return np.stack(rows).reshape(lead + (size,))


@max_unpool2d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 2, 2)), _indices(rng, (2, 3), 4, 16).reshape(2, 3, 2, 2), [4, 4]), {}
    yield (u(-1, 1, (2, 2, 3)), _indices(rng, (2,), 6, 35).reshape(2, 2, 3), [5, 7]), {}


@op("max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor",
    kind=NN, autocast="fp32", method=False, function=False, nondiff_args=("indices",))
def max_unpool3d(self, indices, output_size, stride, padding):
    """Write each value at its flat (D, H, W) index into zeros of ``output_size``."""
    out = unpool_check(3, self.shape, indices.shape, indices.dtype, output_size, stride, padding)
    return _unpool(self, indices, out, 3)


@max_unpool3d.meta_rule
def _(self, indices, output_size, stride, padding):
    out = unpool_check(3, tuple(self.shape), tuple(indices.shape), indices.dtype, output_size, stride, padding)
    return TensorMeta(tuple(self.shape[:-3]) + out, self.dtype, self.device)


@max_unpool3d.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 3)


@max_unpool3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 2, 2, 2)), _indices(rng, (1, 2), 8, 64).reshape(1, 2, 2, 2, 2), [4, 4, 4], [2, 2, 2],
           [0, 0, 0]), {}
    yield (u(-1, 1, (2, 1, 2, 3)), _indices(rng, (2,), 6, 60).reshape(2, 1, 2, 3), [3, 4, 5], [2, 2, 2],
           [0, 0, 0]), {}
