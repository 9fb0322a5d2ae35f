"""Adaptive pooling beyond adaptive_avg_pool2d: adaptive_avg_pool1d/3d, adaptive_max_pool1d/2d/3d, and backwards.

Adaptive pooling picks window ``i`` of a dimension as PyTorch does,
``[floor(i*size/out), ceil((i+1)*size/out))``. Averages are separable, so they
are one small averaging matmul per dimension (the matrices of ``pooling.py``);
maxima run one compiled pass over the windows (``_pool_numba.window_max_fwd``)
that yields values and flat indices within each plane, whose backward scatters
through the indices and whose double backward gathers. The 1-d ops are the 2-d
ones with a height of one.

Example::

    values, indices = toolkit.adaptive_max_pool1d(x, [4])
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .grad_fn_rules import adaptive_avg_node
from .pooling import adaptive_avg_matrix
from .pooling_3d import gather_from_planes, scatter_to_planes
from .registry import NN, op


def adaptive_windows(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of each of ``out`` adaptive windows over ``size`` elements."""
    i = np.arange(out, dtype=np.int64)
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_check(name: str, shape, output_size, nd: int, max_pool: bool = False) -> tuple:
    """Check an adaptive pooling call as PyTorch does; return the output's spatial size."""
    out = tuple(output_size)
    if len(out) == 1 and not max_pool:
        out = out * nd
    if len(out) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}" if max_pool
                           else f"{name}: output_size must be {nd}")
    if len(shape) not in (nd + 1, nd + 2):
        got = ":" if max_pool else ""
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{got} {list(shape)}")
    for d in range(1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(shape)} with dimension {d} being empty")
    if any(o < 0 for o in out):
        if max_pool:
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                               f"{list(shape[:-nd]) + list(out)}")
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    return out


def check_1d(name: str, shape, output_size) -> None:
    """The checks PyTorch's 1-d adaptive poolings make before calling the 2-d op."""
    if len(shape) not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {len(shape)}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")
    if len(output_size) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(output_size)})")


def _require_float(name: str, dtype) -> None:
    if np.dtype(dtype).kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dt.title(np.dtype(dtype))}'")


# ---------------------------------------------------------------------------------------------
# Adaptive average pooling
# ---------------------------------------------------------------------------------------------
@op("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor", kind=NN, method=False, composite=True)
def adaptive_avg_pool1d(self, output_size):
    """Average pooling of a (N, C, L) or (C, L) input to ``output_size`` positions: ``adaptive_avg_pool2d`` of a
    height-one view, as PyTorch composes it."""
    check_1d("adaptive_avg_pool1d", tuple(self.shape), output_size)
    return api.adaptive_avg_pool2d(self.unsqueeze(-2), (1,) + tuple(output_size)).squeeze(-2)


@adaptive_avg_pool1d.meta_rule
def _(self, output_size):
    check_1d("adaptive_avg_pool1d", tuple(self.shape), output_size)
    return TensorMeta(tuple(self.shape[:-1]) + (output_size[0],), self.dtype, self.device)


@adaptive_avg_pool1d.grad
def _(grad, self_shape):
    zeros = api.zeros(tuple(self_shape[:-1]) + (1, self_shape[-1]), dtype=grad.dtype, device=grad.device)
    return api._adaptive_avg_pool2d_backward(grad.unsqueeze(-2), zeros).squeeze(-2)


@adaptive_avg_pool1d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 8)), [4]), {}
    yield (u(-1, 1, (3, 7)), [3]), {}
    yield (u(-1, 1, (1, 2, 5)), [7]), {}


def _pool3_matrices(shape, out, dtype):
    return [adaptive_avg_matrix(n, o, dtype) for n, o in zip(shape[-3:], out)]


def _apply3(x, mats, transpose=False):
    """Apply one (out, in) matrix per trailing dimension of ``x`` (its transpose with ``transpose``)."""
    md, mh, mw = (m.T for m in mats) if transpose else mats
    y = x @ mw.T
    y = mh @ y
    return np.moveaxis(np.tensordot(md, y, axes=(1, y.ndim - 3)), 0, -3)


