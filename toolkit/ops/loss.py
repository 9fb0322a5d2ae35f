"""Loss ops with aten's schemas: regression losses, binary cross entropy and KL divergence.

``reduction`` is aten's int enum (0 none, 1 mean, 2 sum); ``toolkit.nn.functional``
maps PyTorch's strings (and the legacy ``size_average``/``reduce`` pair) onto it.
``torch.kl_div`` and ``torch.binary_cross_entropy_with_logits`` default ``reduction``
to 0 ('none'), as PyTorch's Python bindings of them do (they do not read aten's
``Mean`` default). Kernels are vectorized numpy; derivatives are written with
registered ops, so double backward works. ``nll_loss_nd`` lives in ``loss_nll.py``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import api
from .grad_fn_rules import by_reduction
from .registry import NN, op

NONE, MEAN, SUM = 0, 1, 2


def check_reduction(reduction: int) -> None:
    if reduction not in (NONE, MEAN, SUM):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce_np(loss: np.ndarray, reduction: int) -> np.ndarray:
    """The elementwise loss reduced as aten does (the mean of nothing is nan)."""
    if reduction == NONE:
        return loss
    if reduction == SUM:
        return np.asarray(np.sum(loss), dtype=loss.dtype)
    if loss.size == 0:
        return np.asarray(np.nan, dtype=loss.dtype)
    return np.asarray(np.mean(loss), dtype=loss.dtype)


def _numel(*shapes) -> int:
    n = 1
    for s in broadcast_shapes(*shapes):
        n *= s
    return n


def _scaled(grad, reduction: int, self, target):
    """The incoming gradient spread over the elements: divided by their count for 'mean'."""
    if reduction == MEAN:
        return grad / max(_numel(tuple(self.shape), tuple(target.shape)), 1)
    return grad


def _promoted(*ts) -> _dt.dtype:
    dims = [t.dtype for t in ts if t is not None and len(t.shape) > 0]
    zeros = [t.dtype for t in ts if t is not None and len(t.shape) == 0]
    return _dt.result_type_from(dims, zeros, [])


def _require_float(name: str, dtype: _dt.dtype) -> None:
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dt.title(dtype)}'")


def _pointwise_meta(name: str, promote: bool = True):
    """Meta rule of a loss over broadcast ``self``/``target``: a scalar unless reduction is 'none'."""

    def meta(self, target, reduction, *rest):
        check_reduction(reduction)
        shape = broadcast_shapes(tuple(self.shape), tuple(target.shape), op=name)
        dt = _promoted(self, target) if promote else self.dtype
        _require_float(name, dt)
        return TensorMeta(shape if reduction == NONE else (), dt, self.device)

    return meta


def check_loss_input(name: str, x: np.ndarray, reduction: int) -> None:
    """Check a loss kernel's ``reduction`` and that ``x`` is floating point, with PyTorch's errors."""
    check_reduction(reduction)
    if x.dtype.kind != "f":
        _require_float(name, _dt.from_numpy_dtype(x.dtype))


def _regression_samples(extra: dict | None = None):
    def samples(rng):
        kw = extra or {}
        for r in (NONE, MEAN, SUM):
            yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4)), r), dict(kw)
        yield (rng.uniform(-2, 2, (4, 3)).T, rng.uniform(-2, 2, (3, 1)), MEAN), dict(kw)
        yield (rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,))), dict(kw, reduction=NONE)
        yield (np.array(0.7), np.array(-0.4), SUM), dict(kw)
        yield (rng.uniform(-2, 2, (0, 3)), rng.uniform(-2, 2, (0, 3)), SUM), dict(kw)
        yield (rng.uniform(-2, 2, (3,)).astype(np.float32), rng.uniform(-2, 2, (3,)), MEAN), dict(kw)

    return samples


# ---------------------------------------------------------------------------------------------
# mse_loss, l1_loss
# ---------------------------------------------------------------------------------------------
@op("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", kind=NN, autocast="fp32", method=False,
    namespace="ops.aten", promote_args=("self", "target"))
def mse_loss(self, target, reduction=MEAN):
    """Squared error ``(self - target)**2``, reduced by ``reduction`` (0 none, 1 mean, 2 sum)."""
    check_loss_input("mse", self, reduction)
    d = self - target
    return reduce_np(d * d, reduction)


mse_loss.meta_rule(_pointwise_meta("mse"))
mse_loss.sample_inputs(_regression_samples())


@mse_loss.grad
def _(grad, self, target, reduction):
    g = _scaled(grad, reduction, self, target) * (self - target) * 2
    return g, -g


@op("l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", kind=NN, autocast="fp32", method=False,
    namespace="ops.aten", promote_args=("self", "target"), grad_fn=by_reduction("AbsBackward0", 2))
def l1_loss(self, target, reduction=MEAN):
    """Absolute error ``|self - target|``, reduced by ``reduction``."""
    check_loss_input("l1", self, reduction)
    return reduce_np(np.abs(self - target), reduction)


l1_loss.meta_rule(_pointwise_meta("l1"))
l1_loss.sample_inputs(_regression_samples())


@l1_loss.grad
def _(grad, self, target, reduction):
    g = _scaled(grad, reduction, self, target) * (self - target).sign()
    return g, -g


# ---------------------------------------------------------------------------------------------
# smooth_l1_loss, huber_loss
# ---------------------------------------------------------------------------------------------
@op("smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor", kind=NN, autocast="fp32",
    method=False, namespace="ops.aten", promote_args=("self", "target"))
def smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    """``0.5 z**2 / beta`` where ``|z| < beta``, else ``|z| - 0.5 beta`` (``z = self - target``)."""
    check_loss_input("smooth_l1", self, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    z = np.abs(self - target)
    if beta == 0:
        return reduce_np(z, reduction)
    return reduce_np(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(z.dtype, copy=False), reduction)


smooth_l1_loss.meta_rule(_pointwise_meta("smooth_l1"))
smooth_l1_loss.sample_inputs(_regression_samples({"beta": 0.8}))


@smooth_l1_loss.grad
def _(grad, self, target, reduction, beta):
    z = self - target
    d = z.sign() if beta == 0 else api.where(z.abs() < beta, z / beta, z.sign())
    g = _scaled(grad, reduction, self, target) * d
    return g, -g


@op("huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor", kind=NN, autocast="fp32",
    method=False, namespace="ops.aten")
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    """``0.5 z**2`` where ``|z| < delta``, else ``delta (|z| - 0.5 delta)``; the result has ``self``'s dtype as in aten."""
    check_loss_input("huber", self, reduction)
    if target.dtype.kind != "f":
        _require_float("huber", _dt.from_numpy_dtype(target.dtype))
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    z = np.abs(self - target).astype(self.dtype, copy=False)
    return reduce_np(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(z.dtype, copy=False),
                     reduction)


