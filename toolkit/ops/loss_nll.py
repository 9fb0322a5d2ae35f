"""``nll_loss_nd``: negative log likelihood over class indices, for (C,), (N, C) and (N, C, d1, ...) inputs.

The class scores are picked with ``np.take_along_axis`` (no loop over the batch);
'mean' divides by the summed weights of the non-ignored targets, as aten does,
so a batch whose targets are all ignored gives nan. ``cross_entropy`` is
composed from this and ``log_softmax`` in ``toolkit.nn.functional``.

The gradient of (C,) and (N, C) inputs is the op ``nll_loss_backward`` (PyTorch's name and schema): a
scatter of one value per target into zeros, so a cross_entropy over many classes never builds an (N, C)
mask. Both directions touch O(N) elements; for (N, C) float scores without class weights (the common case)
each is one compiled pass (``_nll_numba``), where numpy's gathers and checks took ten calls.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from . import api
from .elementwise import compiled_float
from .grad_fn_rules import by_input_dim, by_reduction
from .loss import MEAN, NONE, SUM, check_reduction
from .registry import NN, op


def _fmt(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _check(self, target, weight, reduction) -> int:
    """PyTorch's argument checks (on metadata only), in its order: shapes before dtypes. Returns the class dim.

    Like aten, inputs of 3 or more dims go through the 2-d (spatial) path, with its messages.
    """
    check_reduction(reduction)
    nd = len(self.shape)
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    tshape = tuple(target.shape)
    if nd != 1 and (tshape[0] if tshape else 0) != self.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({self.shape[0]}) to match target batch_size ({tshape[0] if tshape else 0}).")
    if nd <= 2:
        if len(tshape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 2 and not tshape:  # an empty batch passed the size check above; aten then reads target.size(0)
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        _check_target_dtype(target)
        if nd == 1 and len(tshape) == 1 and tshape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {tshape[0]}")
        n_classes = self.shape[-1]
        if weight is not None and (len(weight.shape) != 1 or weight.shape[0] != n_classes):
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no classes but got weight "
                f"tensor of shape: {_fmt(tuple(weight.shape))}")
        frame = "nll_loss_out_frame"
    else:
        if nd == 4:
            if len(tshape) != 3:
                raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                                   f"dimension: {len(tshape)}")
        elif tshape[1:] != tuple(self.shape[2:]):
            want = (self.shape[0],) + tuple(self.shape[2:])
            raise RuntimeError(f"Expected target size {_fmt(want)}, got {_fmt(tshape)}")
        _check_target_dtype(target)
        if weight is not None and math.prod(weight.shape) != self.shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if nd == 4 and tshape != (self.shape[0],) + tuple(self.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {_fmt(self.shape)} , target: {_fmt(tshape)}")
        frame = "nll_loss2d_forward_out_frame"
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"{frame}\" not implemented for '{_dt.title(self.dtype)}'")
    if weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(f"expected scalar type {_dt.title(self.dtype)} but found {_dt.title(weight.dtype)}")
    return 0 if nd == 1 else 1


def _check_target_dtype(target) -> None:
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dt.title(target.dtype)}")


def _targets(target: np.ndarray, ignore_index: int, n_classes: int):
    """``(ignored, safe)``: where targets equal ``ignore_index``, and the targets with those set to class 0;
    PyTorch's IndexError for a target out of range."""
    t = target.astype(np.int64, copy=False)
    ignored = t == ignore_index
    safe = np.where(ignored, 0, t) if ignored.any() else t
    if safe.size and (safe.min() < 0 or safe.max() >= n_classes):
        bad = (safe < 0) | (safe >= n_classes)
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    return ignored, safe


def _dtype_of(a):
    return _dt.from_numpy_dtype(a.dtype) if isinstance(a, np.ndarray) else a.dtype


class _Meta:
    """Numpy arrays seen through the metadata interface ``_check`` reads."""

    __slots__ = ("shape", "dtype")

    def __init__(self, a):
        self.shape = a.shape
        self.dtype = _dtype_of(a)


@op("nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) "
    "-> Tensor", kind=NN, autocast="fp32", method=False, namespace="ops.aten", nondiff_args=("target", "weight"),
    refuse_grad_args=("weight",),
    grad_fn=by_input_dim({1: "NllLossBackward0", 2: "NllLossBackward0"}, "NllLoss2DBackward0"))