@op("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor", kind=NN, autocast="fp32", method=False,
    namespace="nn.functional", grad_fn=adaptive_avg_node(3))
def adaptive_avg_pool3d(self, output_size):
    """Average pooling of a (N, C, D, H, W) or (C, D, H, W) input to a fixed size: one matmul per dimension."""
    out = adaptive_check("adaptive_avg_pool3d", self.shape, output_size, 3)
    _require_float("adaptive_avg_pool3d_cpu", self.dtype)
    return np.ascontiguousarray(_apply3(self, _pool3_matrices(self.shape, out, self.dtype)), self.dtype)


@adaptive_avg_pool3d.meta_rule
def _(self, output_size):
    out = adaptive_check("adaptive_avg_pool3d", tuple(self.shape), output_size, 3)
    return TensorMeta(tuple(self.shape[:-3]) + out, self.dtype, self.device)


@adaptive_avg_pool3d.grad
def _(grad, self_shape):
    return api._adaptive_avg_pool3d_backward(grad, api.zeros(self_shape, dtype=grad.dtype, device=grad.device))


@adaptive_avg_pool3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4, 4)), 2), {}
    yield (u(-1, 1, (1, 5, 7, 3)), (3, 2, 4)), {}
    yield (u(-1, 1, (1, 1, 3, 4, 5)), [1, 1, 1]), {}


@op("_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor", kind=NN, function=False,
    method=False, nondiff_args=("self",))
def _adaptive_avg_pool3d_backward(grad_output, self):
    """Spread each pooled gradient evenly over its adaptive window (the transposed averaging matmuls)."""
    mats = _pool3_matrices(self.shape, grad_output.shape[-3:], self.dtype)
    return np.ascontiguousarray(_apply3(grad_output.astype(self.dtype, copy=False), mats, True), self.dtype)


@_adaptive_avg_pool3d_backward.meta_rule
def _(grad_output, self):
    return TensorMeta(self.shape, self.dtype, self.device)


@_adaptive_avg_pool3d_backward.grad
def _(grad, grad_output_shape):
    return api.adaptive_avg_pool3d(grad, tuple(grad_output_shape[-3:])), None


@_adaptive_avg_pool3d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 2, 2)), u(-1, 1, (2, 5, 7, 3))), {}


