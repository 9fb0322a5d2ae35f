"""Margin and ranking losses with aten's schemas: ``torch.margin_ranking_loss``, ``hinge_embedding_loss``,
``cosine_embedding_loss``, ``triplet_margin_loss``, ``multi_margin_loss`` and ``multilabel_margin_loss``.

Each is one registry op: a numpy kernel computing what ATen's ``Loss.cpp``
composes, and a derivative written with registered ops, so double backward
works and a scripted graph's autodiff sees only the op's own inputs. ``reduction`` is aten's int enum (0 none, 1 mean, 2 sum);
``toolkit.nn.functional`` maps PyTorch's strings onto it. The ``torch.*`` functions
default ``reduction`` to 0 ('none'), as PyTorch's Python bindings of them do
(they do not read aten's ``Mean`` default); the ``nn.functional`` losses always
pass it.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import api
from .distances import pairwise_distance
from .grad_fn_rules import by_reduction
from .loss import MEAN, NONE, SUM, check_reduction, reduce_np
from .registry import NN, op


def loss_grad(grad, reduction: int, shape: tuple):
    """The gradient of a loss reduced by ``reduction`` (aten's enum) spread back over its ``shape``."""
    if reduction == NONE:
        return grad
    n = math.prod(shape)
    g = grad / n if reduction == MEAN and n else grad
    return g.expand(shape)


def _meta(shape, dtype, device, reduction: int) -> TensorMeta:
    check_reduction(reduction)
    return TensorMeta(tuple(shape) if reduction == NONE else (), dtype, device)


def _promoted(*ts) -> _dt.dtype:
    return _dt.result_type_from([t.dtype for t in ts if len(t.shape)], [t.dtype for t in ts if not len(t.shape)], [])


def _result(x: np.ndarray, *arrays) -> np.ndarray:
    """Cast to the (floating) dtype numpy promotes the inputs to, as PyTorch's composition keeps it."""
    dt = np.result_type(*arrays)
    if dt.kind != "f":
        dt = np.dtype(np.float32)
    return np.asarray(x).astype(dt, copy=False)


def _require_float(name: str, *arrays) -> None:
    for a in arrays:
        if a.dtype.kind != "f":
            raise NotImplementedError(f"\"{name}\" not implemented for '{_dt.title(_dt.from_numpy_dtype(a.dtype))}'")


def _p_distance(x1, x2, p: float, eps: float) -> np.ndarray:
    """``pairwise_distance``: the p-norm of ``x1 - x2 + eps`` over the last dim."""
    a = np.abs(x1 - x2 + eps)
    axis = -1 if a.ndim else None
    if p == 0:
        return (a != 0).sum(axis=axis).astype(a.dtype)
    if p == math.inf:
        return a.max(axis=axis, initial=0)
    if p == 1:
        return a.sum(axis=axis)
    if p == 2:
        return np.sqrt((a * a).sum(axis=axis))
    return np.power(np.power(a, p).sum(axis=axis), 1.0 / p)


def _signs(rng, *shape):
    return rng.choice([-1.0, 1.0], shape)


# ----------------------------------------------------------------------------- margin_ranking_loss
def _check_same_dims(name: str, input1, input2, target) -> None:
    if not (len(input1.shape) == len(input2.shape) == len(target.shape)):
        raise RuntimeError(
            f"{name} : All input tensors should have same dimension but got sizes: input1: "
            f"{_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ")


def _size(t) -> str:
    return f"[{', '.join(str(s) for s in t.shape)}]"


@op("margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=0) -> Tensor",
    kind=NN, grad_fn=by_reduction("ClampMinBackward0", 4), autocast="fp32", method=False)
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=NONE):
    """``max(0, -target * (input1 - input2) + margin)``: ranks ``input1`` above ``input2`` where target is 1."""
    _check_same_dims("margin_ranking_loss", input1, input2, target)
    check_reduction(reduction)
    loss = _result(np.maximum(-target * (input1 - input2) + margin, 0), input1, input2, target)
    return reduce_np(loss, reduction)


@margin_ranking_loss.meta_rule
def _(input1, input2, target, margin=0.0, reduction=MEAN):
    _check_same_dims("margin_ranking_loss", input1, input2, target)
    shape = broadcast_shapes(tuple(input1.shape), tuple(input2.shape), tuple(target.shape))
    return _meta(shape, _promoted(input1, input2, target), input1.device, reduction)