@huber_loss.meta_rule
def _(self, target, reduction, delta=1.0):
    _pointwise_meta("huber")(self, target, reduction)
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape), op="huber")
    return TensorMeta(shape if reduction == NONE else (), self.dtype, self.device)
huber_loss.sample_inputs(_regression_samples({"delta": 1.3}))


@huber_loss.grad
def _(grad, self, target, reduction, delta):
    z = self - target
    d = api.where(z.abs() < delta, z, z.sign() * delta)
    g = _scaled(grad, reduction, self, target) * d
    return g, -g


# ---------------------------------------------------------------------------------------------
# binary_cross_entropy, binary_cross_entropy_with_logits
# ---------------------------------------------------------------------------------------------
def _check_same_dtype(name: str, self, *others) -> None:
    for t in others:
        if t is not None and t.dtype != self.dtype:
            a, b = (_dt.from_numpy_dtype(x.dtype) if isinstance(x, np.ndarray) else x.dtype for x in (t, self))
            raise RuntimeError(f"Found dtype {_dt.title(a)} but expected {_dt.title(b)}")


@op("binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor", kind=NN, autocast={"cpu": "fp32"},
    method=False, namespace="ops.aten", nondiff_args=("weight",), refuse_grad_args=("weight",))
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    """``-w (t log(x) + (1 - t) log(1 - x))`` with each log clamped to >= -100, as PyTorch does."""
    check_loss_input("binary_cross_entropy", self, reduction)
    _check_same_dtype("binary_cross_entropy", self, target, weight)
    with np.errstate(invalid="ignore"):
        if np.any(~((self >= 0) & (self <= 1))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        if np.any(~((target >= 0) & (target <= 1))):
            raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(self), -100)
        log_1mx = np.maximum(np.log1p(-self), -100)
    loss = (target - 1) * log_1mx - target * log_x
    if weight is not None:
        loss = loss * weight
    return reduce_np(loss.astype(self.dtype, copy=False), reduction)


def _bce_meta(self, target, weight=None, reduction=MEAN):
    check_reduction(reduction)
    _require_float("binary_cross_entropy", self.dtype)
    _check_same_dtype("binary_cross_entropy", self, target, weight)
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape),
                             *(() if weight is None else (tuple(weight.shape),)), op="binary_cross_entropy")
    return TensorMeta(shape if reduction == NONE else (), self.dtype, self.device)


binary_cross_entropy.meta_rule(_bce_meta)




@binary_cross_entropy.grad
def _(grad, self, target, weight, reduction):
    g = _scaled(grad, reduction, self, target)
    if weight is not None:
        g = g * weight
    gx = g * (self - target) / (self * (1 - self)).clamp_min(1e-12)
    gt = g * (self.log().clamp_min(-100) * -1 + (-self).log1p().clamp_min(-100))
    return gx, gt


@binary_cross_entropy.sample_inputs
def _(rng):
    for r in (NONE, MEAN, SUM):
        yield (rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))), {"reduction": r}
    yield (rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4)), rng.uniform(0.5, 2, (3, 4)), SUM), {}
    yield (rng.uniform(0.1, 0.9, (4, 3)).T, rng.uniform(0, 1, (3, 4)), rng.uniform(0.5, 2, (4,))), {}
    yield (np.array(0.3), np.array(0.8)), {}
    yield (rng.uniform(0.1, 0.9, (0, 2)), rng.uniform(0, 1, (0, 2))), {"reduction": SUM}


