"""Fractional max pooling (Graham, 2014): fractional_max_pool2d/3d and their backward ops.

Each (batch, channel) plane draws one random number per dimension (the
``random_samples`` argument, uniform in [0, 1)), which places its pooling
windows pseudo-randomly so that the output shrinks by a non-integer ratio.
Window starts follow PyTorch's ``generate_intervals`` computed in the input's
own floating dtype, so the same samples pick the same windows as PyTorch. The
maxima run through the compiled window pass the adaptive poolings use; the
backward scatters through the flat indices and its derivative gathers.

Example::

    y, idx = toolkit.nn.functional.fractional_max_pool2d(x, 2, output_ratio=0.5, return_indices=True)
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .pooling_3d import gather_from_planes, scatter_to_planes
from .registry import NN, op

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _name(nd: int) -> str:
    return "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"


def fractional_check(nd: int, shape, kernel_size, output_size, samples_shape, dtype=None, samples_dtype=None):
    """Check a fractional max pooling call as PyTorch does; return (kernel, output size)."""
    k = tuple(kernel_size) * (nd if len(kernel_size) == 1 else 1)
    out = tuple(output_size) * (nd if len(output_size) == 1 else 1)
    if len(shape) not in (nd + 1, nd + 2):
        raise RuntimeError(f"{_name(nd)}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(shape)}")
    if samples_dtype is not None and samples_dtype != dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    batch = shape[0] if len(shape) == nd + 2 else 1
    if len(samples_shape) != 3:
        raise RuntimeError(f"Expect _random samples to be 3D tensor, got: {list(samples_shape)}")
    if samples_shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples_shape[2]}.")
    if samples_shape[1] != shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples_shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less than input batch size.")
    for name, size, kk, oo in zip(_DIM_NAMES[nd], shape[-nd:], k, out):
        if oo + kk - 1 > size:
            raise RuntimeError(f"{_name(nd)}: pool {name} {kk} too large relative to input {name} {size}")
    return k, out


def interval_starts(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """PyTorch's ``generate_intervals`` for a column of samples: (planes,) -> (planes, out) window starts."""
    dt = samples.dtype.type
    starts = np.zeros((samples.shape[0], out), np.int64)
    if out > 1:
        alpha = dt(size - pool) / dt(out - 1)
        i = np.arange(out, dtype=samples.dtype)
        s = samples[:, None]
        starts[:] = ((i + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    if out > 0:
        starts[:, -1] = size - pool
    return starts


def fractional_max(x: np.ndarray, k: tuple, out: tuple, samples: np.ndarray):
    """Values and flat per-plane indices of fractional max pooling over the last ``len(k)`` dimensions."""
    from ._pool_numba import window_max_fwd  # optional: numba, never loaded by import toolkit

    nd = len(k)
    batched = x.ndim == nd + 2
    vols = np.ascontiguousarray(x).reshape((-1,) + (1,) * (3 - nd) + x.shape[-nd:])
    planes = vols.shape[0]
    s = np.ascontiguousarray(samples[:x.shape[0] if batched else 1]).reshape(planes, nd)
    # 2-d samples are (width, height); 3-d ones (time, height, width)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    tables = [] if nd == 3 else [np.zeros((planes, 1), np.int64), np.ones((planes, 1), np.int64)]
    for axis, col in enumerate(order):
        size = x.shape[x.ndim - nd + axis]
        starts = interval_starts(s[:, col], size, out[axis], k[axis])
        tables += [starts, starts + k[axis]]
    work = vols.astype(np.float32) if vols.dtype == np.float16 else vols
    vals, idx = window_max_fwd(work, *tables)
    shape = x.shape[:-nd] + tuple(out)
    return vals.astype(x.dtype, copy=False).reshape(shape), idx.reshape(shape)


def _kernel(nd):
    def kernel(self, kernel_size, output_size, random_samples):
        k, out = fractional_check(nd, self.shape, kernel_size, output_size, random_samples.shape, self.dtype,
                                  random_samples.dtype)
        if self.dtype.kind != "f":
            raise NotImplementedError(f"\"fractional_max_pool{nd}d_out_frame\" not implemented for "
                                      f"'{_dt.title(self.dtype)}'")
        return fractional_max(self, k, out, random_samples)

    return kernel


def _meta(nd):
    def meta(self, kernel_size, output_size, random_samples):
        _, out = fractional_check(nd, tuple(self.shape), kernel_size, output_size, tuple(random_samples.shape),
                                  self.dtype, random_samples.dtype)
        m = TensorMeta(tuple(self.shape[:-nd]) + out, self.dtype, self.device)
        return m, TensorMeta(m.shape, _dt.int64, self.device)

    return meta


_FMP = dict(kind=NN, method=False, function=False, nondiff_args=("random_samples",))
fractional_max_pool2d = op(
    "fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) -> "
    "(Tensor, Tensor)", **_FMP, autocast="fp32",
    doc="2-d fractional max pooling: values and flat indices within each (H, W) plane.")(_kernel(2))
fractional_max_pool3d = op(
    "fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) -> "
    "(Tensor, Tensor)", **_FMP, autocast="fp32",
    doc="3-d fractional max pooling: values and flat indices within each (D, H, W) volume.")(_kernel(3))
fractional_max_pool2d.meta_rule(_meta(2))
fractional_max_pool3d.meta_rule(_meta(3))


@fractional_max_pool2d.grad
def _(grad, self, kernel_size, output_size, result):
    return api.fractional_max_pool2d_backward(grad[0], self, kernel_size, output_size, result[1]), None


@fractional_max_pool3d.grad
def _(grad, self, kernel_size, output_size, result):
    return api.fractional_max_pool3d_backward(grad[0], self, kernel_size, output_size, result[1]), None


@fractional_max_pool2d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 9, 9)), [2, 3], [4, 3], u(0, 1, (2, 3, 2))), {}
    yield (u(-1, 1, (2, 7, 6)), [2, 2], [5, 3], u(0, 1, (1, 2, 2))), {}
    yield (u(-1, 1, (1, 1, 5, 5)), [2, 2], [1, 4], u(0, 1, (3, 1, 2))), {}


