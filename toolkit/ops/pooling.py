"""Pooling: max_pool1d/2d (and their with_indices forms), avg_pool2d, adaptive_avg_pool2d, and their backward ops.

(3-d, adaptive, fractional and 1-d average pooling, and unpooling, live in the
``pooling_*``, ``fractional_pool`` and ``unpool`` modules beside this one.)

Max pooling runs one compiled pass that yields values and flat per-plane
indices; its backward scatters through those indices, and that backward's own
derivative gathers through them, so double backward works. Average pooling
sums strided slices (one per kernel offset) and divides by a separable divisor;
adaptive average pooling is two small averaging matmuls.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from . import api
from .grad_fn_rules import adaptive_avg_node
from .registry import NN, op


def _two(v, name: str, op_name: str) -> tuple:
    v = (v,) if isinstance(v, int) else tuple(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"{op_name}: {name} must either be a single int, or a tuple of two ints")
    return v


def pooling_output_size(size, k, pad, stride, dil, ceil_mode):
    """PyTorch's pooling_output_shape."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    num = size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = num // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def pool_shape(name, shape, kernel_size, stride, padding, dilation, ceil_mode):
    """Check a 2-d pooling call as PyTorch does; return (k, s, p, d, (ho, wo))."""
    k = _two(kernel_size, "kernel_size", name)
    st = (stride,) if isinstance(stride, int) else tuple(stride)
    s = _two(st, "stride", name) if st else k
    p = _two(padding, "padding", name)
    d = _two(dilation, "dilation", name)
    if len(shape) not in (3, 4) or any(n == 0 for n in shape[-3:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    ho = pooling_output_size(shape[-2], k[0], p[0], s[0], d[0], ceil_mode)
    wo = pooling_output_size(shape[-1], k[1], p[1], s[1], d[1], ceil_mode)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    if ho < 1 or wo < 1:
        c, h, w = shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{ho}x{wo}). "
                           "Output size is too small")
    return k, s, p, d, (ho, wo)


# ---------------------------------------------------------------------------------------------
# Max pooling
# ---------------------------------------------------------------------------------------------
def _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, name):
    k, s, p, d, (ho, wo) = pool_shape(name, self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    from . import _pool_numba as kern  # optional: numba, never loaded by import toolkit

    lead = self.shape[:-2]
    planes = np.ascontiguousarray(self).reshape((-1,) + self.shape[-2:])
    out, idx = kern.max_pool2d(planes, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], ho, wo)
    return out.reshape(lead + (ho, wo)), idx.reshape(lead + (ho, wo))


_MP2 = ("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
        "bool ceil_mode=False)")


@op("max_pool2d_with_indices" + _MP2 + " -> (Tensor, Tensor)", kind=NN, name_rule=_names.KEEP, method=False,
    namespace="nn.functional")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """2-d max pooling returning the values and each maximum's flat index within its (H, W) plane."""
    return _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")


@op("max_pool2d" + _MP2 + " -> Tensor", kind=NN, name_rule=_names.KEEP,
    grad_fn="MaxPool2DWithIndicesBackward0", method=False)
def max_pool2d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """2-d max pooling over a (N, C, H, W) or (C, H, W) input."""
    return _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")[0]


