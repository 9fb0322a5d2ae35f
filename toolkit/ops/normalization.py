"""Normalization ops: batch_norm, layer_norm and group_norm, with ``torch.nn.functional``'s signatures.

Kernels are numpy reductions over the normalized dims. ``batch_norm`` in
training mode normalizes with the batch statistics and updates
``running_mean``/``running_var`` in place (the variance unbiased, as PyTorch
does); in eval mode it uses the running statistics. Derivatives recompute
the statistics with registered ops, so they are themselves differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.meta import TensorMeta
from .reduction import onnx_reduce
from .registry import NN, op


def _fmt_size(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _verify_batch_size(shape) -> None:
    size = math.prod(shape[:1]) * math.prod(shape[2:]) if len(shape) > 1 else shape[0]
    if size == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"torch.Size({list(shape)})")


def _norm_input_grad(g, xhat, invstd, dims):
    """d/dx of ``(x - mean) * invstd`` (statistics over ``dims``) applied to ``g``."""
    return invstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


def _normalized(x, dims, eps):
    """``(x - mean) * invstd`` and ``invstd``, statistics over ``dims``, with registered ops."""
    xc = x - x.mean(dims, keepdim=True)
    invstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    return xc * invstd, invstd


# ----------------------------------------------------------------------------- batch_norm
def _bn_check(shape, running_mean, running_var, weight, bias, training):
    if len(shape) < 2:
        raise ValueError(f"batch_norm: expected 2D or more input (got {len(shape)}D input)")
    c = shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"batch_norm: {name} should contain {c} elements not "
                               f"{math.prod(tuple(t.shape))}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in evaluation mode")
    if training:
        _verify_batch_size(tuple(shape))


@op("batch_norm(Tensor input, Tensor(a!)? running_mean, Tensor(b!)? running_var, Tensor? weight=None, "
    "Tensor? bias=None, bool training=False, float momentum=0.1, float eps=1e-05) -> Tensor", kind=NN,
    method=False, namespace="nn.functional", nondiff_args=("running_mean", "running_var"),
    grad_fn="NativeBatchNormBackward0")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05):
    """Normalize each channel (dim 1) over the batch and spatial dims, then scale and shift."""
    _bn_check(input.shape, running_mean, running_var, weight, bias, training)
    x = input.astype(np.float32) if input.dtype == np.float16 else input
    bshape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        axes = (0,) + tuple(range(2, input.ndim))
        mean = x.mean(axis=axes)
        xc = x - mean.reshape(bshape)
        var = np.mean(xc * xc, axis=axes)
        n = input.size // max(input.shape[1], 1)
        if running_mean is not None:
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean
        if running_var is not None:
            unbiased = var * (n / (n - 1)) if n > 1 else np.full_like(var, np.nan)
            running_var[...] = (1 - momentum) * running_var + momentum * unbiased
    else:
        xc = x - running_mean.reshape(bshape)
        var = running_var
    scale = 1.0 / np.sqrt(var + eps)
    if weight is not None:
        scale = scale * weight
    out = xc * scale.reshape(bshape).astype(x.dtype, copy=False)
    if bias is not None:
        out += bias.reshape(bshape)
    return out.astype(input.dtype, copy=False)


@batch_norm.meta_rule
def _(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    _bn_check(tuple(input.shape), running_mean, running_var, weight, bias, training)
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


@batch_norm.grad
def _(grad, input, running_mean, running_var, weight, training, eps, needs_input_grad):
    bshape = (1, input.shape[1]) + (1,) * (input.dim() - 2)
    dims = [0] + list(range(2, input.dim()))
    if training:
        xhat, invstd = _normalized(input, dims, eps)
    else:
        invstd = (running_var.detach() + eps).rsqrt().reshape(bshape)
        xhat = (input - running_mean.detach().reshape(bshape)) * invstd
    g = grad * weight.reshape(bshape) if weight is not None else grad
    gi = gw = gb = None
    if needs_input_grad[0]:
        gi = _norm_input_grad(g, xhat, invstd, dims) if training else g * invstd
    if weight is not None and needs_input_grad[1]:
        gw = (grad * xhat).sum(dims)
    if needs_input_grad[2]:
        gb = grad.sum(dims)
    return gi, gw, gb


def _onnx_normalize(g, x, axes, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` (biased variance) from ONNX primitives."""
    xc = g.op("Sub", x, onnx_reduce(g, "ReduceMean", x, axes, True))
    var = onnx_reduce(g, "ReduceMean", g.op("Mul", xc, xc), axes, True)
    return g.op("Div", xc, g.op("Sqrt", g.op("Add", var, g.constant(eps, g.dtype(x)))))


