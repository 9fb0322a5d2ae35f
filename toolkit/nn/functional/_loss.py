"""Functional losses with PyTorch's signatures: ``reduction`` strings and the legacy ``size_average``/``reduce``.

The core losses are registry ops taking aten's int reduction (``toolkit/ops/loss.py``);
these wrappers map the strings onto it, broadcast and warn as PyTorch does, and
compose ``cross_entropy`` (class indices, label smoothing, class probabilities)
and the smaller losses from registered ops, so every path is twice differentiable.
"""

from __future__ import annotations

import math
import warnings

from ... import autograd as _autograd
from ..._core import dtypes as _dt
from ..._core.shape import broadcast_shapes
from ...ops import api
from ...tensor import Tensor

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "soft_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "multilabel_soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss", "gaussian_nll_loss",
    "ctc_loss", "linear_cross_entropy",
]


def get_enum(reduction: str) -> int:
    """PyTorch's ``_Reduction.get_enum``: 'none' 0, 'mean' 1, 'sum' 2."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> str:
    """PyTorch's ``_Reduction.legacy_get_string``: the reduction the deprecated pair of flags means."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _warn_size(input, target) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _reduce(loss, reduction: str):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _weighted(errors, weight, input, reduction: str):
    """Per-element weights of mse_loss/l1_loss/huber_loss: 'mean' divides by the weights' sum (l1, mse)."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = errors * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """Mean squared error; ``weight`` (input's shape) weights each element."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = api.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((x - t).pow(2), weight, input, reduction)
    return api.mse_loss(x, t, get_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """Mean absolute error; ``weight`` (input's shape) weights each element."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = api.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((x - t).abs(), weight, input, reduction)
    return api.l1_loss(x, t, get_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
    """Quadratic below ``beta``, linear above; ``beta=0`` is the L1 loss."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = api.broadcast_tensors(input, target)
    if beta == 0.0:
        return api.l1_loss(x, t, get_enum(reduction))
    return api.smooth_l1_loss(x, t, get_enum(reduction), beta)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Quadratic below ``delta``, ``delta``-scaled linear above; ``weight`` weights each element."""
    _warn_size(input, target)
    x, t = api.broadcast_tensors(input, target)
    if weight is None:
        return api.huber_loss(x, t, get_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = api.huber_loss(x, t, 0, delta) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """Negative log likelihood of class-index targets; input (C,), (N, C) or (N, C, d1, ...)."""
    reduction = _reduction(size_average, reduce, reduction)
    return api.nll_loss_nd(input, target, weight, get_enum(reduction), ignore_index)


def _class_weight(weight, ndim: int, class_dim: int):
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input, target, weight, reduction: int, label_smoothing: float):
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no classes but "
            f"got weight tensor of shape: {list(weight.shape)}")
    logp = api.log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight(weight, input.dim(), class_dim)
    if reduction == 0:
        return -prod.sum(class_dim)
    if reduction == 2:
        return -prod.sum()
    if input.numel() == 0:
        return -prod.sum() * math.nan
    return -prod.sum() / (input.numel() / n_classes)


def _cross_entropy_smoothed(input, target, weight, reduction: int, ignore_index: int, label_smoothing: float):
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = api.log_softmax(input, class_dim)
    nll = api.nll_loss_nd(logp, target, weight, reduction, ignore_index)
    ignore = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight(weight, input.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == 1:
        if weight is not None:
            safe = api.where(ignore, 0, target).reshape(-1)
            denom = api.where(ignore.reshape(-1), 0, weight.index_select(0, safe)).sum()
        else:
            denom = (~ignore).sum()
        ret = smooth.sum() / denom
    elif reduction == 2:
        ret = smooth.sum()
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / n_classes)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """Cross entropy of logits against class indices, or against class probabilities of input's shape."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    if input.size() == target.size():
        if not target.is_floating_point():
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {_int_title(target)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, red, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _cross_entropy_smoothed(input, target, weight, red, ignore_index, label_smoothing)
    class_dim = 0 if input.dim() == 1 else 1
    return api.nll_loss_nd(api.log_softmax(input, class_dim), target, weight, red, ignore_index)


def _int_title(t: Tensor) -> str:
    """PyTorch's scalar-type name of a tensor that is not floating point (written to script: dtype tests)."""
    if t.dtype == _dt.int64:
        return "Long"
    if t.dtype == _dt.int32:
        return "Int"
    if t.dtype == _dt.int16:
        return "Short"
    if t.dtype == _dt.int8:
        return "Char"
    if t.dtype == _dt.uint8:
        return "Byte"
    if t.dtype == _dt.bool:
        return "Bool"
    return "Complex"


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
    """Binary cross entropy of probabilities; each log is clamped to >= -100."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    return api.binary_cross_entropy(input, target, weight, red)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """Binary cross entropy on logits, numerically stable; ``pos_weight`` weights the positive term."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return api.binary_cross_entropy_with_logits(input, target, weight, pos_weight, red)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
    """KL divergence of log-probabilities ``input`` from ``target``; 'batchmean' divides the sum by the batch."""
    if size_average is not None or reduce is not None:
        red = get_enum(legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        red = 2 if reduction == "batchmean" else get_enum(reduction)
    out = api.kl_div(input, target, red, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """Poisson negative log likelihood; ``full`` adds Stirling's term where target > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return api.poisson_nll_loss(input, target, log_input, full, eps, get_enum(reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``."""
    reduction = _reduction(size_average, reduce, reduction)
    get_enum(reduction)
    return _reduce(api.softplus(-target * input), reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """``max(0, -target * (input1 - input2) + margin)``."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return api.margin_ranking_loss(input1, input2, target, margin, red)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """``input`` where target is 1, ``max(0, margin - input)`` where target is -1."""
    return api.hinge_embedding_loss(input, target, margin, get_enum(_reduction(size_average, reduce, reduction)))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """Per-class logistic loss averaged over the classes (the last dim)."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * api.log_sigmoid(input) + (1 - target) * api.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                          reduction: str = "mean"):
    """``1 - cos`` where target is 1, ``max(0, cos - margin)`` where target is -1."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    return api.cosine_embedding_loss(input1, input2, target, margin, red)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the p-norm distance over the last dim."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == nd):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    return api.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, red)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean"):
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (``pairwise_distance`` by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, nd = anchor.ndim, positive.ndim, negative.ndim
    if not (a == pd == nd):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    distance = distance_function if distance_function is not None else api.pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = api.minimum(dist_neg, distance(positive, negative))
    return _reduce(api.clamp_min(margin + dist_pos - dist_neg, 0), reduction)


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                      reduction: str = "mean"):
    """Multi-class hinge loss of scores ``input`` (N, C) or (C,) against class indices ``target``."""
    red = get_enum(_reduction(size_average, reduce, reduction))
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return api.multi_margin_loss(input, target, p, margin, weight, red)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Multi-label hinge loss: ``target`` holds each sample's class indices, ended by -1."""
    return api.multilabel_margin_loss(input, target, get_enum(_reduction(size_average, reduce, reduction)))


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    """Gaussian negative log likelihood ``0.5 (log var + (input - target)^2 / var)`` (plus ``0.5 log 2 pi`` when
    ``full``); ``var`` may be a float, input's shape, or one dim short of it (homoscedastic)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * api.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _autograd.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False):
    """Connectionist temporal classification loss of (T, N, C) log-probabilities (``log_softmax`` output) against
    padded (N, S) or concatenated targets; the lengths as integer tensors or sequences."""
    return api.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, get_enum(reduction), zero_infinity)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target)``, with PyTorch's checks. PyTorch's
    ``options`` pick a chunked evaluation that saves memory; the result is the same, so they are accepted and the
    logits computed whole."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = api.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
