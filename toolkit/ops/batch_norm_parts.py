"""SyncBatchNorm's building blocks: ``torch.batch_norm_stats``, ``batch_norm_elemt``, ``batch_norm_gather_stats``,
``batch_norm_gather_stats_with_counts``, ``batch_norm_backward_reduce``, ``batch_norm_backward_elemt`` and
``batch_norm_update_stats``.

Synchronized batch norm computes per-process statistics, gathers them across
processes, normalizes with the global ones, and in backward reduces and
gathers the gradient sums the same way. PyTorch has CPU kernels only for
``batch_norm_update_stats``; the others refuse CPU tensors with
``NotImplementedError``, and so do these. On other devices each is composed of
registered ops with the CUDA kernels' semantics. Statistics are per channel
(dim 1) over the batch and spatial dims; ``invstd`` is ``1 / sqrt(var + eps)``
of the biased variance.
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, op


def _cpu_refused(name: str, input) -> None:
    if input.device.type == "cpu":
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be because the "
            f"operator doesn't exist for this backend. 'aten::{name}' is only available for CUDA tensors.")


def _dims(input) -> list:
    return [0] + list(range(2, input.dim()))


def _bshape(input) -> tuple:
    return (1, input.shape[1]) + (1,) * (input.dim() - 2)


def _stat_dtype(dtype) -> _dt.dtype:
    return _dt.float32 if dtype == _dt.float16 else dtype


def _channels(input, dtype=None) -> TensorMeta:
    return TensorMeta((input.shape[1],), dtype or _stat_dtype(input.dtype), input.device)


def _same(input) -> TensorMeta:
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


_TESTED_ELSEWHERE = ("PyTorch refuses CPU tensors here, so the generated CPU comparisons have nothing to run; the refusal "
                     "is checked in tests/nn/test_functional_norms_more.py.")


# ----------------------------------------------------------------------------- forward
@op("batch_norm_stats(Tensor input, float eps) -> (Tensor, Tensor)", kind=NN, method=False, composite=True,
    differentiable=False)
def batch_norm_stats(input, eps):
    """Per-channel mean and ``invstd`` of this process's batch."""
    _cpu_refused("batch_norm_stats", input)
    x = input.to(_stat_dtype(input.dtype))
    dims = _dims(x)
    mean = x.mean(dims)
    xc = x - mean.reshape(_bshape(x))
    return mean, ((xc * xc).mean(dims) + eps).rsqrt()


batch_norm_stats.meta_rule(lambda input, eps: (_channels(input), _channels(input)))
batch_norm_stats.tested_elsewhere(_TESTED_ELSEWHERE)


@op("batch_norm_elemt(Tensor input, Tensor? weight, Tensor? bias, Tensor mean, Tensor invstd, float eps) -> Tensor",
    kind=NN, method=False, composite=True, differentiable=False)
def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """Normalize with the given (global) ``mean`` and ``invstd``, then scale and shift per channel."""
    _cpu_refused("batch_norm_elemt", input)
    b = _bshape(input)
    out = (input - mean.reshape(b)) * invstd.reshape(b)
    if weight is not None:
        out = out * weight.reshape(b)
    if bias is not None:
        out = out + bias.reshape(b)
    return out.to(input.dtype)


batch_norm_elemt.meta_rule(lambda input, weight, bias, mean, invstd, eps: _same(input))
batch_norm_elemt.tested_elsewhere(_TESTED_ELSEWHERE)