def define_max_pool_rules(nd: int, pool, with_indices, shape_of) -> None:
    """The meta rules and derivatives shared by ``max_pool{nd}d`` and ``max_pool{nd}d_with_indices``: the output
    size from ``shape_of`` (the family's window arithmetic), int64 indices beside the values, and gradients
    scattered back through ``max_pool{nd}d_with_indices_backward`` at the indices of the maxima."""
    name, backward = f"max_pool{nd}d", f"max_pool{nd}d_with_indices_backward"

    def meta(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
        *_, out = shape_of(name, tuple(self.shape), kernel_size, stride, padding, dilation, ceil_mode)
        return TensorMeta(tuple(self.shape[:-nd]) + out, self.dtype, self.device)

    pool.meta_rule(meta)

    @with_indices.meta_rule
    def _(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
        m = meta(self, kernel_size, stride, padding, dilation, ceil_mode)
        return m, TensorMeta(m.shape, _dt.int64, self.device)

    @with_indices.grad
    def _(grad, self, kernel_size, stride, padding, dilation, ceil_mode, result):
        return getattr(api, backward)(grad[0], self, kernel_size, stride, padding, dilation, ceil_mode, result[1])

    if nd == 2:  # PyTorch's max_pool2d_backward: the maxima found again inside one backward op
        @pool.grad
        def _(grad, self, kernel_size, stride, padding, dilation, ceil_mode):
            return api.max_pool2d_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode)
        return

    @pool.grad
    def _(grad, self, kernel_size, stride, padding, dilation, ceil_mode):
        idx = with_indices(self.detach(), kernel_size, stride, padding, dilation, ceil_mode)[1]
        return getattr(api, backward)(grad, self, kernel_size, stride, padding, dilation, ceil_mode, idx)


define_max_pool_rules(2, max_pool2d, max_pool2d_with_indices, pool_shape)


@op("max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor", kind=NN, function=False,
    method=False, nondiff_args=("self", "indices"))
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """Scatter-add the pooled gradient back to the input positions its maxima came from."""
    from ._pool_numba import max_pool2d_backward  # optional: numba, never loaded by import toolkit

    h, w = self.shape[-2:]
    g = np.ascontiguousarray(grad_output, self.dtype).reshape(-1, grad_output.shape[-2] * grad_output.shape[-1])
    i = np.ascontiguousarray(indices).reshape(g.shape)
    return max_pool2d_backward(g, i, h * w).reshape(self.shape)


@max_pool2d_with_indices_backward.meta_rule
def _(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return TensorMeta(self.shape, self.dtype, self.device)


@op("max_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor", kind=NN, function=False, method=False,
    nondiff_args=("self",))
def max_pool2d_backward(grad_output, self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """``max_pool2d``'s gradient from its input alone: each window's gradient added where its maximum is. The
    derivative of ``max_pool2d`` calls it, so a training step finds the maxima again in the one op that scatters
    (2x2, stride-2 windows in one pass without an index array) instead of running the forward a second time."""
    from ._pool_numba import max_pool2d_backward_from_input  # optional: numba, never loaded by import toolkit

    k, s, p, d, (ho, wo) = pool_shape("max_pool2d", self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    planes = np.ascontiguousarray(self).reshape((-1,) + self.shape[-2:])
    g = np.ascontiguousarray(grad_output, self.dtype).reshape(planes.shape[0], ho, wo)
    return max_pool2d_backward_from_input(planes, g, *k, *s, *p, *d).reshape(self.shape)


@max_pool2d_backward.meta_rule
def _(grad_output, self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return TensorMeta(self.shape, self.dtype, self.device)


@max_pool2d_backward.grad
def _(grad, self, kernel_size, stride, padding, dilation, ceil_mode):
    idx = api.max_pool2d_with_indices(self.detach(), kernel_size, stride, padding, dilation, ceil_mode)[1]
    return _gather_at_maxima(grad, idx), None


max_pool2d_backward.tested_elsewhere(
    "PyTorch has no CPU kernel for it (MPS only); tests/nn/test_pooling.py compares it with "
    "max_pool2d_with_indices_backward and PyTorch's max_pool2d gradients")


def _gather_at_maxima(grad, indices):
    """The gradient of a max-pool backward with respect to its output gradient: ``grad`` read at the maxima."""
    return grad.flatten(-2).gather(-1, indices.flatten(-2)).reshape(indices.shape)


@max_pool2d_with_indices_backward.grad
def _(grad, indices):
    return _gather_at_maxima(grad, indices), None


@op("max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, "
    "bool ceil_mode=False) -> Tensor", kind=NN, name_rule=_names.KEEP, grad_fn="SqueezeBackward1",
    method=False)
def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """1-d max pooling over a (N, C, L) or (C, L) input."""
    _check_1d(self.shape)
    return _max_pool(self[..., None, :], *pool1d_as_2d(kernel_size, stride, padding, dilation), ceil_mode,
                     "max_pool1d")[0][..., 0, :]


def _check_1d(shape):
    if len(shape) not in (2, 3) or any(n == 0 for n in shape[-2:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(shape)}")


_1D_ARG = {"kernel_size": "an int, list of ints", "stride": "None, an int, list of ints,",
           "padding": "an int, list of ints,", "dilation": "an int, list of ints,"}


def pool1d_as_2d(kernel_size, stride, padding, dilation, indices: bool = False):
    """A 1-d pooling's arguments as the (1, k) 2-d pooling that computes it, checked as PyTorch checks them."""
    for name, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding), ("dilation", dilation)):
        if len(v) != 1 and (v or name != "stride"):
            if indices:
                raise RuntimeError(f"max_pool1d() argument '{name}' should contain one int (got {len(v)})")
            raise RuntimeError(f"max_pool1d() {name} must be {_1D_ARG[name]} or tuple of ints of size 1 but got "
                               f"size {len(v)}")
    st = tuple(stride) if stride else tuple(kernel_size)
    return (1, kernel_size[0]), (1, st[0]), (0, padding[0]), (1, dilation[0])


@max_pool1d.meta_rule
def _(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    _check_1d(self.shape)
    k, s, p, d = pool1d_as_2d(kernel_size, stride, padding, dilation)
    *_, (ho, wo) = pool_shape("max_pool1d", tuple(self.shape[:-1]) + (1, self.shape[-1]), k, s, p, d, ceil_mode)
    return TensorMeta(tuple(self.shape[:-1]) + (wo,), self.dtype, self.device)


@max_pool1d.grad
def _(grad, self, kernel_size, stride, padding, dilation, ceil_mode):
    args = pool1d_as_2d(kernel_size, stride, padding, dilation) + (ceil_mode,)
    x = self.unsqueeze(-2)
    # detach the input itself (not the unsqueezed view): the JIT's symbolic autodiff follows a detached
    # graph input, while a detached intermediate would be frozen into the backward graph as a constant
    idx = api.max_pool2d_with_indices(self.detach().unsqueeze(-2), *args)[1]
    return api.max_pool2d_with_indices_backward(grad.unsqueeze(-2), x, *args, idx).squeeze(-2)


def _mp_samples(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4)), 2), {}
    yield (u(-1, 1, (1, 5, 5)), (3, 2)), {"stride": (2, 1), "padding": 1}
    yield (u(-1, 1, (1, 1, 5, 6)), 2), {"stride": 2, "ceil_mode": True}
    yield (u(-1, 1, (1, 2, 5, 5)), 2, 1, 1, 2), {}
    yield (u(-1, 1, (1, 2, 4, 4)).transpose(0, 1, 3, 2), 3), {"stride": 1}


max_pool2d.sample_inputs(_mp_samples)
max_pool2d_with_indices.sample_inputs(_mp_samples)


@op("max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, "
    "int[1] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)", kind=NN, name_rule=_names.KEEP,
    method=False,
    grad_fn="SqueezeBackward1")
def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """1-d max pooling returning the values and each maximum's index along the last dimension."""
    _check_1d(self.shape)
    out, idx = _max_pool(self[..., None, :], *pool1d_as_2d(kernel_size, stride, padding, dilation, True),
                         ceil_mode, "max_pool1d")
    return out[..., 0, :], idx[..., 0, :]


@max_pool1d_with_indices.meta_rule
def _(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    m = max_pool1d.meta(self, kernel_size, stride, padding, dilation, ceil_mode)
    return m, TensorMeta(m.shape, _dt.int64, self.device)


@max_pool1d_with_indices.grad
def _(grad, self, kernel_size, stride, padding, dilation, ceil_mode, result):
    args = pool1d_as_2d(kernel_size, stride, padding, dilation) + (ceil_mode,)
    return api.max_pool2d_with_indices_backward(grad[0].unsqueeze(-2), self.unsqueeze(-2), *args,
                                                result[1].unsqueeze(-2)).squeeze(-2)


@max_pool1d_with_indices.sample_inputs
@max_pool1d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 6)), 2), {}
    yield (u(-1, 1, (3, 7)), 3), {"stride": 2, "padding": 1, "ceil_mode": True}
    yield (u(-1, 1, (1, 2, 7)), 2, 1, 0, 2), {}


@max_pool2d_with_indices_backward.sample_inputs
def _(rng):
    u = rng.uniform
    x = u(-1, 1, (2, 2, 4, 4))
    idx = _max_pool(x, (2,), (), (0,), (1,), False, "max_pool2d")[1]
    yield (u(-1, 1, (2, 2, 2, 2)), x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx), {}
    x = u(-1, 1, (1, 5, 5))
    idx = _max_pool(x, (3,), (1,), (1,), (1,), False, "max_pool2d")[1]
    yield (u(-1, 1, (1, 5, 5)), x, [3, 3], [1, 1], [1, 1], [1, 1], False, idx), {}


# ---------------------------------------------------------------------------------------------
# Average pooling
# ---------------------------------------------------------------------------------------------
def avg_pool_setup(shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Check an avg_pool2d call; return (k, s, p, (ho, wo), the divisor of each output position)."""
    k, s, p, _, (ho, wo) = pool_shape("avg_pool2d", shape, kernel_size, stride, padding, (1,), ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    divs = []
    for size, kk, ss, pp, n in zip(shape[-2:], k, s, p, (ho, wo)):
        start = np.arange(n) * ss - pp
        end = np.minimum(start + kk, size + pp)
        full = end - start
        valid = np.minimum(end, size) - np.maximum(start, 0)
        divs.append(full if count_include_pad else valid)
    if divisor_override is not None:
        div = np.full((ho, wo), divisor_override, np.int64)
    else:
        div = divs[0][:, None] * divs[1][None, :]
    return k, s, p, (ho, wo), div


def _divide(total, div, dtype):
    if np.dtype(dtype).kind == "f":
        return (total / div.astype(dtype)).astype(dtype, copy=False)
    return np.trunc(total / div).astype(dtype)


_AP2 = ("int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
        "int? divisor_override=None")


@op("avg_pool2d(Tensor self, " + _AP2 + ") -> Tensor", kind=NN, method=False, namespace="nn.functional")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling: window sums (one strided add per kernel offset) over PyTorch's divisor."""
    k, s, p, (ho, wo), div = avg_pool_setup(self.shape, kernel_size, stride, padding, ceil_mode,
                                            count_include_pad, divisor_override)
    h, w = self.shape[-2:]
    hn, wn = (ho - 1) * s[0] + k[0], (wo - 1) * s[1] + k[1]
    acc = np.float32 if self.dtype == np.float16 else (self.dtype if self.dtype.kind == "f" else np.int64)
    xp = np.zeros(self.shape[:-2] + (max(hn, h + p[0]), max(wn, w + p[1])), acc)
    xp[..., p[0]:p[0] + h, p[1]:p[1] + w] = self
    total = np.zeros(self.shape[:-2] + (ho, wo), acc)
    for a in range(k[0]):
        for b in range(k[1]):
            total += xp[..., a:a + (ho - 1) * s[0] + 1:s[0], b:b + (wo - 1) * s[1] + 1:s[1]]
    return _divide(total, div, self.dtype)


@avg_pool2d.meta_rule
def _(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None):
    *_, out, _div = avg_pool_setup(tuple(self.shape), kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override)
    return TensorMeta(tuple(self.shape[:-2]) + out, self.dtype, self.device)


@avg_pool2d.grad
def _(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    st = stride if stride else kernel_size
    return api.avg_pool2d_backward(grad, self, kernel_size, st, padding, ceil_mode, count_include_pad,
                                   divisor_override)


def _onnx_pool_batched(g, x, pool):
    """``pool(x)`` on an (N, C, H, W) value; an unbatched (C, H, W) one gets a batch dim for the ONNX op."""
    if g.rank(x) != 3:
        return pool(x)
    zero = g.constant([0])
    return g.op("Squeeze", pool(g.op("Unsqueeze", x, zero)), zero)


@avg_pool2d.symbolic
def _(g, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
      divisor_override=None):
    if g.dtype(self) is None or not g.dtype(self).is_floating_point:
        raise g.unsupported("ONNX AveragePool takes floating point inputs only")
    pair = (lambda v: [int(v[0])] * 2 if len(v) == 1 else [int(x) for x in v])
    k = pair(kernel_size)
    s, p = (pair(stride) if stride else k), pair(padding)
    if not ceil_mode and divisor_override is None:
        # The windows stay inside the padded input, so ONNX's divisor (the window, or its part inside the
        # input without ``count_include_pad``) is PyTorch's.
        return _onnx_pool_batched(g, self, lambda x: g.op(
            "AveragePool", x, kernel_shape=k, strides=s, pads=p + p, count_include_pad=int(count_include_pad)))
    # ceil_mode and divisor_override: PyTorch's divisor per output position, from the traced spatial size,
    # applied to the window sums of the zero-padded input (as the kernel computes them).
    shape = g.shape(self)
    if shape is None or any(d is None for d in shape[-2:]):
        raise g.unsupported("avg_pool2d with ceil_mode or divisor_override needs a static spatial size")
    _, _, _, (ho, wo), div = avg_pool_setup(tuple(shape), k, s, p, ceil_mode, count_include_pad, divisor_override)
    h, w = shape[-2:]
    hn, wn = (ho - 1) * s[0] + k[0], (wo - 1) * s[1] + k[1]
    ends = [max(hn - h - p[0], 0), max(wn - w - p[1], 0)]
    pads = g.constant([0, 0] + p + [0, 0] + ends)
    mean = _onnx_pool_batched(g, self, lambda x: g.op("AveragePool", g.op("Pad", x, pads), kernel_shape=k,
                                                        strides=s))
    return g.op("Mul", mean, g.constant(k[0] * k[1] / div.astype(np.float64), g.dtype(self)))


@op("avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, "
    "bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor", kind=NN, function=False,
    method=False, nondiff_args=("self",))
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """Spread each pooled gradient evenly (by the same divisor) over its window."""
    k, s, p, (ho, wo), div = avg_pool_setup(self.shape, kernel_size, stride, padding, ceil_mode,
                                            count_include_pad, divisor_override)
    h, w = self.shape[-2:]
    hn, wn = (ho - 1) * s[0] + k[0], (wo - 1) * s[1] + k[1]
    g = (grad_output / div.astype(grad_output.dtype)).astype(self.dtype, copy=False)
    full = np.zeros(self.shape[:-2] + (max(hn, h + p[0]), max(wn, w + p[1])), self.dtype)
    for a in range(k[0]):
        for b in range(k[1]):
            full[..., a:a + (ho - 1) * s[0] + 1:s[0], b:b + (wo - 1) * s[1] + 1:s[1]] += g
    return np.ascontiguousarray(full[..., p[0]:p[0] + h, p[1]:p[1] + w])


@avg_pool2d_backward.meta_rule
def _(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return TensorMeta(self.shape, self.dtype, self.device)


@avg_pool2d_backward.grad
def _(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return api.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override), None


def _ap_samples(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4)), 2), {}
    yield (u(-1, 1, (1, 5, 5)), (3, 2)), {"stride": (2, 1), "padding": 1}
    yield (u(-1, 1, (1, 5, 5)), 3), {"stride": 2, "padding": 1, "count_include_pad": False}
    yield (u(-1, 1, (1, 1, 5, 6)), 2), {"stride": 2, "ceil_mode": True, "padding": 1}
    yield (u(-1, 1, (1, 1, 4, 4)), 2), {"divisor_override": 3}


avg_pool2d.sample_inputs(_ap_samples)


@avg_pool2d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 3, 3)), u(-1, 1, (1, 5, 5)), [3, 3], [2, 2], [1, 1], True, False, None), {}
    yield (u(-1, 1, (2, 1, 2, 2)), u(-1, 1, (2, 1, 4, 4)), [2, 2], [2, 2], [0, 0], False, True, 3), {}


