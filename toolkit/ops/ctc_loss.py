"""Connectionist temporal classification: ``torch.ctc_loss``, ``torch._ctc_loss`` and ``_ctc_loss_backward``.

``_ctc_loss`` runs ATen's forward recursion (numba, ``_ctc_numba.py``) and
returns the negative log likelihood per sample with the ``log_alpha`` table
backward needs; ``_ctc_loss_backward`` runs the backward recursion. As in
PyTorch, the gradient it gives ``log_probs`` is ``exp(lp) - exp(log(alpha beta)
+ nll - lp)``: the gradient through the ``log_softmax`` that is assumed to
have made ``log_probs``, which is why numerical gradient checks on raw inputs do
not apply and the tests compare with PyTorch instead; and, as in PyTorch, it
has no derivative of its own (no double backward through CTC).
``ctc_loss`` composes ``_ctc_loss`` with ``zero_infinity`` and the reduction
('mean' divides each loss by its target length, then averages; ``torch.ctc_loss``
defaults ``reduction`` to 0, 'none', as PyTorch's Python binding of it does), for (T, N, C)
or unbatched (T, C) ``log_probs`` and padded (N, S) or concatenated targets.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .loss import MEAN, NONE, SUM, check_reduction
from .registry import NN, op


def _lengths(values, n: int, name: str) -> np.ndarray:
    arr = np.asarray(list(values) if not np.isscalar(values) else [values], dtype=np.int64).reshape(-1)
    if arr.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


def _check(lp_shape, lp_dtype, targets_shape, targets_dtype, input_lengths, target_lengths, blank):
    """ATen's checks; returns the lengths, each sample's first label in the flat targets, the step between its
    labels (1: targets are made contiguous) and the longest target."""
    if len(lp_shape) != 3:
        raise RuntimeError(f"Expected {len(lp_shape)}-dimensional tensor, but got 3-dimensional tensor for argument "
                           f"#1 'log_probs' (while checking arguments for ctc_loss_cpu)")
    if np.dtype(targets_dtype).kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have one of the following scalar types: "
                           f"Int, Long; but got {targets_dtype} instead (while checking arguments for ctc_loss_cpu)")
    t_max, n, c = lp_shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, n, "input_lengths")
    tl = _lengths(target_lengths, n, "target_lengths")
    if len(targets_shape) == 1:
        stride = 1
        offsets = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
    else:
        if len(targets_shape) != 2 or targets_shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size at least {n} at dimension 0, but got size "
                               f"{targets_shape[0] if targets_shape else 0} for argument #2 'targets' (while "
                               f"checking arguments for ctc_loss_cpu)")
        stride = 1
        offsets = np.arange(n, dtype=np.int64) * targets_shape[1]
        for b in range(n):
            if tl[b] > targets_shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {tl[b]} at dimension 1, but got size "
                                   f"{targets_shape[1]} for argument #2 'targets' (while checking arguments for "
                                   "ctc_loss_cpu)")
    for b in range(n):
        if il[b] > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {il[b]} (while "
                               f"checking arguments for ctc_loss_cpu)")
        if il[b] < 0 or tl[b] < 0:
            raise RuntimeError("ctc_loss: input_lengths and target_lengths must be non-negative")
    return il, tl, offsets, stride, int(tl.max()) if n else 0


# ----------------------------------------------------------------------------- _ctc_loss
@op("_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
    "bool zero_infinity=False) -> (Tensor, Tensor)", kind=NN, method=False, nondiff_args=("targets",))
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """The CTC negative log likelihood of each sample's target, and the ``log_alpha`` forward variables."""
    from ._ctc_numba import ctc_alpha  # optional: numba, never loaded by import toolkit

    if log_probs.dtype.kind != "f":
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{_dt.title(_dt.from_numpy_dtype(log_probs.dtype))}'")
    il, tl, offsets, stride, max_t = _check(log_probs.shape, log_probs.dtype, targets.shape, targets.dtype,
                                            input_lengths, target_lengths, blank)
    flat = np.ascontiguousarray(targets, dtype=np.int64).reshape(-1)
    nll, la = ctc_alpha(np.ascontiguousarray(log_probs, dtype=np.float64), flat, offsets, stride, il, tl, blank,
                        max_t)
    return nll.astype(log_probs.dtype), la.astype(log_probs.dtype)