@margin_ranking_loss.grad
def _(grad, input1, input2, target, margin, reduction, needs_input_grad):
    d = input1 - input2
    z = -target * d + margin
    shape = tuple(z.shape)
    g = loss_grad(grad, reduction, shape) * (z > 0)
    g1 = (-target * g).sum_to_size(tuple(input1.shape)) if needs_input_grad[0] else None
    g2 = (target * g).sum_to_size(tuple(input2.shape)) if needs_input_grad[1] else None
    gt = (-d * g).sum_to_size(tuple(target.shape)) if needs_input_grad[2] else None
    return g1, g2, gt


@margin_ranking_loss.sample_inputs
def _(rng):
    u = rng.uniform
    for r in (NONE, MEAN, SUM):
        yield (u(-2, 2, (5,)), u(-2, 2, (5,)), _signs(rng, 5), 0.3, r), {}
    yield (u(-2, 2, (3, 4)), u(-2, 2, (3, 4)), _signs(rng, 3, 4)), {"margin": 0.1}
    yield (u(-2, 2, (3, 1)), u(-2, 2, (1, 4)), _signs(rng, 3, 4), 0.0, SUM), {}


# ----------------------------------------------------------------------------- hinge_embedding_loss
@op("hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=0) -> Tensor", kind=NN, autocast="fp32",
    method=False, nondiff_args=("target",), grad_fn=by_reduction("AddBackward0", 3))
def hinge_embedding_loss(self, target, margin=1.0, reduction=NONE):
    """``self`` where target is 1, ``max(0, margin - self)`` where target is -1 (targets are +-1)."""
    check_reduction(reduction)
    output_margin = np.where(target != 1, np.maximum(margin - self, 0), 0)
    output_self = np.where(target != -1, self, 0)
    return reduce_np((output_margin + output_self).astype(self.dtype, copy=False), reduction)


@hinge_embedding_loss.meta_rule
def _(self, target, margin=1.0, reduction=MEAN):
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape))
    return _meta(shape, self.dtype, self.device, reduction)


@hinge_embedding_loss.grad
def _(grad, self, target, margin, reduction):
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape))
    g = loss_grad(grad, reduction, tuple(shape))
    d = -((target != 1) & (margin - self > 0)).to(self.dtype) + (target != -1).to(self.dtype)
    return (g * d).sum_to_size(tuple(self.shape)), None


@hinge_embedding_loss.sample_inputs
def _(rng):
    u = rng.uniform
    for r in (NONE, MEAN, SUM):
        yield (u(-2, 2, (3, 4)), _signs(rng, 3, 4), 1.0, r), {}
    yield (u(-2, 2, (6,)), _signs(rng, 6)), {"margin": 0.5}


# ----------------------------------------------------------------------------- cosine_embedding_loss
_EPSILON = 1e-12


def _check_cosine(input1, input2, target) -> None:
    d1, d2, dt = len(input1.shape), len(input2.shape), len(target.shape)
    if dt > 1:
        raise RuntimeError("cosine_embedding_loss: 0D or 1D target tensor expected, multi-target not supported")
    if dt == 1:
        if not (d1 == 2 and d2 == 2):
            raise RuntimeError(f"cosine_embedding_loss: 1D target tensor expects 2D input tensors, but found inputs "
                               f"with sizes {_size(input1)} and {_size(input2)}.")
    elif not (d1 == 1 and d2 == 1):
        raise RuntimeError(f"cosine_embedding_loss: 0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {_size(input1)} and {_size(input2)}.")


def _cosine_parts(input1, input2):
    dim = len(input1.shape) - 1
    prod_sum = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _EPSILON
    mag2 = (input2 * input2).sum(dim) + _EPSILON
    denom = (mag1 * mag2).sqrt()
    return prod_sum / denom, mag1, mag2, denom