# ---------------------------------------------------------------------------------------------
# Adaptive average pooling
# ---------------------------------------------------------------------------------------------
def adaptive_avg_matrix(size: int, out: int, dtype) -> np.ndarray:
    """(out, size) matrix averaging PyTorch's adaptive windows [floor(i*size/out), ceil((i+1)*size/out))."""
    m = np.zeros((out, size), dtype)
    for i in range(out):
        a, b = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, a:b] = 1.0 / (b - a)
    return m


def _adaptive_check(shape, output_size):
    out = tuple(output_size)
    if len(out) == 1:
        out = out * 2
    if len(out) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if len(shape) not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(shape)}")
    for d in range(1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(shape)} with dimension {d} being empty")
    if any(o < 0 for o in out):
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{out[0]}, {out[1]}}}")
    return out


@op("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", kind=NN, method=False,
    namespace="nn.functional", grad_fn=adaptive_avg_node(2))
def adaptive_avg_pool2d(self, output_size):
    """Average pooling to a fixed output size: two averaging matmuls (rows, then columns)."""
    ho, wo = _adaptive_check(self.shape, output_size)
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{_dt.title(self.dtype)}'")
    h, w = self.shape[-2:]
    if h % max(ho, 1) == 0 and w % max(wo, 1) == 0 and ho and wo:
        return self.reshape(self.shape[:-2] + (ho, h // ho, wo, w // wo)).mean(axis=(-3, -1), dtype=self.dtype)
    return adaptive_avg_matrix(h, ho, self.dtype) @ self @ adaptive_avg_matrix(w, wo, self.dtype).T


@adaptive_avg_pool2d.meta_rule
def _(self, output_size):
    out = _adaptive_check(tuple(self.shape), output_size)
    return TensorMeta(tuple(self.shape[:-2]) + out, self.dtype, self.device)


@adaptive_avg_pool2d.grad
def _(grad, self_shape):
    return api._adaptive_avg_pool2d_backward(grad, api.zeros(self_shape, dtype=grad.dtype, device=grad.device))


@adaptive_avg_pool2d.symbolic
def _(g, self, output_size):
    ho, wo = (list(output_size) * 2)[:2] if len(output_size) == 1 else output_size
    if (ho, wo) == (1, 1):
        return _onnx_pool_batched(g, self, lambda x: g.op("GlobalAveragePool", x))
    shape = g.shape(self)
    h, w = (None, None) if shape is None else shape[-2:]
    if h is None or w is None or h % ho or w % wo:
        raise g.unsupported(f"adaptive_avg_pool2d to {[ho, wo]} from a spatial size of {[h, w]}: ONNX pools "
                            "with one kernel, so the output size must divide a static input size")
    kernel = [h // ho, w // wo]
    return _onnx_pool_batched(g, self, lambda x: g.op("AveragePool", x, kernel_shape=kernel, strides=kernel))


@adaptive_avg_pool2d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4)), 2), {}
    yield (u(-1, 1, (1, 5, 7)), (3, 2)), {}
    yield (u(-1, 1, (1, 1, 3, 4)), [1, 1]), {}