@_ctc_loss.meta_rule
def _(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    _, _, _, _, max_t = _check(tuple(log_probs.shape), log_probs.dtype.np, tuple(targets.shape),
                               targets.dtype.np, input_lengths, target_lengths, blank)
    t_max, n, _ = log_probs.shape
    return (TensorMeta((n,), log_probs.dtype, log_probs.device),
            TensorMeta((n, t_max, 2 * max_t + 1), log_probs.dtype, log_probs.device))


@_ctc_loss.grad
def _(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result):
    g = grad[0] if isinstance(grad, (tuple, list)) else grad
    return api._ctc_loss_backward(g, log_probs, targets, input_lengths, target_lengths, result[0], result[1], blank,
                                  zero_infinity), None


_TESTED_ELSEWHERE = ("The gradient is PyTorch's log_softmax-folded one, which numerical checks on raw inputs cannot "
                     "confirm: tests/nn/test_functional_losses_more.py compares forward and backward with PyTorch instead.")


_ctc_loss.tested_elsewhere(_TESTED_ELSEWHERE)


@op("_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor", kind=NN,
    method=False, differentiable=False)
def _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha, blank,
                       zero_infinity=False):
    """The gradient of :func:`_ctc_loss` for ``log_probs``, from the backward (``log_beta``) recursion."""
    from ._ctc_numba import ctc_grad  # optional: numba, never loaded by import toolkit

    il, tl, offsets, stride, _ = _check(log_probs.shape, log_probs.dtype, targets.shape, targets.dtype,
                                        input_lengths, target_lengths, blank)
    flat = np.ascontiguousarray(targets, dtype=np.int64).reshape(-1)
    g = ctc_grad(np.ascontiguousarray(grad, dtype=np.float64).reshape(-1),
                 np.ascontiguousarray(log_probs, dtype=np.float64), flat, offsets, stride, il, tl,
                 np.ascontiguousarray(neg_log_likelihood, dtype=np.float64),
                 np.ascontiguousarray(log_alpha, dtype=np.float64), blank, bool(zero_infinity))
    return g.astype(log_probs.dtype)


_ctc_loss_backward.meta_rule(lambda grad, log_probs, *rest: TensorMeta(tuple(log_probs.shape), log_probs.dtype,
                                                                       log_probs.device))
_ctc_loss_backward.tested_elsewhere(_TESTED_ELSEWHERE)


# ----------------------------------------------------------------------------- ctc_loss
def _ctc_loss_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    check_reduction(reduction)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    res = _ctc_loss(lp, tg.to(_dt.int64), input_lengths, target_lengths, blank, zero_infinity)[0]
    if zero_infinity:
        res = api.where(res == float("inf"), api.zeros((), dtype=res.dtype, device=res.device), res)
    if reduction == MEAN:
        lengths = res.new_tensor([float(v) for v in target_lengths]).clamp_min(1)
        return (res / lengths).mean()
    if reduction == SUM:
        return res.sum()
    return res if batched else res.squeeze(0)


def _as_list(lengths, name: str) -> list:
    if lengths.dtype.is_floating_point or lengths.dtype == _dt.bool:
        raise RuntimeError(f"{name} must be integral")
    return [int(v) for v in lengths.reshape(-1).tolist()]


@op("ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
    "int reduction=0, bool zero_infinity=False) -> Tensor", kind=NN, autocast="fp32", method=False, composite=True,
    differentiable=False, nondiff_args=("targets",))
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=NONE, zero_infinity=False):
    """The CTC loss of (T, N, C) (or unbatched (T, C)) log-probabilities against targets; ``zero_infinity`` zeroes
    impossible alignments' infinite losses (and their gradients)."""
    return _ctc_loss_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


@op("ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, "
    "int reduction=0, bool zero_infinity=False) -> Tensor", kind=NN, autocast="fp32", method=False, composite=True,
    differentiable=False, nondiff_args=("targets", "input_lengths", "target_lengths"))
def ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=NONE, zero_infinity=False):
    """:func:`ctc_loss` with the lengths as integer tensors."""
    return _ctc_loss_impl(log_probs, targets, _as_list(input_lengths, "input_lengths"),
                          _as_list(target_lengths, "target_lengths"), blank, reduction, zero_infinity)


def _ctc_meta(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=NONE, zero_infinity=False):
    check_reduction(reduction)
    n = log_probs.shape[1] if len(log_probs.shape) == 3 else None
    shape = (n,) if reduction == NONE and n is not None else ()
    return TensorMeta(shape, log_probs.dtype, log_probs.device)


def _ctc_samples(tensor_lengths: bool):
    def samples(rng):
        t, n, c = 6, 2, 4
        lp = rng.uniform(-3, 0, (t, n, c))
        lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))

        def lengths(v):
            return np.array(v, np.int64) if tensor_lengths else list(v)

        for r in (NONE, MEAN, SUM):
            yield (lp, np.array([[1, 2, 2], [3, 1, 0]]), lengths([6, 5]), lengths([3, 2]), 0, r), {}
        yield (lp, np.array([1, 2, 3, 3]), lengths([6, 4]), lengths([2, 2])), {"blank": 0}

    return samples


for _o, _tensor in ((ctc_loss, False), (ctc_loss_tensor, True)):
    _o.meta_rule(_ctc_meta)
    _o.sample_inputs(_ctc_samples(_tensor))