def _gather(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    global_mean = (mean * counts).sum(0) / total
    var = (invstd * invstd).reciprocal() - eps
    centred = mean - global_mean.reshape(1, -1)
    global_var = ((var + centred * centred) * counts).sum(0) / total
    if running_mean is not None:
        running_mean.detach().copy_(running_mean * (1 - momentum) + global_mean * momentum)
    if running_var is not None:
        unbiased = global_var * total / (total - 1)
        running_var.detach().copy_(running_var * (1 - momentum) + unbiased * momentum)
    return global_mean, (global_var + eps).rsqrt()


@op("batch_norm_gather_stats(Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, Tensor? running_var, "
    "float momentum, float eps, int count) -> (Tensor, Tensor)", kind=NN, method=False, composite=True,
    differentiable=False)
def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    """Combine the (world, C) per-process statistics, each over ``count`` elements, into global ones, updating
    the running statistics (the variance unbiased)."""
    _cpu_refused("batch_norm_gather_stats", input)
    counts = api.full((mean.shape[0],), float(count), dtype=mean.dtype, device=mean.device)
    return _gather(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


@op("batch_norm_gather_stats_with_counts(Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, "
    "Tensor? running_var, float momentum, float eps, Tensor counts) -> (Tensor, Tensor)", kind=NN, method=False,
    composite=True, differentiable=False)
def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    """:func:`batch_norm_gather_stats` with a count per process."""
    _cpu_refused("batch_norm_gather_stats_with_counts", input)
    return _gather(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def _gather_meta(input, mean, invstd, *rest):
    m = TensorMeta((mean.shape[-1],), mean.dtype, mean.device)
    return m, TensorMeta((mean.shape[-1],), invstd.dtype, invstd.device)


for _o in (batch_norm_gather_stats, batch_norm_gather_stats_with_counts):
    _o.meta_rule(_gather_meta)
    _o.tested_elsewhere(_TESTED_ELSEWHERE)


@op("batch_norm_update_stats(Tensor input, Tensor? running_mean, Tensor? running_var, float momentum) "
    "-> (Tensor, Tensor)", kind=NN, method=False, composite=True, differentiable=False)
def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """This batch's per-channel mean and (biased) variance; the running statistics, where given, move toward
    them by ``momentum`` (the variance unbiased), as in training-mode batch_norm."""
    dims = _dims(input)
    x = input.detach()
    mean = x.mean(dims)
    xc = x - mean.reshape(_bshape(x))
    var = (xc * xc).mean(dims)
    n = input.numel() // max(input.shape[1], 1)
    if running_mean is not None:
        running_mean.detach().copy_(running_mean * (1 - momentum) + mean * momentum)
    if running_var is not None:
        running_var.detach().copy_(running_var * (1 - momentum) + var * (n / (n - 1)) * momentum)
    return mean, var


batch_norm_update_stats.meta_rule(lambda input, rm, rv, momentum: (_channels(input, input.dtype),
                                                                   _channels(input, input.dtype)))


@batch_norm_update_stats.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (4, 3, 5)), u(-1, 1, 3), u(0.5, 2, 3), 0.1), {}
    yield (u(-2, 2, (4, 3)), None, None, 0.3), {}


# ----------------------------------------------------------------------------- backward
@op("batch_norm_backward_reduce(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, "
    "bool input_g, bool weight_g, bool bias_g) -> (Tensor, Tensor, Tensor, Tensor)", kind=NN, method=False,
    composite=True, differentiable=False)
def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """This process's gradient sums: ``sum_dy``, ``sum_dy_xmu`` (both when ``input_g``), and the weight and
    bias gradients when asked for (None otherwise)."""
    _cpu_refused("batch_norm_backward_reduce", input)
    dims = _dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - mean.reshape(_bshape(input)))).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g and weight is not None else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


@batch_norm_backward_reduce.meta_rule
def _(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    m = TensorMeta((input.shape[1],), mean.dtype, input.device)
    return m, m, m, m


batch_norm_backward_reduce.tested_elsewhere(_TESTED_ELSEWHERE)


@op("batch_norm_backward_elemt(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, "
    "Tensor sum_dy, Tensor sum_dy_xmu, Tensor count) -> Tensor", kind=NN, method=False, composite=True,
    differentiable=False)
def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input gradient from the globally reduced ``sum_dy`` and ``sum_dy_xmu`` over ``count.sum()`` elements."""
    _cpu_refused("batch_norm_backward_elemt", input)
    b = _bshape(input)
    norm = 1.0 / count.to(mean.dtype).sum()
    mean_dy = (sum_dy * norm).reshape(b)
    mean_dy_xmu = (sum_dy_xmu * norm).reshape(b)
    inv = invstd.reshape(b)
    scale = inv * weight.reshape(b) if weight is not None else inv
    grad = (grad_out - mean_dy - (input - mean.reshape(b)) * inv * inv * mean_dy_xmu) * scale
    return grad.to(input.dtype)


batch_norm_backward_elemt.meta_rule(lambda grad_out, input, *rest: _same(input))
batch_norm_backward_elemt.tested_elsewhere(_TESTED_ELSEWHERE)
