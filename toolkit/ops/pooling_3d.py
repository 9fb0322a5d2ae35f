"""3-d pooling: max_pool3d (and its with_indices form), avg_pool3d, and their backward ops.

The same designs as the 2-d ops in ``pooling.py``: max pooling is one compiled
pass yielding values and flat indices within each (D, H, W) volume, whose
backward scatters through them (and whose double backward gathers); average
pooling sums strided slices, one per kernel offset, over a separable divisor.

Example::

    y = toolkit.max_pool3d(x, kernel_size=2)          # x: (N, C, D, H, W)
"""

from __future__ import annotations

import itertools

import numpy as np

from .._core import names as _names
from .._core.meta import TensorMeta
from . import api
from .pooling import define_max_pool_rules, pooling_output_size
from .registry import NN, op


def _three(v, name: str, op_name: str) -> tuple:
    v = (v,) if isinstance(v, int) else tuple(v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise RuntimeError(f"{op_name}: {name} must either be a single int, or a tuple of three ints")
    return v


def pool3d_shape(name, shape, kernel_size, stride, padding, dilation, ceil_mode, check_kernel_fits=False):
    """Check a 3-d pooling call as PyTorch does; return (k, s, p, d, (do, ho, wo))."""
    k = _three(kernel_size, "kernel_size", name)
    st = (stride,) if isinstance(stride, int) else tuple(stride)
    s = _three(st, "stride", name) if st else k
    p = _three(padding, "padding", name)
    d = _three(dilation, "dilation", name)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    if len(shape) not in (4, 5) or any(n == 0 for n in shape[-4:]):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if check_kernel_fits and any(n < kk for n, kk in zip(shape[-3:], k)):
        t, h, w = shape[-3:]
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {k[0]} kH: {k[1]} "
                           f"kW: {k[2]})")
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    out = tuple(pooling_output_size(n, kk, pp, ss, dd, ceil_mode)
                for n, kk, pp, ss, dd in zip(shape[-3:], k, p, s, d))
    if any(o < 1 for o in out):
        c, t, h, w = shape[-4:]
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")
    return k, s, p, d, out


# ---------------------------------------------------------------------------------------------
# Max pooling
# ---------------------------------------------------------------------------------------------
def _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d, out = pool3d_shape("max_pool3d", self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    from ._pool_numba import max_pool3d_fwd  # optional: numba, never loaded by import toolkit

    lead = self.shape[:-3]
    vols = np.ascontiguousarray(self).reshape((-1,) + self.shape[-3:])
    vals, idx = max_pool3d_fwd(vols, *k, *s, *p, *d, *out)
    return vals.reshape(lead + out), idx.reshape(lead + out)


_MP3 = ("(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
        "bool ceil_mode=False)")


@op("max_pool3d_with_indices" + _MP3 + " -> (Tensor, Tensor)", kind=NN, name_rule=_names.KEEP, method=False,
    namespace="nn.functional")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """3-d max pooling returning the values and each maximum's flat index within its (D, H, W) volume."""
    return _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode)


@op("max_pool3d" + _MP3 + " -> Tensor", kind=NN, name_rule=_names.KEEP, autocast="fp32", method=False,
    grad_fn="MaxPool3DWithIndicesBackward0")
def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """3-d max pooling over a (N, C, D, H, W) or (C, D, H, W) input."""
    return _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


define_max_pool_rules(3, max_pool3d, max_pool3d_with_indices, pool3d_shape)


@op("max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "
    "int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor", kind=NN, function=False,
    method=False, nondiff_args=("self", "indices"))
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """Scatter-add the pooled gradient back to the input positions its maxima came from."""
    return scatter_to_planes(grad_output, indices, self.shape, 3, self.dtype)


def scatter_to_planes(grad_output, indices, shape, nd: int, dtype) -> np.ndarray:
    """Scatter-add ``grad_output`` into zeros of ``shape`` at flat indices within each ``nd``-d plane."""
    from ._pool_numba import max_pool2d_backward  # optional: numba, never loaded by import toolkit

    plane = int(np.prod(shape[-nd:], dtype=np.int64))
    n = int(np.prod(grad_output.shape[-nd:], dtype=np.int64))
    g = np.ascontiguousarray(grad_output, dtype).reshape(-1, n)
    i = np.ascontiguousarray(indices, np.int64).reshape(g.shape)
    return max_pool2d_backward(g, i, plane).reshape(shape)


def gather_from_planes(grad, indices, nd: int):
    """The derivative of ``scatter_to_planes``: ``grad`` read at the flat indices (registered ops)."""
    flat = grad.flatten(-nd).gather(-1, indices.flatten(-nd))
    return flat.reshape(indices.shape)


@max_pool3d_with_indices_backward.meta_rule
def _(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return TensorMeta(self.shape, self.dtype, self.device)


@max_pool3d_with_indices_backward.grad
def _(grad, indices):
    return gather_from_planes(grad, indices, 3), None


def _mp3_samples(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4, 4)), 2), {}
    yield (u(-1, 1, (1, 3, 5, 4)), (3, 2, 2)), {"stride": (2, 1, 2), "padding": 1}
    yield (u(-1, 1, (1, 1, 3, 5, 6)), 2), {"stride": 2, "ceil_mode": True}
    yield (u(-1, 1, (1, 1, 5, 5, 4)), 2, 1, 1, 2), {}