@op("cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=0) -> Tensor",
    kind=NN, grad_fn=by_reduction("AddBackward0", 4), autocast="fp32", method=False, nondiff_args=("target",))
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=NONE):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where target is -1."""
    _check_cosine(input1, input2, target)
    check_reduction(reduction)
    prod_sum = (input1 * input2).sum(-1)
    denom = np.sqrt(((input1 * input1).sum(-1) + _EPSILON) * ((input2 * input2).sum(-1) + _EPSILON))
    cos = prod_sum / denom
    out = np.where(target == 1, 1 - cos, 0) + np.where(target == -1, np.maximum(cos - margin, 0), 0)
    return reduce_np(_result(out, input1, input2), reduction)


@cosine_embedding_loss.meta_rule
def _(input1, input2, target, margin=0.0, reduction=MEAN):
    _check_cosine(input1, input2, target)
    shape = broadcast_shapes(tuple(input1.shape[:-1]), tuple(input2.shape[:-1]), tuple(target.shape))
    return _meta(shape, _promoted(input1, input2), input1.device, reduction)


@cosine_embedding_loss.grad
def _(grad, input1, input2, target, margin, reduction, needs_input_grad):
    cos, mag1, mag2, denom = _cosine_parts(input1, input2)
    g = loss_grad(grad, reduction, tuple(cos.shape))
    dcos = (-(target == 1).to(cos.dtype) + ((target == -1) & (cos - margin > 0)).to(cos.dtype)) * g
    dcos = dcos.unsqueeze(-1)
    c, dn = cos.unsqueeze(-1), denom.unsqueeze(-1)
    g1 = dcos * (input2 / dn - c * input1 / mag1.unsqueeze(-1)) if needs_input_grad[0] else None
    g2 = dcos * (input1 / dn - c * input2 / mag2.unsqueeze(-1)) if needs_input_grad[1] else None
    return g1, g2, None


@cosine_embedding_loss.sample_inputs
def _(rng):
    u = rng.uniform
    for r in (NONE, MEAN, SUM):
        yield (u(-2, 2, (4, 3)), u(-2, 2, (4, 3)), _signs(rng, 4), 0.2, r), {}
    yield (u(-2, 2, (5,)), u(-2, 2, (5,)), np.array(-1.0)), {"margin": -0.5}


# ----------------------------------------------------------------------------- triplet_margin_loss
def _check_triplet(anchor, positive, negative) -> None:
    a, p, n = len(anchor.shape), len(positive.shape), len(negative.shape)
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def _distance_vjp(g, x1, x2, p, eps, dist):
    """Gradients of ``pairwise_distance(x1, x2, p, eps)`` (its result ``dist``) for the incoming ``g``."""
    return pairwise_distance.derivative(g, x1=x1, x2=x2, p=p, eps=eps, keepdim=False, result=dist,
                                        needs_input_grad=(True, True))


@op("triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2., "
    "float eps=1e-06, bool swap=False, int reduction=0) -> Tensor", kind=NN, autocast="fp32", method=False,
    grad_fn=by_reduction("ClampMinBackward0", 7))
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=NONE):
    """``max(0, d(a, p) - d(a, n) + margin)``, ``d`` the p-norm distance over the last dim; ``swap`` uses
    ``min(d(a, n), d(p, n))`` for the negative distance."""
    _check_triplet(anchor, positive, negative)
    check_reduction(reduction)
    dist_pos = _p_distance(anchor, positive, p, eps)
    dist_neg = _p_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = np.minimum(dist_neg, _p_distance(positive, negative, p, eps))
    return reduce_np(_result(np.maximum(margin + dist_pos - dist_neg, 0), anchor, positive, negative), reduction)


@triplet_margin_loss.meta_rule
def _(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=MEAN):
    _check_triplet(anchor, positive, negative)
    shape = broadcast_shapes(tuple(anchor.shape), tuple(positive.shape), tuple(negative.shape))
    dtype = _promoted(anchor, positive, negative)
    return _meta(shape[:-1], dtype, anchor.device, reduction)


@triplet_margin_loss.grad
def _(grad, anchor, positive, negative, margin, p, eps, swap, reduction):
    dist_pos = api.pairwise_distance(anchor, positive, p, eps)
    dist_neg = api.pairwise_distance(anchor, negative, p, eps)
    use_swap = None
    if swap:
        dist_swap = api.pairwise_distance(positive, negative, p, eps)
        use_swap = dist_swap < dist_neg
        d_neg = api.min(dist_neg, dist_swap)
    else:
        d_neg = dist_neg
    z = margin + dist_pos - d_neg
    g = loss_grad(grad, reduction, tuple(z.shape)) * (z > 0)
    ga, gp = _distance_vjp(g, anchor, positive, p, eps, dist_pos)
    if use_swap is None:
        gan, gn = _distance_vjp(-g, anchor, negative, p, eps, dist_neg)
        return ga + gan, gp, gn
    zeros = api.zeros_like(g)
    gan, gn1 = _distance_vjp(api.where(use_swap, zeros, -g), anchor, negative, p, eps, dist_neg)
    gps, gn2 = _distance_vjp(api.where(use_swap, -g, zeros), positive, negative, p, eps, dist_swap)
    return ga + gan, gp + gps, gn1 + gn2


@triplet_margin_loss.sample_inputs
def _(rng):
    u = rng.uniform
    for r in (NONE, MEAN, SUM):
        yield (u(-1, 1, (4, 3)), u(-1, 1, (4, 3)), u(-1, 1, (4, 3)), 1.0, 2.0, 1e-6, False, r), {}
    yield (u(-1, 1, (4, 3)), u(-1, 1, (4, 3)), u(-1, 1, (4, 3))), {"swap": True, "margin": 0.5}
    yield (u(-1, 1, (5,)), u(-1, 1, (5,)), u(-1, 1, (5,))), {"p": 1.0, "margin": 2.0}
    yield (u(-1, 1, (3, 4)), u(-1, 1, (3, 4)), u(-1, 1, (3, 4))), {"p": 3.0, "reduction": SUM}


# ----------------------------------------------------------------------------- multi_margin_loss
def _check_multi_margin(self, target, p, weight) -> int:
    nd = len(self.shape)
    if not (nd <= 2 and (nd == 0 or self.shape[-1] > 0 or nd == 1)):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_size(self)}")
    n = self.shape[0] if nd == 2 else 1
    c = self.shape[-1] if nd else 1
    if len(target.shape) > 1 or math.prod(target.shape) != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {_size(target)}")
    if p != 1 and p != 2:
        raise RuntimeError("only p == 1 and p == 2 supported")
    if weight is not None and (len(weight.shape) > 1 or math.prod(weight.shape) != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {_size(weight)}")
    return c


def _margin_terms(self, target, p, margin, weight):
    """The (N, C) hinge terms ``max(0, margin - x[y] + x[i])**p`` (times ``weight[y]``), 0 at ``i == y``."""
    x = self.reshape(-1, self.shape[-1] if self.dim() else 1)
    y = target.reshape(-1, 1)
    z = margin - x.gather(1, y) + x
    not_target = api.arange(x.shape[1], device=x.device).reshape(1, -1) != y
    active = (z > 0) & not_target
    h = z.clamp_min(0) if p == 1 else z.clamp_min(0) * z.clamp_min(0)
    h = api.where(not_target, h, api.zeros_like(h))
    if weight is not None:
        wy = weight.reshape(-1).index_select(0, target.reshape(-1)).reshape(-1, 1)
        h = h * wy
    else:
        wy = None
    return x, y, z, active, h, wy


def _shape_out(self) -> tuple:
    return tuple(self.shape[:1]) if self.dim() == 2 else ()


@op("multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "
    "int reduction=1) -> Tensor", kind=NN, autocast="fp32", method=False, namespace="ops.aten",
    nondiff_args=("target", "weight"))
def multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=MEAN):
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per sample (p is 1 or 2)."""
    c = _check_multi_margin(self, target, p, weight)
    check_reduction(reduction)
    _require_float("multi_margin_loss_cpu", self)
    y = target.reshape(-1).astype(np.int64)
    if y.size and (y.min() < 0 or y.max() >= c):
        raise RuntimeError("target out of range")
    x = self.reshape(-1, c)
    z = margin - np.take_along_axis(x, y[:, None], 1) + x
    h = np.maximum(z, 0)
    if p == 2:
        h = h * h
    h[np.arange(x.shape[0]), y] = 0
    if weight is not None:
        h = h * weight.reshape(-1)[y][:, None]
    loss = (h.sum(1) / c).astype(self.dtype, copy=False).reshape(tuple(self.shape[:1]) if self.ndim == 2 else ())
    return reduce_np(loss, reduction)


