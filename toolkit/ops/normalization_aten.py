"""Normalization ops with aten's signatures: ``torch.batch_norm``, ``torch.layer_norm``, ``torch.group_norm``,
``torch.instance_norm`` and ``torch.rms_norm``.

``normalization.py`` defines batch_norm, layer_norm and group_norm with
``torch.nn.functional``'s signatures (the ones traces of modules show). The
``torch.*`` functions take aten's: batch_norm's weight and bias before the
running statistics, and a trailing ``cudnn_enabled`` flag. Those are the
``.cudnn`` overloads here (their flag required, so calls without it keep
choosing the functional overload), each composed of the functional op and
sharing its derivative. ``instance_norm`` is batch_norm over a (1, N*C, ...)
view, as ATen composes it; ``rms_norm`` divides by the root mean square.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .normalization import batch_norm, group_norm, layer_norm
from .registry import NN, op


# ----------------------------------------------------------------------------- torch.batch_norm
@op("batch_norm.cudnn(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, "
    "Tensor(b!)? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor", kind=NN,
    method=False, composite=True, nondiff_args=("running_mean", "running_var"))
def batch_norm_cudnn(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm``: aten's argument order over the functional ``batch_norm``."""
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


batch_norm_cudnn.meta_rule(lambda input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn:
                           batch_norm.meta(input, running_mean, running_var, weight, bias, training, momentum, eps))
batch_norm_cudnn.grad(batch_norm.derivative)


@batch_norm_cudnn.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (4, 3)), u(0.5, 2, 3), u(-1, 1, 3), np.zeros(3), np.ones(3), True, 0.1, 1e-5, False), {}
    yield (u(-2, 2, (2, 3, 4)), None, None, None, None, True, 0.3, 1e-3, True), {}


# ----------------------------------------------------------------------------- torch.layer_norm, group_norm
@op("layer_norm.cudnn(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps, "
    "bool cudnn_enable) -> Tensor", kind=NN, method=False, composite=True)
def layer_norm_cudnn(input, normalized_shape, weight, bias, eps, cudnn_enable):
    """``torch.layer_norm`` with its ``cudnn_enable`` flag: the functional ``layer_norm``."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


layer_norm_cudnn.meta_rule(lambda input, normalized_shape, weight, bias, eps, cudnn:
                           layer_norm.meta(input, normalized_shape, weight, bias, eps))
layer_norm_cudnn.grad(layer_norm.derivative)


@layer_norm_cudnn.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (3, 4)), (4,), u(0.5, 2, 4), u(-1, 1, 4), 1e-5, True), {}
    yield (u(-2, 2, (2, 3, 4)), [3, 4], None, None, 1e-3, False), {}


@op("group_norm.cudnn(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps, "
    "bool cudnn_enabled) -> Tensor", kind=NN, method=False, composite=True)
def group_norm_cudnn(input, num_groups, weight, bias, eps, cudnn_enabled):
    """``torch.group_norm`` with its ``cudnn_enabled`` flag: the functional ``group_norm``."""
    return group_norm(input, num_groups, weight, bias, eps)


group_norm_cudnn.meta_rule(lambda input, num_groups, weight, bias, eps, cudnn:
                           group_norm.meta(input, num_groups, weight, bias, eps))
group_norm_cudnn.grad(group_norm.derivative)


@group_norm_cudnn.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (2, 4, 3)), 2, u(0.5, 2, 4), u(-1, 1, 4), 1e-5, True), {}
    yield (u(-2, 2, (2, 6, 2, 2)), 3, None, None, 1e-3, False), {}


# ----------------------------------------------------------------------------- instance_norm
def _instance_check(input, weight, bias, running_mean, running_var, use_input_stats) -> None:
    if len(input.shape) < 2:
        raise RuntimeError(f"instance_norm: expected 2D or more input (got {len(input.shape)}D input)")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and math.prod(t.shape) != c:
            raise RuntimeError(f"instance_norm: {name} should contain {c} elements not {math.prod(t.shape)}")


def _repeat(t, n: int):
    return None if t is None else t.repeat(n)


def _tile(a, n: int):
    return None if a is None else np.tile(a.reshape(-1), n)


@op("instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor", kind=NN, method=False,
    nondiff_args=("running_mean", "running_var"), grad_fn="ViewBackward0")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """Normalize each (sample, channel) plane over its spatial dims: batch_norm of the input seen as one sample
    with ``N * C`` channels, as ATen composes it. With ``use_input_stats`` the running statistics (if given) move
    toward the planes' statistics averaged over the batch; without it they normalize instead."""
    _instance_check(input, weight, bias, running_mean, running_var, use_input_stats)
    shape = tuple(input.shape)
    b, c = shape[0], shape[1]
    rm, rv = _tile(running_mean, b), _tile(running_var, b)
    out = batch_norm.kernels["cpu"](input.reshape((1, b * c) + shape[2:]), rm, rv, _tile(weight, b),
                                    _tile(bias, b), use_input_stats, momentum, eps)
    if use_input_stats:
        for running, local in ((running_mean, rm), (running_var, rv)):
            if running is not None:
                running[...] = local.reshape(b, c).mean(0)
    return out.reshape(shape)


