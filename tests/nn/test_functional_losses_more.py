"""The functional losses beyond the basic ones, against PyTorch: margin, ranking, multi-class, Gaussian and CTC losses,
``torch.*`` loss functions, ``linear_cross_entropy``, their gradients and their errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _pair(x, grad: bool = True):
    return toolkit.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def _compare(fn_tk, fn_th, floats, others=(), accum: int = 1):
    """Forward and input gradients of ``fn(*floats, *others)`` in both libraries."""
    tks = [toolkit.tensor(x, requires_grad=True) for x in floats]
    ths = [torch.tensor(x, requires_grad=True) for x in floats]
    o_tk = [toolkit.tensor(x) if isinstance(x, np.ndarray) else x for x in others]
    o_th = [torch.tensor(x) if isinstance(x, np.ndarray) else x for x in others]
    out, expected = fn_tk(*tks, *o_tk), fn_th(*ths, *o_th)
    assert_close(out, expected.detach(), accum=accum)
    out.sum().backward()
    expected.sum().backward()
    for a, e in zip(tks, ths):
        assert_close(a.grad, e.grad, accum=accum)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_and_embedding_losses_match_torch(rng, reduction):
    x1, x2 = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    sign = rng.choice([-1.0, 1.0], 5)
    _compare(lambda a, b, t: F.cosine_embedding_loss(a, b, t, 0.1, reduction=reduction),
             lambda a, b, t: TF.cosine_embedding_loss(a, b, t, 0.1, reduction=reduction), [x1, x2], [sign])
    _compare(lambda a, t: F.hinge_embedding_loss(a, t, 0.5, reduction=reduction),
             lambda a, t: TF.hinge_embedding_loss(a, t, 0.5, reduction=reduction), [x1], [np.sign(x2)])
    _compare(lambda a, b, t: F.margin_ranking_loss(a, b, t, 0.2, reduction=reduction),
             lambda a, b, t: TF.margin_ranking_loss(a, b, t, 0.2, reduction=reduction), [x1[:, 0], x2[:, 0]], [sign])
    x3 = rng.standard_normal((5, 4))
    for swap in (False, True):
        _compare(lambda a, p, n, swap=swap: F.triplet_margin_loss(a, p, n, 0.7, 1.5, swap=swap, reduction=reduction),
                 lambda a, p, n, swap=swap: TF.triplet_margin_loss(a, p, n, 0.7, 1.5, swap=swap, reduction=reduction),
                 [x1, x2, x3])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multi_class_margin_losses_match_torch(rng, reduction):
    x = rng.standard_normal((4, 5))
    y = np.array([0, 4, 2, 2])
    w = rng.uniform(0.5, 2, 5)
    for p in (1, 2):
        _compare(lambda a, t, ww, p=p: F.multi_margin_loss(a, t, p, 0.8, ww, reduction=reduction),
                 lambda a, t, ww, p=p: TF.multi_margin_loss(a, t, p, 0.8, ww, reduction=reduction), [x], [y, w])
    targets = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 0, 4], [-1, 1, 2, 0, 0], [4, -1, 0, 0, 0]])
    _compare(lambda a, t: F.multilabel_margin_loss(a, t, reduction=reduction),
             lambda a, t: TF.multilabel_margin_loss(a, t, reduction=reduction), [x], [targets])


def test_margin_losses_refuse_bad_arguments_like_torch(rng):
    x = toolkit.tensor(rng.standard_normal((3, 4)))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, toolkit.tensor([0, 1, 2]), p=3)
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, toolkit.tensor([0, 1, 2]), weight=toolkit.ones(2, 2))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, toolkit.tensor([0, 1, 7]))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, toolkit.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="same dimension"):
        F.margin_ranking_loss(x, x, toolkit.ones(3))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(x, x, x, margin=0.0)
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        F.cosine_embedding_loss(x[0], x[1], toolkit.ones(3))


def test_torch_loss_functions_default_to_no_reduction_as_torch_does(rng):
    a, b = rng.uniform(0.1, 1, (3, 4)), rng.uniform(0.1, 1, (3, 4))
    ta, tb = toolkit.tensor(a), toolkit.tensor(b)
    pa, pb = torch.tensor(a), torch.tensor(b)
    sign = np.sign(rng.standard_normal((3, 4)))
    for name, args in (("kl_div", (a, b)), ("binary_cross_entropy_with_logits", (a, b)),
                       ("margin_ranking_loss", (a, b, sign)), ("hinge_embedding_loss", (a, sign)),
                       ("cosine_embedding_loss", (a, b, sign[:, 0])), ("triplet_margin_loss", (a, b, a[::-1].copy())),
                       ("poisson_nll_loss", (a, b, True, False, 1e-8, 1))):
        out = getattr(toolkit, name)(*[toolkit.tensor(x) if isinstance(x, np.ndarray) else x for x in args])
        expected = getattr(torch, name)(*[torch.tensor(x) if isinstance(x, np.ndarray) else x for x in args])
        assert_close(out, expected, msg=name)
    assert_close(toolkit.kl_div(ta, tb, 2, log_target=True), torch.kl_div(pa, pb, 2, log_target=True))


@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss_matches_torch_with_target_gradient(rng, full):
    x, t = rng.uniform(0.2, 2, (3, 4)), rng.uniform(0, 3, (3, 4))
    for log_input in (True, False):
        _compare(lambda a, b, log_input=log_input: F.poisson_nll_loss(a, b, log_input, full),
                 lambda a, b, log_input=log_input: TF.poisson_nll_loss(a, b, log_input, full), [x, t])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gaussian_nll_loss_matches_torch(rng, reduction):
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    for var in (rng.uniform(0.1, 2, (4, 3)), rng.uniform(0.1, 2, (4,)), rng.uniform(0.1, 2, (4, 1))):
        for full in (False, True):
            _compare(lambda a, b, v, full=full: F.gaussian_nll_loss(a, b, v, full=full, reduction=reduction),
                     lambda a, b, v, full=full: TF.gaussian_nll_loss(a, b, v, full=full, reduction=reduction), [x, t, var])
    assert_close(F.gaussian_nll_loss(toolkit.tensor(x), toolkit.tensor(t), 0.5),
                 TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(t), 0.5))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(toolkit.tensor(x), toolkit.tensor(t), toolkit.ones(2))
    with pytest.raises(ValueError, match="var has negative"):
        F.gaussian_nll_loss(toolkit.tensor(x), toolkit.tensor(t), -toolkit.ones(4, 3))


def test_triplet_margin_with_distance_loss_matches_torch(rng):
    a, p, n = (rng.standard_normal((4, 3)) for _ in range(3))
    _compare(lambda x, y, z: F.triplet_margin_with_distance_loss(x, y, z, swap=True),
             lambda x, y, z: TF.triplet_margin_with_distance_loss(x, y, z, swap=True), [a, p, n])

    def cosine_distance(lib):
        return lambda u, v: 1 - lib.nn.functional.cosine_similarity(u, v)

    _compare(lambda x, y, z: F.triplet_margin_with_distance_loss(x, y, z, distance_function=cosine_distance(toolkit),
                                                                 margin=0.3, reduction="none"),
             lambda x, y, z: TF.triplet_margin_with_distance_loss(x, y, z, distance_function=cosine_distance(torch),
                                                                  margin=0.3, reduction="none"), [a, p, n])


def test_gradgradcheck_of_composed_losses(rng):
    x = toolkit.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = toolkit.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    t = toolkit.tensor(np.sign(rng.standard_normal(3)))
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.cosine_embedding_loss(a, b, t), (x, y))
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.gaussian_nll_loss(a, b, toolkit.ones(3, 4) * 0.7), (x, y))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_linear_cross_entropy_matches_torch(rng, reduction):
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    y = np.array([0, 4, 2, -100])
    _compare(lambda i, ww, bb, t: F.linear_cross_entropy(i, ww, t, linear_bias=bb, reduction=reduction),
             lambda i, ww, bb, t: TF.linear_cross_entropy(i, ww, t, linear_bias=bb, reduction=reduction),
             [x, w, b], [y])
    _compare(lambda i, ww, t: F.linear_cross_entropy(i, ww, t, label_smoothing=0.1, reduction=reduction),
             lambda i, ww, t: TF.linear_cross_entropy(i, ww, t, label_smoothing=0.1, reduction=reduction),
             [x, w], [np.array([0, 4, 2, 1])])
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
        F.linear_cross_entropy(toolkit.tensor(x), toolkit.ones(5, 2), toolkit.tensor(y))


# ----------------------------------------------------------------------------- CTC
def _ctc_case(rng, concatenated: bool):
    t, n, c = 10, 3, 6
    logits = rng.standard_normal((t, n, c))
    lengths_in = [10, 8, 6]
    lengths_t = [4, 2, 3]
    padded = np.array([[1, 2, 2, 5], [3, 1, 0, 0], [4, 4, 4, 0]])
    if concatenated:
        targets = np.concatenate([padded[i, :k] for i, k in enumerate(lengths_t)])
    else:
        targets = padded
    return logits, targets, lengths_in, lengths_t


@pytest.mark.parametrize("concatenated", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("lengths_as_tensors", [False, True])
def test_ctc_loss_forward_and_backward_match_torch(rng, concatenated, reduction, lengths_as_tensors):
    logits, targets, il, tl = _ctc_case(rng, concatenated)
    if lengths_as_tensors:
        il_tk, tl_tk = toolkit.tensor(il), toolkit.tensor(tl)
        il_th, tl_th = torch.tensor(il), torch.tensor(tl)
    else:
        il_tk = il_th = il
        tl_tk = tl_th = tl
    _compare(lambda x, tg: F.ctc_loss(x.log_softmax(2), tg, il_tk, tl_tk, blank=0, reduction=reduction),
             lambda x, tg: TF.ctc_loss(x.log_softmax(2), tg, il_th, tl_th, blank=0, reduction=reduction),
             [logits], [targets])


def test_ctc_loss_blank_unbatched_float32_and_zero_infinity_match_torch(rng):
    logits, targets, il, tl = _ctc_case(rng, False)
    _compare(lambda x, tg: F.ctc_loss(x.log_softmax(2), tg, il, tl, blank=5),
             lambda x, tg: TF.ctc_loss(x.log_softmax(2), tg, il, tl, blank=5), [logits], [np.where(targets == 5, 1, targets)])
    _compare(lambda x, tg: F.ctc_loss(x.log_softmax(1), tg, [10], [4], reduction="none"),
             lambda x, tg: TF.ctc_loss(x.log_softmax(1), tg, [10], [4], reduction="none"),
             [logits[:, 0]], [targets[0]])
    _compare(lambda x, tg: F.ctc_loss(x.log_softmax(2), tg, il, tl),
             lambda x, tg: TF.ctc_loss(x.log_softmax(2), tg, il, tl), [logits.astype(np.float32)], [targets])
    short = [2, 8, 6]  # too short for the first target: an infinite loss
    _compare(lambda x, tg: F.ctc_loss(x.log_softmax(2), tg, short, tl, reduction="none")[1:],
             lambda x, tg: TF.ctc_loss(x.log_softmax(2), tg, short, tl, reduction="none")[1:], [logits], [targets])
    _compare(lambda x, tg: F.ctc_loss(x.log_softmax(2), tg, short, tl, reduction="sum", zero_infinity=True),
             lambda x, tg: TF.ctc_loss(x.log_softmax(2), tg, short, tl, reduction="sum", zero_infinity=True),
             [logits], [targets])
    inf = toolkit.ctc_loss(toolkit.tensor(logits).log_softmax(2), toolkit.tensor(targets), short, tl)
    assert np.isinf(inf.numpy()[0])


def test_ctc_loss_errors_like_torch(rng):
    logits, targets, il, tl = _ctc_case(rng, False)
    lp = toolkit.tensor(logits).log_softmax(2)
    tg = toolkit.tensor(targets)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, il, tl, blank=6)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, il[:2], tl)
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 10"):
        F.ctc_loss(lp, tg, [11, 8, 6], tl)
    with pytest.raises(RuntimeError, match="at dimension 1"):
        F.ctc_loss(lp, tg, il, [5, 2, 3])
    with pytest.raises(RuntimeError, match="must be integral"):
        F.ctc_loss(lp, tg, toolkit.tensor([10.0, 8.0, 6.0]), toolkit.tensor(tl))