@multi_margin_loss.meta_rule
def _(self, target, p=1, margin=1, weight=None, reduction=MEAN):
    _check_multi_margin(self, target, p, weight)
    return _meta(tuple(self.shape[:1]) if len(self.shape) == 2 else (), self.dtype, self.device, reduction)


@multi_margin_loss.grad
def _(grad, self, target, p, margin, weight, reduction):
    c = self.shape[-1] if self.dim() else 1
    x, y, z, active, _, wy = _margin_terms(self, target, p, margin, weight)
    g = loss_grad(grad, reduction, _shape_out(self)).reshape(-1, 1) / c
    dz = active.to(x.dtype) if p == 1 else 2 * z * active
    if wy is not None:
        dz = dz * wy
    dz = dz * g
    gx = dz.scatter_add(1, y, -dz.sum(1, keepdim=True))
    return gx.reshape(self.shape), None, None


@multi_margin_loss.sample_inputs
def _(rng):
    u = rng.uniform
    for r in (NONE, MEAN, SUM):
        yield (u(-1, 1, (4, 3)), rng.integers(0, 3, 4), 1, 1.0, None, r), {}
    yield (u(-1, 1, (4, 5)), rng.integers(0, 5, 4), 2, 0.7, u(0.5, 2, 5)), {}
    yield (u(-1, 1, (5,)), np.array([2]), 1, 1, u(0.5, 2, 5)), {"reduction": SUM}