@instance_norm.meta_rule
def _(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    _instance_check(input, weight, bias, running_mean, running_var, use_input_stats)
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


@instance_norm.grad
def _(grad, input, weight, running_mean, running_var, use_input_stats, eps, needs_input_grad):
    shape = tuple(input.shape)
    b, c = shape[0], shape[1]
    flat = (1, b * c) + shape[2:]
    gi, gw, gb = batch_norm.derivative(
        grad.reshape(flat), input=input.reshape(flat), running_mean=_repeat(running_mean, b),
        running_var=_repeat(running_var, b), weight=_repeat(weight, b), training=use_input_stats, eps=eps,
        needs_input_grad=needs_input_grad)
    gi = gi.reshape(shape) if gi is not None else None
    gw = gw.reshape(b, c).sum(0) if gw is not None else None
    gb = gb.reshape(b, c).sum(0) if gb is not None else None
    return gi, gw, gb


@instance_norm.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (2, 3, 4)), u(0.5, 2, 3), u(-1, 1, 3), None, None, True, 0.1, 1e-5, False), {}
    yield (u(-2, 2, (3, 2, 2, 3)), None, None, np.zeros(2), np.ones(2), True, 0.2, 1e-5, False), {}
    yield (u(-2, 2, (2, 2, 5)), u(0.5, 2, 2), None, None, None, True, 0.1, 1e-3, True), {}


# ----------------------------------------------------------------------------- rms_norm
def _rms_check(shape, normalized_shape, weight) -> tuple:
    ns = tuple(normalized_shape)
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(ns)}")
    if len(shape) < len(ns) or tuple(shape[len(shape) - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(str(s) for s in ns)}], but got input of size{list(shape)}")
    return tuple(range(len(shape) - len(ns), len(shape)))


def _rms_eps(dtype, eps):
    return float(np.finfo(dtype.np).eps) if eps is None else eps


def _opmath(dtype) -> _dt.dtype:
    return _dt.float32 if dtype == _dt.float16 else dtype


@op("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor", kind=NN,
    method=False, grad_fn="MulBackward0")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps) * weight`` over the last ``len(normalized_shape)`` dims; ``eps``
    defaults to the machine epsilon of input's dtype. Half inputs compute in float32, as PyTorch's do."""
    dims = _rms_check(tuple(input.shape), normalized_shape, weight)
    if input.dtype.kind != "f":
        raise RuntimeError(f"rms_norm only supports floating point inputs, got {input.dtype}")
    x = input.astype(np.float32) if input.dtype == np.float16 else input
    e = float(np.finfo(input.dtype).eps) if eps is None else eps
    out = (x / np.sqrt((x * x).mean(axis=dims, keepdims=True) + e)).astype(input.dtype, copy=False)
    return out * weight if weight is not None else out


@rms_norm.meta_rule
def _(input, normalized_shape, weight=None, eps=None):
    _rms_check(tuple(input.shape), normalized_shape, weight)
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


@rms_norm.grad
def _(grad, input, normalized_shape, weight, eps, needs_input_grad):
    dims = list(_rms_check(tuple(input.shape), normalized_shape, weight))
    r = ((input * input).mean(dims, keepdim=True) + _rms_eps(input.dtype, eps)).rsqrt()
    g = grad * weight if weight is not None else grad
    gi = r * (g - input * (r * r) * (g * input).mean(dims, keepdim=True)) if needs_input_grad[0] else None
    gw = None
    if weight is not None and needs_input_grad[1]:
        lead = list(range(input.dim() - len(dims)))
        gw = (grad * input * r).sum(lead) if lead else grad * input * r
    return gi, gw


@rms_norm.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (3, 4)), (4,), u(0.5, 2, 4)), {}
    yield (u(-2, 2, (2, 3, 4)), [3, 4]), {"eps": 1e-3}
    yield (u(-2, 2, (4, 3)).T, [4], None, 1e-5), {}
    yield (u(-2, 2, (5,)).astype(np.float32), [5]), {}



# ----------------------------------------------------------------------------- native_* (out, mean, rstd)
# Composed of differentiable registered ops, so autograd records their parts. As in PyTorch, whose derivatives
# of native_layer_norm and native_batch_norm read only the first output's gradient, their statistics come back
# detached; native_group_norm's carry gradients. The ops have no derivative rule of their own.
def _stats(x, dims, eps):
    mean = x.mean(dims, keepdim=True)
    xc = x - mean
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    return xc, mean, rstd


@op("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)", kind=NN, method=False, composite=True, differentiable=False)
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """layer_norm that also returns the mean and reciprocal standard deviation it normalized with (shaped
    ``input.shape[:axis] + (1,) * len(normalized_shape)``)."""
    layer_norm.meta(input, normalized_shape, weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    xc, mean, rstd = _stats(input.to(_opmath(input.dtype)), dims, eps)
    out = (xc * rstd).to(input.dtype)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean.detach(), rstd.detach()


@native_layer_norm.meta_rule
def _(input, normalized_shape, weight, bias, eps):
    layer_norm.meta(input, normalized_shape, weight, bias, eps)
    k = len(normalized_shape)
    stat = tuple(input.shape[:len(input.shape) - k]) + (1,) * k
    dt = _opmath(input.dtype)
    return (TensorMeta(tuple(input.shape), input.dtype, input.device), TensorMeta(stat, dt, input.device),
            TensorMeta(stat, dt, input.device))


@native_layer_norm.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (3, 4)), (4,), u(0.5, 2, 4), u(-1, 1, 4), 1e-5), {}
    yield (u(-2, 2, (2, 3, 4)), [3, 4], None, None, 1e-3), {}


@op("native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
    "float eps) -> (Tensor, Tensor, Tensor)", kind=NN, method=False, composite=True, differentiable=False)
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """group_norm that also returns each (sample, group)'s mean and reciprocal standard deviation, (N, group)."""
    group_norm.meta(input, group, weight, bias, eps)
    xc, mean, rstd = _stats(input.to(_opmath(input.dtype)).reshape(N, group, -1), [2], eps)
    out = (xc * rstd).reshape(input.shape).to(input.dtype)
    bshape = (1, C) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(bshape)
    if bias is not None:
        out = out + bias.reshape(bshape)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