max_pool3d.sample_inputs(_mp3_samples)
max_pool3d_with_indices.sample_inputs(_mp3_samples)


@max_pool3d_with_indices_backward.sample_inputs
def _(rng):
    u = rng.uniform
    x = u(-1, 1, (2, 1, 4, 4, 4))
    idx = _max_pool3d(x, (2,), (), (0,), (1,), False)[1]
    yield (u(-1, 1, (2, 1, 2, 2, 2)), x, [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False, idx), {}
    x = u(-1, 1, (1, 3, 4, 5))
    idx = _max_pool3d(x, (3,), (1,), (1,), (1,), False)[1]
    yield (u(-1, 1, (1, 3, 4, 5)), x, [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 1, 1], False, idx), {}


# ---------------------------------------------------------------------------------------------
# Average pooling
# ---------------------------------------------------------------------------------------------
def avg_pool3d_setup(shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Check an avg_pool3d call; return (k, s, p, out, the divisor of each output position)."""
    k, s, p, _, out = pool3d_shape("avg_pool3d", shape, kernel_size, stride, padding, (1,), ceil_mode,
                                   check_kernel_fits=True)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if divisor_override is not None:
        return k, s, p, out, np.full(out, divisor_override, np.int64)
    div = np.ones(out, np.int64)
    for axis, (size, kk, ss, pp, n) in enumerate(zip(shape[-3:], k, s, p, out)):
        start = np.arange(n) * ss - pp
        end = np.minimum(start + kk, size + pp)
        per = end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0)
        div = div * per.reshape((-1,) + (1,) * (2 - axis))
    return k, s, p, out, div


def _window_slices(offsets, s, out):
    return (Ellipsis,) + tuple(slice(a, a + (n - 1) * ss + 1, ss) for a, ss, n in zip(offsets, s, out))


def _padded_extent(shape, k, s, p, out):
    return tuple(max((n - 1) * ss + kk, size + pp) for size, kk, ss, pp, n in zip(shape[-3:], k, s, p, out))


def _divide(total, div, dtype):
    if np.dtype(dtype).kind == "f":
        return (total / div.astype(dtype)).astype(dtype, copy=False)
    return np.trunc(total / div).astype(dtype)


_AP3 = ("int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
        "int? divisor_override=None")


@op("avg_pool3d(Tensor self, " + _AP3 + ") -> Tensor", kind=NN, autocast="fp32", method=False, namespace="nn.functional")
def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling: window sums (one strided add per kernel offset) over PyTorch's divisor."""
    k, s, p, out, div = avg_pool3d_setup(self.shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)
    acc = np.float32 if self.dtype == np.float16 else (self.dtype if self.dtype.kind == "f" else np.int64)
    xp = np.zeros(self.shape[:-3] + _padded_extent(self.shape, k, s, p, out), acc)
    xp[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, self.shape[-3:]))] = self
    total = np.zeros(self.shape[:-3] + out, acc)
    for offsets in itertools.product(*(range(kk) for kk in k)):
        total += xp[_window_slices(offsets, s, out)]
    return _divide(total, div, self.dtype)


@avg_pool3d.meta_rule
def _(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None):
    *_, out, _div = avg_pool3d_setup(tuple(self.shape), kernel_size, stride, padding, ceil_mode,
                                     count_include_pad, divisor_override)
    return TensorMeta(tuple(self.shape[:-3]) + out, self.dtype, self.device)


@avg_pool3d.grad
def _(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    st = stride if stride else kernel_size
    return api.avg_pool3d_backward(grad, self, kernel_size, st, padding, ceil_mode, count_include_pad,
                                   divisor_override)


@op("avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, "
    "bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor", kind=NN, function=False,
    method=False, nondiff_args=("self",))
def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """Spread each pooled gradient evenly (by the same divisor) over its window."""
    k, s, p, out, div = avg_pool3d_setup(self.shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)
    g = (grad_output / div.astype(grad_output.dtype)).astype(self.dtype, copy=False)
    full = np.zeros(self.shape[:-3] + _padded_extent(self.shape, k, s, p, out), self.dtype)
    for offsets in itertools.product(*(range(kk) for kk in k)):
        full[_window_slices(offsets, s, out)] += g
    inner = (Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, self.shape[-3:]))
    return np.ascontiguousarray(full[inner])


@avg_pool3d_backward.meta_rule
def _(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return TensorMeta(self.shape, self.dtype, self.device)


@avg_pool3d_backward.grad
def _(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return api.avg_pool3d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override), None


@avg_pool3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4, 4)), 2), {}
    yield (u(-1, 1, (1, 4, 5, 5)), (3, 2, 3)), {"stride": (2, 1, 2), "padding": 1}
    yield (u(-1, 1, (1, 4, 5, 5)), 3), {"stride": 2, "padding": 1, "count_include_pad": False}
    yield (u(-1, 1, (1, 1, 3, 5, 6)), 2), {"stride": 2, "ceil_mode": True, "padding": 1}
    yield (u(-1, 1, (1, 1, 4, 4, 4)), 2), {"divisor_override": 3}
    yield (rng.integers(-9, 9, (1, 2, 4, 4, 4)), 2), {}


@avg_pool3d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 3, 3)), u(-1, 1, (1, 4, 5, 5)), [3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, None), {}
    yield (u(-1, 1, (2, 1, 2, 2, 2)), u(-1, 1, (2, 1, 4, 4, 4)), [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, 3), {}