@op("binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
    "int reduction=0) -> Tensor", kind=NN, autocast="fp32", method=False,
    nondiff_args=("weight", "pos_weight"), refuse_grad_args=("weight", "pos_weight"))
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=NONE):
    """Binary cross entropy on logits: ``(1 - t) x - l log_sigmoid(x)``, ``l = 1 + (pos_weight - 1) t``, stable.

    The result has ``target``'s dtype, as aten's in-place arithmetic on ``1 - target`` gives.
    """
    for a in (self, target, weight, pos_weight):
        if a is not None:
            check_loss_input("binary_cross_entropy_with_logits", a, reduction)
    out_dtype = target.dtype
    log_sig = np.minimum(self, 0) - np.log1p(np.exp(-np.abs(self)))
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * self - log_sig
    if weight is not None:
        loss = loss * weight
    return reduce_np(loss.astype(out_dtype, copy=False), reduction)


@binary_cross_entropy_with_logits.meta_rule
def _(self, target, weight=None, pos_weight=None, reduction=MEAN):
    check_reduction(reduction)
    ts = [t for t in (self, target, weight, pos_weight) if t is not None]
    for t in ts:
        _require_float("binary_cross_entropy_with_logits", t.dtype)
    dt = target.dtype
    shape = broadcast_shapes(*(tuple(t.shape) for t in ts), op="binary_cross_entropy_with_logits")
    return TensorMeta(shape if reduction == NONE else (), dt, self.device)




@binary_cross_entropy_with_logits.grad
def _(grad, self, target, weight, pos_weight, reduction):
    g = _scaled(grad, reduction, self, target)
    if weight is not None:
        g = g * weight
    if pos_weight is None:
        gx = g * (self.sigmoid() - target)
        gt = g * -self
    else:
        lw = (pos_weight - 1) * target + 1
        gx = g * ((1 - target) - lw * (-self).sigmoid())
        gt = g * (api.softplus(-self) * (pos_weight - 1) - self)
    return gx, gt


@binary_cross_entropy_with_logits.sample_inputs
def _(rng):
    for r in (NONE, MEAN, SUM):
        yield (rng.uniform(-3, 3, (3, 4)), rng.uniform(0, 1, (3, 4))), {"reduction": r}
    yield (rng.uniform(-3, 3, (3, 4)), rng.uniform(0, 1, (3, 4)), rng.uniform(0.5, 2, (4,)),
           rng.uniform(0.5, 3, (4,))), {}
    yield (rng.uniform(-3, 3, (4, 3)).T, rng.uniform(0, 1, (3, 4)), None, rng.uniform(0.5, 3, (4,)), NONE), {}
    yield (np.array([-200.0, 200.0, 0.5]), np.array([1.0, 0.0, 0.3])), {"reduction": SUM}  # stable at extremes
    yield (np.array(0.3), np.array(1.0)), {}
    yield (rng.uniform(-3, 3, (0, 2)), rng.uniform(0, 1, (0, 2))), {"reduction": SUM}


# ---------------------------------------------------------------------------------------------
# kl_div
# ---------------------------------------------------------------------------------------------
@op("kl_div(Tensor self, Tensor target, int reduction=0, *, bool log_target=False) -> Tensor", kind=NN, autocast="fp32",
    method=False, promote_args=("self", "target"),
    grad_fn=by_reduction(lambda bound, outputs: "MulBackward0" if bound[3] else "SubBackward0", 2))
def kl_div(self, target, reduction=NONE, log_target=False):
    """Pointwise KL divergence ``t (log t - x)`` (``exp(t) (t - x)`` for log targets); ``x`` holds log-probabilities."""
    check_loss_input("kl_div", self, reduction)
    with np.errstate(divide="ignore", invalid="ignore"):
        if log_target:
            loss = np.exp(target) * (target - self)
        else:
            loss = np.where(target == 0, 0, target * np.log(np.where(target == 0, 1, target))) - target * self
    return reduce_np(loss.astype(self.dtype, copy=False), reduction)


kl_div.meta_rule(_pointwise_meta("kl_div"))


@kl_div.grad
def _(grad, self, target, reduction, log_target):
    g = _scaled(grad, reduction, self, target)
    if log_target:
        e = target.exp()
        return -g * e, g * e * (target - self + 1)
    return -g * target, g * (target.log() + 1 - self)


@kl_div.sample_inputs
def _(rng):
    for r in (NONE, MEAN, SUM):
        yield (np.log(rng.uniform(0.1, 1, (3, 4))), rng.uniform(0.1, 1, (3, 4)), r), {}
    yield (np.log(rng.uniform(0.1, 1, (4, 3))).T, rng.uniform(-2, 0, (3, 4)), MEAN), {"log_target": True}
    yield (np.log(rng.uniform(0.1, 1, (2, 3))), rng.uniform(0.1, 1, (3,))), {"reduction": NONE}
    yield (np.array(-0.5), np.array(0.4), SUM), {}
    yield (rng.uniform(-2, 0, (0, 3)), rng.uniform(0, 1, (0, 3)), SUM), {}