def nll_loss_nd(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    """``-weight[t] * self[..., t, ...]`` per target, ignoring ``ignore_index``; 'mean' divides by the weight sum."""
    cdim = _check(_Meta(self), _Meta(target), None if weight is None else _Meta(weight), reduction)
    if weight is None and self.ndim == 2 and target.ndim == 1 and reduction != NONE and compiled_float(self.dtype):
        from ._nll_numba import picked_sum  # optional: numba, never loaded by import toolkit

        total, kept, bad, t = picked_sum(self, target, ignore_index)
        if bad:
            raise IndexError(f"Target {int(t)} is out of bounds.")
        with ignore_fp_errors():  # a float32 overflow gives inf, as PyTorch's float32 sum does
            return np.asarray(total if reduction == SUM else total / kept if kept else np.nan, dtype=self.dtype)
    ignored, safe = _targets(target, ignore_index, self.shape[cdim])
    if weight is None and self.ndim == 2:  # a batch of class scores, every class weighing 1: the common case,
        loss = -self[np.arange(self.shape[0]), safe]  # in a few numpy calls instead of a dozen
        if ignored.any():
            loss[ignored] = 0
        weights = None  # the mean divides by the count of rows not ignored
    else:
        picked = np.take_along_axis(self, np.expand_dims(safe, cdim), axis=cdim).squeeze(cdim)
        w = np.ones((), self.dtype) if weight is None else weight.reshape(-1)[safe]
        weights = np.where(ignored, 0, w).astype(self.dtype, copy=False)
        loss = np.where(ignored, 0, -weights * picked).astype(self.dtype, copy=False)
    if reduction == NONE:
        return loss
    total = np.sum(loss, dtype=np.float64 if self.dtype == np.float64 else np.float32)
    if reduction == SUM:
        return np.asarray(total, dtype=self.dtype)
    count = self.shape[0] - np.count_nonzero(ignored) if weights is None else np.sum(weights, dtype=total.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / total.dtype.type(count), dtype=self.dtype)


@nll_loss_nd.meta_rule
def _(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    _check(self, target, weight, reduction)
    return TensorMeta(tuple(target.shape) if reduction == NONE else (), self.dtype, self.device)


def _one_hot(self, target, ignore_index, cdim):
    """Bool mask (self's shape) of each target's class; ignored targets select nothing."""
    n = self.shape[cdim]
    shape = [1] * self.ndim
    shape[cdim] = n
    classes = api.arange(n, device=self.device).view(shape)
    t = target.to(_dt.int64) if target.dtype != _dt.int64 else target
    return (classes == t.unsqueeze(cdim)) & (t != ignore_index).unsqueeze(cdim)




@nll_loss_nd.grad
def _(grad, self, target, weight, reduction, ignore_index):
    if self.ndim <= 2 and self.device.type == "cpu":  # other devices: the mask formula below, from their ops
        return nll_loss_backward(grad, self, target, weight, reduction, ignore_index,
                                 _total_weight(self, target, weight, ignore_index, reduction))
    cdim = 0 if self.ndim == 1 else 1
    mask = _one_hot(self, target, ignore_index, cdim)
    if weight is None:
        w_t = (target != ignore_index).to(self.dtype)
    else:
        shape = [1] * self.ndim
        shape[cdim] = weight.numel()
        w_t = api.where(mask, weight.reshape(shape), 0).sum(cdim)
    g = grad
    if reduction == MEAN:
        g = grad / w_t.sum()
    return api.where(mask, (-g * w_t).unsqueeze(cdim), 0)


def _total_weight(self, target, weight, ignore_index: int, reduction: int):
    """The sum of the class weights of the targets not ignored: what 'mean' divides by (1 otherwise, unread)."""
    if reduction != MEAN:
        return api.ones((), dtype=self.dtype, device=self.device)
    if weight is None and target.device.type == "cpu":  # a count: one call, where two ops took 6x as long
        kept = int(np.count_nonzero(target._data != ignore_index))
        return api.full((), kept, dtype=self.dtype, device=self.device)
    kept = target != ignore_index
    if weight is None:
        return kept.sum(dtype=self.dtype)
    safe = api.where(kept, target, 0).reshape(-1).to(_dt.int64)
    return api.where(kept.reshape(-1), weight.index_select(0, safe), 0).sum()


@op("nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index, Tensor total_weight) -> Tensor", kind=NN, method=False, namespace="ops.aten",
    nondiff_args=("self", "target", "weight", "total_weight"))
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """``nll_loss``'s gradient for (C,) or (N, C) inputs: ``-weight[t] * grad_output`` (over ``total_weight``
    for 'mean') at each target's class, zero elsewhere; a scatter of N values into zeros, no (N, C) mask."""
    _check_backward(grad_output, self, target, reduction, total_weight)
    cdim = 0 if self.ndim == 1 else 1
    if weight is None and cdim and target.ndim == 1 and reduction != NONE and compiled_float(self.dtype):
        from ._nll_numba import scatter_value  # optional: numba, never loaded by import toolkit

        with ignore_fp_errors():
            g = grad_output.reshape(()).astype(self.dtype)
            value = -(g / total_weight.reshape(()).astype(self.dtype)) if reduction == MEAN else -g
        out = np.zeros(self.shape, self.dtype)
        bad, t = scatter_value(out, target, ignore_index, value)
        if bad:
            raise IndexError(f"Target {int(t)} is out of bounds.")
        return out
    ignored, safe = _targets(target, ignore_index, self.shape[cdim])
    w = np.ones((), self.dtype) if weight is None else weight.reshape(-1)[safe]
    g = grad_output.reshape(()) if reduction != NONE else grad_output
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if reduction == MEAN:
            g = g / total_weight.reshape(())
        vals = np.where(ignored, 0, -w * g).astype(self.dtype, copy=False)
    out = np.zeros(self.shape, self.dtype)
    if cdim:
        out[np.arange(out.shape[0]), safe] = vals  # one target per row: no index repeats
    else:
        out[safe] = vals
    return out


def _check_backward(grad_output, self, target, reduction, total_weight) -> None:
    """PyTorch's checks of ``nll_loss_backward`` (metadata only), in its order."""
    nd = len(self.shape)
    if nd not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    n = math.prod(target.shape)
    if nd == 2 and self.shape[0] != n:
        raise RuntimeError(f"size mismatch (got input: {_fmt(self.shape)}, target: {_fmt(target.shape)})")
    if math.prod(total_weight.shape) != 1:
        raise RuntimeError(f"expected total_weight to be a  single element tensor, got: {_fmt(total_weight.shape)} "
                           f"({math.prod(total_weight.shape)} elements)")
    if reduction == NONE and nd == 2:
        if len(grad_output.shape) != 1 or grad_output.shape[0] != n:
            raise RuntimeError(
                f"Expected a tensor of dimension 1 and tensor.size[0] == {n} but got: dimension "
                f"{len(grad_output.shape)} and tensor.size[0] = {grad_output.shape[0] if grad_output.shape else 0}")
    elif math.prod(grad_output.shape) != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {_fmt(grad_output.shape)}")


@nll_loss_backward.meta_rule
def _(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_backward(grad_output, self, target, reduction, total_weight)
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


@nll_loss_backward.grad
def _(grad, target, weight, reduction, ignore_index):
    return nll_loss_nd(grad, target, weight, reduction, ignore_index)


@nll_loss_backward.sample_inputs
def _(rng):
    t = np.array([1, -100, 2, 3])
    w = rng.uniform(0.5, 2, (4,))
    for r in (NONE, MEAN, SUM):
        g = rng.uniform(-2, 2, (4,)) if r == NONE else rng.uniform(-2, 2, ())
        yield (g, rng.uniform(-3, 0, (4, 4)), t, None, r, -100, np.array(3.0)), {}
        yield (g, rng.uniform(-3, 0, (4, 4)), t, w, r, -100, np.array(w[[1, 2, 3]].sum())), {}
    yield (rng.uniform(-2, 2, ()), rng.uniform(-3, 0, (4,)), np.array(2), None, MEAN, -100, np.array(1.0)), {}
    yield (rng.uniform(-2, 2, ()), rng.uniform(-3, 0, (4, 3)).T, np.array([0, 2, 3]), None, MEAN, 2,
           np.array(2.0)), {}


@nll_loss_nd.sample_inputs
def _(rng):
    t = rng.integers(0, 4, (3,))
    for r in (NONE, MEAN, SUM):
        yield (rng.uniform(-3, 0, (3, 4)), t), {"reduction": r}
        yield (rng.uniform(-3, 0, (3, 4)), t, rng.uniform(0.5, 2, (4,)), r), {}
    yield (rng.uniform(-3, 0, (3, 4)), np.array([1, -100, 2]), rng.uniform(0.5, 2, (4,))), {}
    yield (rng.uniform(-3, 0, (3, 4)), np.array([1, 3, 2])), {"ignore_index": 3}
    yield (rng.uniform(-3, 0, (4, 3)).T, t), {}
    yield (rng.uniform(-3, 0, (4,)), np.array(2)), {}
    yield (rng.uniform(-3, 0, (4,)), np.array(1), rng.uniform(0.5, 2, (4,)), NONE), {}
    yield (rng.uniform(-3, 0, (2, 3, 2, 2)), rng.integers(0, 3, (2, 2, 2)), rng.uniform(0.5, 2, (3,))), {}
    yield (rng.uniform(-3, 0, (2, 3, 4)), rng.integers(0, 3, (2, 4))), {"reduction": NONE}
    yield (rng.uniform(-3, 0, (0, 3)), np.zeros(0, np.int64)), {"reduction": SUM}


# ---------------------------------------------------------------------------------------------
# poisson_nll_loss
# ---------------------------------------------------------------------------------------------
@op("poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor",
    kind=NN, autocast="fp32", method=False,
    grad_fn=by_reduction(lambda bound, outputs: "AddBackward0" if bound[3] else "SubBackward0", 5))
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """Poisson negative log likelihood of ``target`` given the rate ``input`` (its log when ``log_input``);
    ``full`` adds Stirling's approximation of ``log(target!)`` where target > 1."""
    check_reduction(reduction)
    dtype = np.result_type(input, target)
    if dtype.kind != "f":
        dtype = np.dtype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        loss = np.exp(input) - target * input if log_input else input - target * np.log(input + eps)
        if full:
            stirling = target * np.log(target) - target + 0.5 * np.log(2 * math.pi * target)
            loss = loss + np.where(target <= 1, 0, stirling)
    loss = np.asarray(loss).astype(dtype, copy=False)
    if reduction == MEAN:
        return np.asarray(np.mean(loss) if loss.size else np.nan, dtype=dtype)
    return np.asarray(np.sum(loss), dtype=dtype) if reduction == SUM else loss


@poisson_nll_loss.meta_rule
def _(input, target, log_input, full, eps, reduction):
    check_reduction(reduction)
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    dtype = _dt.result_type_from([t.dtype for t in (input, target) if len(t.shape)],
                                 [t.dtype for t in (input, target) if not len(t.shape)], [])
    if not dtype.is_floating_point:
        dtype = _dt.get_default_dtype()
    return TensorMeta(shape if reduction == NONE else (), dtype, input.device)


@poisson_nll_loss.grad
def _(grad, input, target, log_input, full, eps, reduction, needs_input_grad):
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    g = grad
    if reduction != NONE:
        n = math.prod(shape)
        g = (grad / n if reduction == MEAN and n else grad).expand(shape)
    gi = gt = None
    if needs_input_grad[0]:
        d = input.exp() - target if log_input else 1 - target / (input + eps)
        gi = (g * d).sum_to_size(tuple(input.shape))
    if needs_input_grad[1]:
        d = -input if log_input else -(input + eps).log()
        if full:
            d = d + (target.log() + 0.5 / target).masked_fill(target <= 1, 0)
        gt = (g * d).sum_to_size(tuple(target.shape))
    return gi, gt


@poisson_nll_loss.sample_inputs
def _(rng):
    for r in (NONE, MEAN, SUM):
        yield (rng.uniform(-1, 1, (3, 4)), rng.uniform(0, 3, (3, 4)), True, False, 1e-8, r), {}
    yield (rng.uniform(0.2, 2, (3, 4)), rng.uniform(0, 3, (3, 4)), False, True, 1e-8, MEAN), {}
    yield (rng.uniform(-1, 1, (5,)), rng.uniform(1.5, 3, (5,)), True, True, 1e-8, SUM), {}