@native_group_norm.meta_rule
def _(input, weight, bias, N, C, HxW, group, eps):
    group_norm.meta(input, group, weight, bias, eps)
    dt = _opmath(input.dtype)
    return (TensorMeta(tuple(input.shape), input.dtype, input.device), TensorMeta((N, group), dt, input.device),
            TensorMeta((N, group), dt, input.device))


@native_group_norm.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (2, 4, 3)), u(0.5, 2, 4), u(-1, 1, 4), 2, 4, 3, 2, 1e-5), {}
    yield (u(-2, 2, (2, 6, 2, 2)), None, None, 2, 6, 4, 3, 1e-3), {}


@op("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, "
    "Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", kind=NN, out="exact",
    method=False, composite=True, differentiable=False)
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """batch_norm that also returns the batch mean and reciprocal standard deviation per channel when training
    (empty tensors in evaluation, as on PyTorch's CPU)."""
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = api.empty((0,), dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    dims = [0] + list(range(2, input.dim()))
    _, mean, rstd = _stats(input.to(_opmath(input.dtype)), dims, eps)
    return out, mean.reshape(-1).detach(), rstd.reshape(-1).detach()


@native_batch_norm.meta_rule
def _(input, weight, bias, running_mean, running_var, training, momentum, eps):
    batch_norm.meta(input, running_mean, running_var, weight, bias, training, momentum, eps)
    stat = (input.shape[1],) if training else (0,)
    dt = _opmath(input.dtype) if training else input.dtype
    return (TensorMeta(tuple(input.shape), input.dtype, input.device), TensorMeta(stat, dt, input.device),
            TensorMeta(stat, dt, input.device))


@native_batch_norm.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (4, 3)), u(0.5, 2, 3), u(-1, 1, 3), np.zeros(3), np.ones(3), True, 0.1, 1e-5), {}
    yield (u(-2, 2, (2, 3, 4)), None, None, None, None, True, 0.3, 1e-3), {}
    yield (u(-2, 2, (2, 3, 4)), None, None, u(-1, 1, 3), u(0.5, 2, 3), False, 0.1, 1e-5), {}


# ----------------------------------------------------------------------------- native_norm
def _sparse_only(name: str) -> NotImplementedError:
    return NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
                               f"because the operator doesn't exist for this backend. 'aten::{name}' is only "
                               "available for sparse tensors (SparseCPU, SparseCUDA) and Meta.")


@op("native_norm(Tensor self, Scalar p=2) -> Tensor", kind=NN, method=False, differentiable=False)
def native_norm(self, p=2):
    """The p-norm of a sparse tensor's values; PyTorch has no dense kernel, so dense tensors are refused."""
    raise _sparse_only("native_norm")


@op("native_norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, ScalarType? dtype) -> Tensor",
    kind=NN, method=False, differentiable=False)
def native_norm_dim(self, p, dim, keepdim, dtype):
    """The p-norm over ``dim`` of a sparse tensor's values; dense tensors are refused, as in PyTorch."""
    raise _sparse_only("native_norm")


_TESTED_ELSEWHERE = ("PyTorch refuses dense inputs, so the generated comparisons have nothing to run (tests/nn checks the "
                     "error).")


native_norm.tested_elsewhere(_TESTED_ELSEWHERE)
native_norm_dim.tested_elsewhere(_TESTED_ELSEWHERE)