@op("_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", kind=NN, function=False,
    method=False, nondiff_args=("self",))
def _adaptive_avg_pool2d_backward(grad_output, self):
    """Spread each pooled gradient evenly over its adaptive window (the transposed averaging matmuls)."""
    h, w = self.shape[-2:]
    ho, wo = grad_output.shape[-2:]
    g = grad_output.astype(self.dtype, copy=False)
    return adaptive_avg_matrix(h, ho, self.dtype).T @ g @ adaptive_avg_matrix(w, wo, self.dtype)


@_adaptive_avg_pool2d_backward.meta_rule
def _(grad_output, self):
    return TensorMeta(self.shape, self.dtype, self.device)


@_adaptive_avg_pool2d_backward.grad
def _(grad, grad_output_shape):
    return api.adaptive_avg_pool2d(grad, tuple(grad_output_shape[-2:])), None


@_adaptive_avg_pool2d_backward.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 2)), u(-1, 1, (2, 5, 7))), {}



# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
@max_pool2d.symbolic
def _(g, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    def pair(v):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * 2 if len(v) == 1 else v

    kernel = pair(kernel_size)
    unbatched = g.rank(self) == 3
    if unbatched:
        self = g.op("Unsqueeze", self, g.constant([0]))
    out = g.op("MaxPool", self, kernel_shape=kernel, strides=pair(stride) if stride else kernel,
               pads=pair(padding) * 2, dilations=pair(dilation), ceil_mode=int(ceil_mode))
    return g.op("Squeeze", out, g.constant([0])) if unbatched else out
