"""Losses against PyTorch: functional values and gradients, every reduction, weights, errors, and the layers."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from ..conftest import assert_close

REDUCTIONS = ("none", "mean", "sum")


def _run(name, args, kwargs=None, grad=(0,), tkwargs=None, **tol):
    """Call ``name`` in both libraries on the same data; compare results and gradients of ``grad`` args."""
    kwargs = kwargs or {}
    tk = [toolkit.tensor(a).requires_grad_(i in grad) if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]
    th = [torch.from_numpy(a.copy()).requires_grad_(i in grad) if isinstance(a, np.ndarray) else a
          for i, a in enumerate(args)]
    tkw = {k: toolkit.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    thw = {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = getattr(F, name)(*tk, **tkw)
    exp = getattr(TF, name)(*th, **thw)
    assert_close(out, exp, **tol)
    if grad and exp.requires_grad:
        seed = np.random.default_rng(1).uniform(0.5, 1.5, tuple(exp.shape))
        out.backward(toolkit.tensor(seed).to(out.dtype))
        exp.backward(torch.from_numpy(seed).to(exp.dtype))
        for i in grad:
            assert_close(tk[i].grad, th[i].grad, **tol)
    return out


@pytest.fixture
def r():
    return np.random.default_rng(0)


# ---------------------------------------------------------------------------------------------
# regression losses
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                     ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {"delta": 0.7})])
def test_regression(name, kw, reduction, r):
    _run(name, [r.standard_normal((3, 4)), r.standard_normal((3, 4))], dict(kw, reduction=reduction), grad=(0, 1))
    _run(name, [r.standard_normal((4, 3)).astype(np.float32).T, r.standard_normal((3, 4)).astype(np.float32)],
         dict(kw, reduction=reduction), grad=(0, 1))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_elementwise_weight(name, reduction, r):
    _run(name, [r.standard_normal((3, 4)), r.standard_normal((3, 4))],
         {"reduction": reduction, "weight": r.uniform(0.5, 2, (3, 4))})


def test_regression_broadcast_warns_and_matches(r):
    x, t = r.standard_normal((3, 1)), r.standard_normal((3,))
    with pytest.warns(UserWarning, match=r"Using a target size \(toolkit.Size\(\[3\]\)\) that is different to the "
                                         r"input size \(toolkit.Size\(\[3, 1\]\)\)"):
        _run("mse_loss", [x, t], {"reduction": "none"}, grad=(0, 1))
    with pytest.raises(RuntimeError):
        F.l1_loss(toolkit.ones(3), toolkit.ones(4))


def test_regression_dtypes_and_edge_cases(r):
    a, b = toolkit.rand(3), toolkit.rand(3, dtype=toolkit.float64)
    assert F.mse_loss(a, b).dtype == toolkit.float64
    assert F.huber_loss(a, b).dtype == toolkit.float32  # aten keeps self's dtype here
    assert F.huber_loss(b, a).dtype == toolkit.float64
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.mse_loss(toolkit.ones(3, dtype=toolkit.int64), toolkit.ones(3, dtype=toolkit.int64))
    assert toolkit.isnan(F.mse_loss(toolkit.rand(0), toolkit.rand(0)))
    _run("l1_loss", [np.array(0.3), np.array(-1.2)], grad=(0, 1))
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta."):
        F.huber_loss(a, a, delta=-1)
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta."):
        F.smooth_l1_loss(a, a, beta=-1)


def test_reduction_strings_and_legacy_flags(r):
    x, t = r.standard_normal((3, 4)), r.standard_normal((3, 4))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(toolkit.tensor(x), toolkit.tensor(t), reduction="foo")
    for sa, red in [(None, False), (False, None), (True, True), (False, False), (True, None)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _run("mse_loss", [x, t], {"size_average": sa, "reduce": red})
            _run("nll_loss", [x, np.array([0, 3, 1])], {"size_average": sa, "reduce": red})
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        F.l1_loss(toolkit.tensor(x), toolkit.tensor(t), size_average=False)


# ---------------------------------------------------------------------------------------------
# nll_loss and cross_entropy with class indices
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted, r):
    w = {"weight": r.uniform(0.5, 2, (5,))} if weighted else {}
    logp = np.log(r.dirichlet(np.ones(5), 4))
    _run("nll_loss", [logp, r.integers(0, 5, (4,))], dict(w, reduction=reduction))
    _run("nll_loss", [logp, np.array([1, -100, 4, -100])], dict(w, reduction=reduction))
    _run("nll_loss", [logp, np.array([1, 2, 4, 2])], dict(w, reduction=reduction, ignore_index=2))
    _run("nll_loss", [r.standard_normal((2, 5, 3, 2)), r.integers(0, 5, (2, 3, 2))], dict(w, reduction=reduction))
    _run("nll_loss", [r.standard_normal((2, 5, 3)), r.integers(0, 5, (2, 3))], dict(w, reduction=reduction))
    _run("nll_loss", [r.standard_normal(5), np.array(3)], dict(w, reduction=reduction))


def test_nll_loss_all_ignored_is_nan_or_zero():
    x = toolkit.randn(3, 4, requires_grad=True)
    t = toolkit.tensor([-100, -100, -100])
    assert toolkit.isnan(F.nll_loss(x, t))
    assert F.nll_loss(x, t, reduction="sum").item() == 0.0
    assert_close(F.cross_entropy(x, t, reduction="none"), torch.zeros(3))
    F.nll_loss(x, t, reduction="sum").backward()
    assert_close(x.grad, torch.zeros(3, 4))


def test_nll_loss_uint8_target_and_float32(r):
    x = r.standard_normal((3, 4)).astype(np.float32)
    _run("nll_loss", [x, np.array([0, 3, 1], np.uint8)])


def test_nll_loss_errors():
    x = toolkit.randn(3, 4)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(x, toolkit.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(x, toolkit.tensor([0, 1, 2], dtype=toolkit.int32))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.nll_loss(x, toolkit.tensor([0, 1, 5]))
    with pytest.raises(IndexError, match="Target -5 is out of bounds."):
        F.nll_loss(x, toolkit.tensor([0, 1, -5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.nll_loss(x, toolkit.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes or no classes "
                                           r"but got weight tensor of shape: \[3\]"):
        F.nll_loss(x, toolkit.tensor([0, 1, 2]), weight=toolkit.ones(3))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.nll_loss(x.double(), toolkit.tensor([0, 1, 2]), weight=toolkit.ones(4))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 3\]"):
        F.nll_loss(toolkit.randn(2, 3, 4), toolkit.zeros(2, 3, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match="size mismatch"):
        F.nll_loss(toolkit.randn(2, 3, 4, 5), toolkit.zeros(2, 4, 4, dtype=toolkit.int64))
    with pytest.raises(ValueError, match=r"Expected 1 or more dimensions \(got 0\)"):
        F.nll_loss(toolkit.randn(()), toolkit.tensor(1))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.nll_loss(x.long(), toolkit.tensor([0, 1, 2]))


def _z(m, shape, dtype=None):
    return m.zeros(shape, dtype=getattr(m, dtype) if dtype else None)


# (input shape, input dtype, target shape, target dtype, weight shape, weight dtype)
_CHECK_ORDER = {
    "2D, float 2D target": ((2, 3), None, (2, 4), None, None, None),
    "2D long, float 2D target": ((2, 3), "long", (2, 4), None, None, None),
    "2D, long 2D target": ((2, 3), None, (2, 4), "long", None, None),
    "2D, float target, bad weight": ((2, 3), None, (2,), None, (4,), None),
    "2D, long target, bad weight": ((2, 3), None, (2,), "long", (4,), None),
    "2D long, long target, bad weight": ((2, 3), "long", (2,), "long", (4,), None),
    "2D long, long target, float64 weight": ((2, 3), "long", (2,), "long", (3,), "float64"),
    "2D, 2-D weight": ((2, 3), None, (2,), "long", (1, 3), None),
    "2D, 0-dim target": ((2, 3), None, (), "long", None, None),
    "2D, batch mismatch, float target": ((2, 3), None, (3,), None, None, None),
    "1D, float 1D target": ((3,), None, (4,), None, None, None),
    "1D, long target of 2": ((3,), None, (2,), "long", None, None),
    "1D, float target of 2": ((3,), None, (2,), None, None, None),
    "1D, 2D target": ((3,), None, (1, 1), "long", None, None),
    "3D, float target of bad size": ((2, 3, 4), None, (2, 5), None, None, None),
    "3D long, long target": ((2, 3, 4), "long", (2, 4), "long", None, None),
    "3D, bad weight": ((2, 3, 4), None, (2, 4), "long", (5,), None),
    "3D, float target, bad weight": ((2, 3, 4), None, (2, 4), None, (5,), None),
    "3D, float64 weight": ((2, 3, 4), None, (2, 4), "long", (3,), "float64"),
    "4D, 2D float target": ((2, 3, 4, 5), None, (2, 4), None, None, None),
    "4D, 3D float target of bad size": ((2, 3, 4, 5), None, (2, 4, 6), None, None, None),
    "4D, long target of bad size": ((2, 3, 4, 5), None, (2, 4, 6), "long", None, None),
    "4D, bad weight, target of bad size": ((2, 3, 4, 5), None, (2, 4, 6), "long", (4,), None),
    "4D long, float target": ((2, 3, 4, 5), "long", (2, 4, 5), None, None, None),
    "4D long, long target": ((2, 3, 4, 5), "long", (2, 4, 5), "long", None, None),
    "4D, 2-D weight": ((2, 3, 4, 5), None, (2, 4, 5), "long", (1, 3), None),
    "5D, target of bad size": ((2, 3, 4, 5, 6), None, (2, 4, 5), None, None, None),
}


@pytest.mark.parametrize("case", list(_CHECK_ORDER))
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy", "cross_entropy smoothed"])
def test_loss_checks_shapes_before_dtypes_like_torch(case, loss):
    """The first error PyTorch raises is the one raised: a wrong target shape is blamed on the shape, not on
    the float dtype of a target meant as class probabilities (``cross_entropy(zeros(2, 3), zeros(2, 4))``)."""
    ishape, idt, tshape, tdt, wshape, wdt = _CHECK_ORDER[case]
    if loss != "nll_loss" and idt:
        pytest.skip("log_softmax refuses integer input first")
    name, kw = (loss, {}) if loss != "cross_entropy smoothed" else ("cross_entropy", {"label_smoothing": 0.1})

    def run(m, f):
        w = None if wshape is None else m.ones(wshape, dtype=getattr(m, wdt) if wdt else None)
        return getattr(f, name)(_z(m, ishape, dtype=idt), _z(m, tshape, dtype=tdt), weight=w, **kw)

    try:
        want = run(torch, TF)
    except Exception as e:  # noqa: BLE001 - the exception type and message are what we compare
        with pytest.raises(type(e), match=re.escape(str(e))):
            run(toolkit, F)
        return
    assert_close(run(toolkit, F), want)


def test_cross_entropy_names_the_shape_when_a_float_target_does_not_match():
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        F.cross_entropy(toolkit.zeros(2, 3), toolkit.zeros(2, 4))
    with pytest.raises(IndexError, match="Dimension specified as 1 but tensor has no dimensions"):
        F.cross_entropy(toolkit.zeros(()), toolkit.zeros(()))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(reduction, smoothing, weighted, r):
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    if weighted:
        kw["weight"] = r.uniform(0.5, 2, (5,))
    _run("cross_entropy", [r.standard_normal((4, 5)), r.integers(0, 5, (4,))], kw)
    _run("cross_entropy", [r.standard_normal((4, 5)), np.array([1, -100, 4, 0])], kw)
    _run("cross_entropy", [r.standard_normal((4, 5)), np.array([1, 3, 4, 3])], dict(kw, ignore_index=3))
    _run("cross_entropy", [r.standard_normal((2, 5, 3, 2)), r.integers(0, 5, (2, 3, 2))], kw)
    _run("cross_entropy", [r.standard_normal(5), np.array(2)], kw)
    _run("cross_entropy", [r.standard_normal((4, 5)).astype(np.float32), r.integers(0, 5, (4,))],
         {k: (v.astype(np.float32) if isinstance(v, np.ndarray) else v) for k, v in kw.items()})


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets(reduction, smoothing, weighted, r):
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    if weighted:
        kw["weight"] = r.uniform(0.5, 2, (5,))
    _run("cross_entropy", [r.standard_normal((4, 5)), r.dirichlet(np.ones(5), 4)], kw, grad=(0, 1))
    _run("cross_entropy", [r.standard_normal((2, 5, 3, 2)), r.uniform(0, 1, (2, 5, 3, 2))], kw, grad=(0, 1))
    _run("cross_entropy", [r.standard_normal(5), r.dirichlet(np.ones(5))], kw, grad=(0, 1))


def test_cross_entropy_errors():
    x = toolkit.randn(3, 4)
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, "
                                           "got Long"):
        F.cross_entropy(x, toolkit.zeros(3, 4, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(x, toolkit.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(x, toolkit.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(x, toolkit.rand(3, 4), ignore_index=1)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.cross_entropy(x.long(), toolkit.tensor([0, 1, 2]))


def test_cross_entropy_double_backward(r):
    x = toolkit.tensor(r.standard_normal((3, 4)), requires_grad=True)
    w = toolkit.tensor(r.uniform(0.5, 2, (4,)))
    t = toolkit.tensor([1, -100, 3])
    assert toolkit.autograd.gradgradcheck(
        lambda a: F.cross_entropy(a, t, weight=w, label_smoothing=0.2), (x,))
    p = toolkit.tensor(r.dirichlet(np.ones(4), 3), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1), (x, p))


def test_nll_weighted_gradient_numerically(r):
    x = toolkit.tensor(r.standard_normal((4, 3)), requires_grad=True)
    w = toolkit.tensor(r.uniform(0.5, 2, (3,)))
    t = toolkit.tensor([0, 2, -100, 2])
    for red in REDUCTIONS:
        assert toolkit.autograd.gradcheck(lambda a, red=red: F.nll_loss(a, t, weight=w, reduction=red), (x,))


_CLASS_WEIGHTED = [
    ("nll_loss", lambda x, t, w, pw: ((x.log_softmax(1), t[0]), {"weight": w[0]})),
    ("cross_entropy", lambda x, t, w, pw: ((x, t[0]), {"weight": w[0]})),
    ("cross_entropy", lambda x, t, w, pw: ((x, t[0]), {"weight": w[0], "label_smoothing": 0.1})),
    ("binary_cross_entropy", lambda x, t, w, pw: ((x.sigmoid(), t[1]), {"weight": w[1]})),
    ("binary_cross_entropy_with_logits", lambda x, t, w, pw: ((x, t[1]), {"weight": w[1]})),
    ("binary_cross_entropy_with_logits", lambda x, t, w, pw: ((x, t[1]), {"pos_weight": pw})),
]


@pytest.mark.parametrize("name,make", _CLASS_WEIGHTED)
@pytest.mark.parametrize("x_grad", [True, False])
def test_weights_requiring_grad_are_refused_like_torch(name, make, x_grad, r):
    """PyTorch raises for class/element weights that require grad (they are not differentiable) in grad mode."""
    arrays = (r.standard_normal((3, 4)), r.integers(0, 4, (3,)), r.uniform(0, 1, (3, 4)), r.uniform(0.5, 2, (4,)),
              r.uniform(0.5, 2, (3, 4)), r.uniform(0.5, 2, (4,)))
    for lib, fn, F_ in ((torch, torch.from_numpy, TF), (toolkit, toolkit.from_numpy, F)):
        x, ti, tf, w1, w2, pw = (fn(a.copy()) for a in arrays)
        x.requires_grad_(x_grad)
        for wt in (w1, w2, pw):
            wt.requires_grad_(True)
        args, kwargs = make(x, (ti, tf), (w1, w2), pw)
        with pytest.raises(RuntimeError, match="is not differentiable with respect to argument '(pos_)?weight'. "
                                               "This input cannot have requires_grad True."):
            getattr(F_, name)(*args, **kwargs)
        with lib.no_grad():
            getattr(F_, name)(*args, **kwargs)  # no check without grad mode


def test_cross_entropy_probability_targets_differentiate_weight(r):
    """With probability targets cross_entropy is composite in PyTorch, so the weight does get a gradient."""
    x, p, w = r.standard_normal((3, 4)), r.dirichlet(np.ones(4), 3), r.uniform(0.5, 2, (4,))
    _run("cross_entropy", [x, p, w], {"label_smoothing": 0.2}, grad=(0, 2))
    _run("cross_entropy", [x, p, w], {}, grad=(0, 2))


# ---------------------------------------------------------------------------------------------
# binary cross entropy
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction, r):
    p, t = r.uniform(0.05, 0.95, (3, 4)), r.uniform(0, 1, (3, 4))
    _run("binary_cross_entropy", [p, t], {"reduction": reduction}, grad=(0, 1))
    _run("binary_cross_entropy", [p, t, r.uniform(0.5, 2, (4,))], {"reduction": reduction}, grad=(0, 1))
    _run("binary_cross_entropy", [np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5])],
         {"reduction": reduction}, grad=())  # log clamped at -100


def test_binary_cross_entropy_errors():
    with pytest.raises(ValueError, match="is deprecated. Please ensure they have the same size."):
        F.binary_cross_entropy(toolkit.rand(3), toolkit.rand(3, 1))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(toolkit.rand(3) + 1, toolkit.rand(3))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(toolkit.rand(3), toolkit.rand(3) + 1)
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        F.binary_cross_entropy(toolkit.rand(3), toolkit.rand(3).double())


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction, r):
    x, t = r.uniform(-4, 4, (3, 4)), r.uniform(0, 1, (3, 4))
    _run("binary_cross_entropy_with_logits", [x, t], {"reduction": reduction}, grad=(0, 1))
    _run("binary_cross_entropy_with_logits", [x, t, r.uniform(0.5, 2, (4,))],
         {"reduction": reduction, "pos_weight": r.uniform(0.5, 3, (4,))}, grad=(0, 1))
    _run("binary_cross_entropy_with_logits", [np.array([-300.0, 300.0, 0.0]), np.array([1.0, 0.0, 1.0])],
         {"reduction": reduction}, grad=(0, 1))  # stable at extreme logits


def test_binary_cross_entropy_with_logits_errors_and_dtype():
    with pytest.raises(ValueError, match=r"Target size \(toolkit.Size\(\[3, 1\]\)\) must be the same as input "
                                         r"size \(toolkit.Size\(\[3\]\)\)"):
        F.binary_cross_entropy_with_logits(toolkit.rand(3), toolkit.rand(3, 1))
    a, b = toolkit.rand(3), toolkit.rand(3, dtype=toolkit.float64)
    assert F.binary_cross_entropy_with_logits(a, b).dtype == toolkit.float64
    assert F.binary_cross_entropy_with_logits(b, a).dtype == toolkit.float32


# ---------------------------------------------------------------------------------------------
# kl_div and the smaller losses
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS + ("batchmean",))
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target, r):
    x = np.log(r.dirichlet(np.ones(4), 3))
    t = np.log(r.dirichlet(np.ones(4), 3)) if log_target else r.dirichlet(np.ones(4), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run("kl_div", [x, t], {"reduction": reduction, "log_target": log_target}, grad=(0, 1))
    if not log_target:
        _run("kl_div", [x, np.array([[0.0, 0.5, 0.5, 0.0]] * 3)], {"reduction": "sum"}, grad=(0,))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(toolkit.tensor(x), toolkit.tensor(t))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_optional_losses(reduction, r):
    x = r.standard_normal((3, 5))
    kw = {"reduction": reduction}
    _run("poisson_nll_loss", [x, r.uniform(0, 3, (3, 5))], dict(kw, full=True))
    _run("poisson_nll_loss", [np.abs(x) + 0.1, r.uniform(0, 3, (3, 5))], dict(kw, log_input=False))
    _run("soft_margin_loss", [x, np.sign(r.standard_normal((3, 5)))], kw)
    _run("margin_ranking_loss", [x, r.standard_normal((3, 5)), np.sign(r.standard_normal((3, 5)))],
         dict(kw, margin=0.1), grad=(0, 1))
    _run("hinge_embedding_loss", [x, np.sign(r.standard_normal((3, 5)))], dict(kw, margin=0.5))
    _run("multilabel_soft_margin_loss", [x, r.integers(0, 2, (3, 5)).astype(np.float64), r.uniform(0.5, 2, 5)],
         kw)
    _run("cosine_embedding_loss", [x, r.standard_normal((3, 5)), np.array([1, -1, 1])], dict(kw, margin=0.1),
         grad=(0, 1))
    _run("triplet_margin_loss", [x, r.standard_normal((3, 5)), r.standard_normal((3, 5))], dict(kw, swap=True),
         grad=(0, 1, 2))
    _run("triplet_margin_loss", [x, r.standard_normal((3, 5)), r.standard_normal((3, 5))], dict(kw, p=1.0),
         grad=(0, 1, 2))


# ---------------------------------------------------------------------------------------------
# layers
# ---------------------------------------------------------------------------------------------
def _layer_pair(name, *args, **kwargs):
    tk = getattr(nn, name)(*[toolkit.tensor(a) if isinstance(a, np.ndarray) else a for a in args],
                           **{k: toolkit.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
    th = getattr(torch.nn, name)(*[torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args],
                                 **{k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                                    for k, v in kwargs.items()})
    assert repr(tk) == repr(th)
    assert tk.reduction == th.reduction
    assert sorted(dict(tk.named_buffers())) == sorted(dict(th.named_buffers()))
    return tk, th


def test_layers_match_torch(r):
    x, y = r.standard_normal((4, 5)), r.standard_normal((4, 5))
    t = r.integers(0, 5, (4,))
    w = r.uniform(0.5, 2, (5,))
    p, q = r.uniform(0.05, 0.95, (4, 5)), r.uniform(0, 1, (4, 5))
    cases = [
        (("MSELoss",), {"reduction": "sum"}, (x, y)),
        (("L1Loss",), {}, (x, y)),
        (("SmoothL1Loss",), {"beta": 0.5}, (x, y)),
        (("HuberLoss",), {"delta": 0.5}, (x, y)),
        (("NLLLoss", w), {"ignore_index": 2}, (x, t)),
        (("CrossEntropyLoss", w), {"label_smoothing": 0.1, "reduction": "none"}, (x, t)),
        (("CrossEntropyLoss",), {}, (x, r.dirichlet(np.ones(5), 4))),
        (("BCELoss", w), {}, (p, q)),
        (("BCEWithLogitsLoss",), {"weight": w, "pos_weight": w[::-1].copy()}, (x, q)),
        (("KLDivLoss",), {"reduction": "batchmean", "log_target": True}, (x, y)),
        (("PoissonNLLLoss",), {"full": True}, (x, np.abs(y))),
        (("SoftMarginLoss",), {}, (x, np.sign(y))),
        (("MultiLabelSoftMarginLoss", w), {}, (x, (y > 0).astype(np.float64))),
        (("HingeEmbeddingLoss",), {"margin": 0.3}, (x, np.sign(y))),
        (("MarginRankingLoss",), {"margin": 0.2}, (x, y, np.sign(y))),
        (("CosineEmbeddingLoss",), {"margin": 0.2}, (x, y, np.array([1, -1, 1, -1]))),
        (("TripletMarginLoss",), {"margin": 0.5, "swap": True}, (x, y, q)),
        (("MSELoss", None, None, "none"), {}, (x, y)),
        (("L1Loss", False), {}, (x, y)),
    ]
    for (name, *cargs), ckw, inputs in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tk, th = _layer_pair(name, *cargs, **ckw)
        out = tk(*[toolkit.tensor(a) for a in inputs])
        exp = th(*[torch.from_numpy(a.copy()) for a in inputs])
        assert_close(out, exp)


def test_layer_buffers_move_and_save():
    m = nn.CrossEntropyLoss(weight=toolkit.tensor([1.0, 2.0, 3.0]))
    assert list(m.state_dict()) == ["weight"]
    m2 = m.to(toolkit.float64)
    assert m2.weight.dtype == toolkit.float64
    b = nn.BCEWithLogitsLoss(pos_weight=toolkit.ones(2))
    assert list(b.state_dict()) == ["pos_weight"] and b.weight is None
    assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.raises(TypeError, match="delta must be a float or int"):
        nn.HuberLoss(delta="1")
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0)


def test_training_step_cross_entropy(r):
    """A linear classifier's loss and gradients, as used in the seed training loop."""
    xw, xb = r.standard_normal((8, 5)), r.integers(0, 3, (8,))
    w = toolkit.tensor(r.standard_normal((5, 3)), requires_grad=True)
    tw = torch.from_numpy(w.detach().numpy().copy()).requires_grad_()
    loss = nn.CrossEntropyLoss()(toolkit.tensor(xw) @ w, toolkit.tensor(xb))
    tloss = torch.nn.CrossEntropyLoss()(torch.from_numpy(xw) @ tw, torch.from_numpy(xb))
    loss.backward()
    tloss.backward()
    assert_close(loss, tloss)
    assert_close(w.grad, tw.grad)