@fractional_max_pool3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 7, 8, 9)), [2, 2, 3], [3, 4, 3], u(0, 1, (1, 2, 3))), {}
    yield (u(-1, 1, (2, 5, 4, 6)), [2, 2, 2], [3, 2, 4], u(0, 1, (1, 2, 3))), {}


def _backward(nd):
    def kernel(grad_output, self, kernel_size, output_size, indices):
        return scatter_to_planes(grad_output, indices, self.shape, nd, self.dtype)

    return kernel


def _backward_meta(grad_output, self, kernel_size, output_size, indices):
    return TensorMeta(self.shape, self.dtype, self.device)


_FMPB = dict(kind=NN, method=False, function=False, nondiff_args=("self", "indices"))
fractional_max_pool2d_backward = op(
    "fractional_max_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] output_size, "
    "Tensor indices) -> Tensor", **_FMPB,
    doc="Scatter-add the pooled gradient back to the positions of the maxima.")(_backward(2))
fractional_max_pool3d_backward = op(
    "fractional_max_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] output_size, "
    "Tensor indices) -> Tensor", **_FMPB,
    doc="Scatter-add the pooled gradient back to the positions of the maxima.")(_backward(3))
fractional_max_pool2d_backward.meta_rule(_backward_meta)
fractional_max_pool3d_backward.meta_rule(_backward_meta)


@fractional_max_pool2d_backward.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 2), None


@fractional_max_pool3d_backward.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 3), None


@fractional_max_pool2d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    x = u(-1, 1, (2, 3, 9, 9))
    idx = fractional_max(x, (2, 3), (4, 3), u(0, 1, (2, 3, 2)))[1]
    yield (u(-1, 1, (2, 3, 4, 3)), x, [2, 3], [4, 3], idx), {}


@fractional_max_pool3d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    x = u(-1, 1, (1, 2, 7, 8, 9))
    idx = fractional_max(x, (2, 2, 3), (3, 4, 3), u(0, 1, (1, 2, 3)))[1]
    yield (u(-1, 1, (1, 2, 3, 4, 3)), x, [2, 2, 3], [3, 4, 3], idx), {}