def _onnx_filled(g, value, shape, like):
    """A constant of ``shape`` filled with ``value``, of ``like``'s dtype (an absent scale or shift)."""
    return g.constant(np.full(tuple(shape), value), g.dtype(like))


@batch_norm.symbolic
def _(g, input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    rank = g.rank(input)
    if training:
        # Batch statistics (a model exported in training mode, or ``track_running_stats=False``): the ONNX
        # graph normalizes as the forward does; running statistics are not updated by inference runtimes.
        if rank is None:
            raise g.unsupported("batch_norm with batch statistics needs the input's rank")
        out = _onnx_normalize(g, input, [0] + list(range(2, rank)), eps)
        channel_axes = list(range(1, rank - 1))
        for t, fold in ((weight, "Mul"), (bias, "Add")):
            if t is not None:
                out = g.op(fold, out, g.op("Unsqueeze", t, g.constant(channel_axes)) if channel_axes else t)
        return out
    channels = g.shape(running_mean)[0]
    weight = weight if weight is not None else _onnx_filled(g, 1.0, (channels,), input)
    bias = bias if bias is not None else _onnx_filled(g, 0.0, (channels,), input)
    return g.op("BatchNormalization", input, weight, bias, running_mean, running_var, epsilon=float(eps),
                momentum=1.0 - float(0.1 if momentum is None else momentum))


# ----------------------------------------------------------------------------- layer_norm
def _ln_check(shape, normalized_shape, weight, bias):
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError("layer_norm: Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                           "at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"layer_norm: Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {_fmt_size(t.shape)} and normalized_shape = {_fmt_size(ns)}")
    if len(shape) < len(ns) or tuple(shape[len(shape) - len(ns):]) != ns:
        raise RuntimeError(f"layer_norm: Given normalized_shape={_fmt_size(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size{_fmt_size(shape)}")
    return ns


@op("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05) -> Tensor", kind=NN, method=False, namespace="nn.functional",
    grad_fn="NativeLayerNormBackward0")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the last ``len(normalized_shape)`` dims, then scale and shift elementwise."""
    ns = _ln_check(input.shape, normalized_shape, weight, bias)
    x = input.astype(np.float32) if input.dtype == np.float16 else input
    axes = tuple(range(input.ndim - len(ns), input.ndim))
    if x.size == 0:
        return np.empty(input.shape, input.dtype)
    xc = x - x.mean(axis=axes, keepdims=True)
    out = xc / np.sqrt(np.mean(xc * xc, axis=axes, keepdims=True) + eps)
    if weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    return out.astype(input.dtype, copy=False)


@layer_norm.meta_rule
def _(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    _ln_check(tuple(input.shape), normalized_shape, weight, bias)
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


@layer_norm.grad
def _(grad, input, normalized_shape, weight, eps, needs_input_grad):
    k = len(normalized_shape)
    dims = list(range(input.dim() - k, input.dim()))
    xhat, invstd = _normalized(input, dims, eps)
    lead = list(range(input.dim() - k))
    g = grad * weight if weight is not None else grad
    gi = _norm_input_grad(g, xhat, invstd, dims) if needs_input_grad[0] else None
    gw = (grad * xhat).sum(lead) if lead else grad * xhat
    gb = grad.sum(lead) if lead else grad
    return gi, gw if weight is not None and needs_input_grad[1] else None, gb if needs_input_grad[2] else None


@layer_norm.symbolic
def _(g, input, normalized_shape, weight=None, bias=None, eps=1e-05):
    k = len(normalized_shape)
    if g.opset >= 17:
        weight = weight if weight is not None else _onnx_filled(g, 1.0, normalized_shape, input)
        return g.op("LayerNormalization", input, weight, bias, axis=-k, epsilon=float(eps))
    out = _onnx_normalize(g, input, list(range(-k, 0)), eps)
    out = out if weight is None else g.op("Mul", out, weight)
    return out if bias is None else g.op("Add", out, bias)


# ----------------------------------------------------------------------------- group_norm
def _gn_check(shape, num_groups, weight, bias):
    if len(shape) < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but received {len(shape)}")
    c = shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"group_norm: Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {_fmt_size(shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (len(t.shape) != 1 or t.shape[0] != c):
            raise RuntimeError(f"group_norm: Expected {name} to be a vector of size equal to the number of channels "
                               f"in input, but got {name} of shape {_fmt_size(t.shape)} and input of shape "
                               f"{_fmt_size(shape)}")
    _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + list(shape[2:]))


@op("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor",
    kind=NN, grad_fn="NativeGroupNormBackward0", method=False, namespace="nn.functional")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalize each group of ``C // num_groups`` channels per sample, then scale and shift per channel."""
    _gn_check(input.shape, num_groups, weight, bias)
    x = input.astype(np.float32) if input.dtype == np.float16 else input
    n = input.shape[0]
    if x.size == 0:
        return np.empty(input.shape, input.dtype)
    xr = x.reshape(n, num_groups, -1)
    xc = xr - xr.mean(axis=2, keepdims=True)
    out = (xc / np.sqrt(np.mean(xc * xc, axis=2, keepdims=True) + eps)).reshape(input.shape)
    bshape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if weight is not None:
        out *= weight.reshape(bshape)
    if bias is not None:
        out += bias.reshape(bshape)
    return out.astype(input.dtype, copy=False)


@group_norm.meta_rule
def _(input, num_groups, weight=None, bias=None, eps=1e-05):
    _gn_check(tuple(input.shape), num_groups, weight, bias)
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


@group_norm.grad
def _(grad, input, num_groups, weight, eps, needs_input_grad):
    shape = tuple(input.shape)
    n = shape[0]
    bshape = (1, shape[1]) + (1,) * (len(shape) - 2)
    xr = input.reshape(n, num_groups, -1)
    xhat, invstd = _normalized(xr, [2], eps)
    g = grad * weight.reshape(bshape) if weight is not None else grad
    gi = _norm_input_grad(g.reshape(n, num_groups, -1), xhat, invstd, [2]).reshape(shape) \
        if needs_input_grad[0] else None
    dims = [0] + list(range(2, len(shape)))
    gw = (grad * xhat.reshape(shape)).sum(dims) if weight is not None and needs_input_grad[1] else None
    gb = grad.sum(dims) if needs_input_grad[2] else None
    return gi, gw, gb


# ----------------------------------------------------------------------------- samples
@batch_norm.sample_inputs
def _(rng):
    def u(*s):
        return rng.uniform(-2, 2, s)

    def pos(*s):
        return rng.uniform(0.5, 2, s)

    yield (u(4, 3), np.zeros(3), np.ones(3), pos(3), u(3), True), {}
    yield (u(2, 3, 4), None, None, pos(3), u(3)), {"training": True, "momentum": 0.3}
    yield (u(2, 2, 3, 2), None, None), {"training": True, "eps": 1e-3}
    yield (u(3, 2, 4).transpose(2, 1, 0), None, None, pos(2), u(2), True), {}
    # Eval mode reads running stats, which (as in PyTorch) get no gradient, so gradcheck's numerical
    # Jacobian would disagree: tests/nn/test_normalization.py compares eval mode with PyTorch instead.


@layer_norm.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), (4,), rng.uniform(0.5, 2, 4), rng.uniform(-1, 1, 4)), {}
    yield (rng.uniform(-2, 2, (2, 3, 4)), (3, 4)), {"eps": 1e-3}
    yield (rng.uniform(-2, 2, (4, 3)).T, [4], rng.uniform(0.5, 2, 4)), {}
    yield (rng.uniform(-2, 2, (5,)), (5,), None, rng.uniform(-1, 1, 5)), {}
    yield (rng.uniform(-2, 2, (0, 3)), (3,)), {}


@group_norm.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (2, 4, 3)), 2, rng.uniform(0.5, 2, 4), rng.uniform(-1, 1, 4)), {}
    yield (rng.uniform(-2, 2, (2, 6, 2, 2)), 3), {"eps": 1e-3}
    yield (rng.uniform(-2, 2, (3, 4, 2)).transpose(2, 1, 0), 1, rng.uniform(0.5, 2, 4)), {}
    yield (rng.uniform(-2, 2, (3, 4)), 4, None, rng.uniform(-1, 1, 4)), {}