# ----------------------------------------------------------------------------- multilabel_margin_loss
def _check_multilabel(self, target) -> None:
    nd = len(self.shape)
    if nd > 2 or (nd == 2 and self.shape[1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_size(self)}")
    if tuple(target.shape) != tuple(self.shape) and not (nd <= 1 and len(target.shape) <= 1
                                                         and math.prod(target.shape) == math.prod(self.shape)):
        raise RuntimeError(f"inconsistent target size: {_size(target)} for input of size: {_size(self)}")


def _multilabel_terms(self, target):
    """Masks and hinge terms over (sample, target slot j, class i): ``1 - x[y_j] + x[i]`` for each valid
    target ``y_j`` (the ones before the first -1) and each class ``i`` that is not a target."""
    c = self.shape[-1] if self.dim() else 1
    x = self.reshape(-1, c)
    t = target.reshape(-1, c)
    valid = (t >= 0).to(_dt.int64).cumprod(1) > 0
    y = api.where(valid, t, api.zeros_like(t))
    is_target = api.zeros(x.shape, dtype=_dt.int64, device=x.device).scatter_add(1, y, valid.to(_dt.int64)) > 0
    xy = x.gather(1, y)
    z = 1 - xy.unsqueeze(2) + x.unsqueeze(1)
    mask = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    return x, y, z, mask, c


@op("multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", kind=NN, autocast="fp32", method=False,
    namespace="ops.aten", nondiff_args=("target",))
def multilabel_margin_loss(self, target, reduction=MEAN):
    """Multi-label hinge loss: each sample's targets (class indices up to the first -1) should score a margin of 1
    above every non-target class; ``sum_{j, i} max(0, 1 - x[y_j] + x[i]) / C``."""
    _check_multilabel(self, target)
    check_reduction(reduction)
    _require_float("multilabel_margin_loss_forward_out_frame", self)
    c = self.shape[-1] if self.ndim else 1
    if target.size and (target.min() < -1 or target.max() >= c):
        raise RuntimeError("multilabel_margin_loss: target out of range")
    x = self.reshape(-1, c)
    t = target.reshape(-1, c).astype(np.int64)
    valid = np.cumprod(t >= 0, axis=1).astype(bool)
    y = np.where(valid, t, 0)
    is_target = np.zeros(x.shape, bool)
    rows = np.broadcast_to(np.arange(x.shape[0])[:, None], y.shape)
    is_target[rows[valid], y[valid]] = True
    z = 1 - np.take_along_axis(x, y, 1)[:, :, None] + x[:, None, :]
    mask = valid[:, :, None] & ~is_target[:, None, :]
    h = np.where(mask, np.maximum(z, 0), 0)
    loss = (h.sum((1, 2)) / c).astype(self.dtype, copy=False).reshape(tuple(self.shape[:1]) if self.ndim == 2 else ())
    return reduce_np(loss, reduction)


@multilabel_margin_loss.meta_rule
def _(self, target, reduction=MEAN):
    _check_multilabel(self, target)
    return _meta(tuple(self.shape[:1]) if len(self.shape) == 2 else (), self.dtype, self.device, reduction)


@multilabel_margin_loss.grad
def _(grad, self, target, reduction):
    x, y, z, mask, c = _multilabel_terms(self, target)
    g = loss_grad(grad, reduction, _shape_out(self)).reshape(-1, 1, 1) / c
    m = (mask & (z > 0)).to(x.dtype) * g
    gx = m.sum(1).scatter_add(1, y, -m.sum(2))
    return gx.reshape(self.shape), None


@multilabel_margin_loss.sample_inputs
def _(rng):
    u = rng.uniform
    t = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 2, 0]])
    for r in (NONE, MEAN, SUM):
        yield (u(-1, 1, (3, 4)), t, r), {}
    yield (u(-1, 1, (4,)), np.array([2, 1, -1, 3])), {}