# ---------------------------------------------------------------------------------------------
# Adaptive max pooling
# ---------------------------------------------------------------------------------------------
def adaptive_max(x: np.ndarray, out: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Values and flat per-plane indices of adaptive max pooling over the last ``len(out)`` dimensions."""
    from ._pool_numba import window_max_fwd  # optional: numba, never loaded by import toolkit

    nd = len(out)
    sp = (1,) * (3 - nd) + x.shape[-nd:]
    vols = np.ascontiguousarray(x).reshape((-1,) + sp)
    if vols.dtype == np.float16:
        vols = vols.astype(np.float32)
    tables = []
    for size, o in zip(sp, (1,) * (3 - nd) + tuple(out)):
        start, end = adaptive_windows(size, o)
        tables += [np.broadcast_to(start, (vols.shape[0], o)), np.broadcast_to(end, (vols.shape[0], o))]
    vals, idx = window_max_fwd(vols, *tables)
    shape = x.shape[:-nd] + tuple(out)
    return vals.astype(x.dtype, copy=False).reshape(shape), idx.reshape(shape)


def _amp_meta(name, nd):
    def meta(self, output_size):
        out = adaptive_check(name, tuple(self.shape), output_size, nd, max_pool=True)
        m = TensorMeta(tuple(self.shape[:-nd]) + out, self.dtype, self.device)
        return m, TensorMeta(m.shape, _dt.int64, self.device)

    return meta


def _amp_kernel(name, nd):
    def kernel(self, output_size):
        out = adaptive_check(name, self.shape, output_size, nd, max_pool=True)
        _require_float(name, self.dtype)
        return adaptive_max(self, out)

    return kernel


_AMP = dict(kind=NN, method=False, function=False)
adaptive_max_pool2d = op("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", **_AMP,
                         doc="2-d adaptive max pooling: values and flat indices within each (H, W) plane.")(
    _amp_kernel("adaptive_max_pool2d", 2))
adaptive_max_pool3d = op("adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)", **_AMP,
                         doc="3-d adaptive max pooling: values and flat indices within each (D, H, W) volume.")(
    _amp_kernel("adaptive_max_pool3d", 3))
adaptive_max_pool2d.meta_rule(_amp_meta("adaptive_max_pool2d", 2))
adaptive_max_pool3d.meta_rule(_amp_meta("adaptive_max_pool3d", 3))


@adaptive_max_pool2d.grad
def _(grad, self, result):
    return api.adaptive_max_pool2d_backward(grad[0], self, result[1])


@adaptive_max_pool3d.grad
def _(grad, self, result):
    return api.adaptive_max_pool3d_backward(grad[0], self, result[1])


@adaptive_max_pool2d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4)), [2, 2]), {}
    yield (u(-1, 1, (1, 5, 7)), [3, 2]), {}
    yield (u(-1, 1, (1, 2, 3, 4)), [5, 6]), {}


@adaptive_max_pool3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4, 4)), [2, 2, 2]), {}
    yield (u(-1, 1, (1, 5, 7, 3)), [3, 2, 2]), {}


def _amp_backward(nd):
    def kernel(grad_output, self, indices):
        return scatter_to_planes(grad_output, indices, self.shape, nd, self.dtype)

    return kernel


_AMPB = dict(kind=NN, method=False, function=False, nondiff_args=("self", "indices"))
adaptive_max_pool2d_backward = op(
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor", **_AMPB,
    doc="Scatter-add the pooled gradient back to the positions of the maxima.")(_amp_backward(2))
adaptive_max_pool3d_backward = op(
    "adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor", **_AMPB,
    doc="Scatter-add the pooled gradient back to the positions of the maxima.")(_amp_backward(3))



def _ampb_meta(grad_output, self, indices):
    return TensorMeta(self.shape, self.dtype, self.device)


adaptive_max_pool2d_backward.meta_rule(_ampb_meta)
adaptive_max_pool3d_backward.meta_rule(_ampb_meta)


@adaptive_max_pool2d_backward.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 2), None


@adaptive_max_pool3d_backward.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 3), None


@adaptive_max_pool2d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    x = u(-1, 1, (2, 2, 5, 4))
    yield (u(-1, 1, (2, 2, 3, 2)), x, adaptive_max(x, (3, 2))[1]), {}


@adaptive_max_pool3d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    x = u(-1, 1, (1, 2, 3, 5, 4))
    yield (u(-1, 1, (1, 2, 2, 3, 2)), x, adaptive_max(x, (2, 3, 2))[1]), {}


@op("adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)", kind=NN, method=False,
    composite=True)
def adaptive_max_pool1d(self, output_size):
    """1-d adaptive max pooling of a (N, C, L) or (C, L) input: values and indices along L
    (``adaptive_max_pool2d`` of a height-one view, as PyTorch composes it)."""
    check_1d("adaptive_max_pool1d", tuple(self.shape), output_size)
    values, indices = api.adaptive_max_pool2d(self.unsqueeze(-2), (1,) + tuple(output_size))
    return values.squeeze(-2), indices.squeeze(-2)


@adaptive_max_pool1d.meta_rule
def _(self, output_size):
    check_1d("adaptive_max_pool1d", tuple(self.shape), output_size)
    m = TensorMeta(tuple(self.shape[:-1]) + (output_size[0],), self.dtype, self.device)
    return m, TensorMeta(m.shape, _dt.int64, self.device)


@adaptive_max_pool1d.grad
def _(grad, self, result):
    return api.adaptive_max_pool2d_backward(grad[0].unsqueeze(-2), self.unsqueeze(-2),
                                            result[1].unsqueeze(-2)).squeeze(-2)


@adaptive_max_pool1d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 8)), [4]), {}
    yield (u(-1, 1, (3, 7)), [3]), {}
    yield (u(-1, 1, (1, 2, 5)), [7]), {}
