"""Gradients of the distributions of ``cases_a``: rsample and log_prob gradients against PyTorch's for the
same seed, and gradcheck of log_prob with respect to every parameter."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest

import toolkit
from tests.conftest import assert_close
from tests.distributions.cases_a import CASES, GAMMA_FAMILY
from tests.distributions.pairs_a import build, rebuild_from, to_toolkit_value
from toolkit.distributions import Distribution

torch = pytest.importorskip("torch")

WITH_TENSORS = [c for c in CASES if build(c)[2]]  # cases with tensor parameters to differentiate
RSAMPLE_CASES = [c for c in WITH_TENSORS if build(c)[1].has_rsample]


@contextlib.contextmanager
def _no_validation():
    """Finite differences step off the constraints (a simplex, a triangular or positive-definite matrix):
    gradchecks check only the math."""
    Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        Distribution.set_default_validate_args(True)


def _grads(leaves):
    return [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("case", RSAMPLE_CASES, ids=[c[0] for c in RSAMPLE_CASES])
def test_rsample_grad_same_seed(case):
    d, dt, tk_leaves, th_leaves = build(case, requires_grad=True)
    weights = np.random.default_rng(0).standard_normal((4,) + tuple(dt.batch_shape) + tuple(dt.event_shape))
    toolkit.manual_seed(11)
    ours = d.rsample((4,))
    torch.manual_seed(11)
    if case[0].startswith("Wishart"):
        # PyTorch's Wishart.rsample flags every valid first draw for redrawing and then fails in backward (the
        # redraw's index mask is modified in place); the oracle is its second Bartlett draw, which is what
        # rsample returns when all first draws are valid
        dt._bartlett_sampling((4,))
        theirs = dt._bartlett_sampling((4,))
    else:
        theirs = dt.rsample((4,))
    assert_close(ours, theirs)
    (ours * toolkit.tensor(weights.astype(np.float32))).sum().backward()
    (theirs * torch.tensor(weights.astype(np.float32))).sum().backward()
    for a, e in zip(_grads(tk_leaves), _grads(th_leaves)):
        assert_close(a, e, accum=16)


def test_dirichlet_rsample_grad_is_unbiased():
    """The mean of the Dirichlet's reparametrized gradients is the gradient of the mean,
    ``E[<w, x>] = <w, alpha> / sum(alpha)`` (a check that does not lean on PyTorch's approximation)."""
    alpha = np.array([0.7, 2.0, 3.5])
    w = np.array([1.0, -2.0, 0.5])
    conc = toolkit.tensor(alpha, requires_grad=True)
    toolkit.manual_seed(0)
    n = 4000
    x = toolkit.distributions.Dirichlet(conc).rsample((n,))
    (x * toolkit.tensor(w)).sum().div(n).backward()
    total = alpha.sum()
    expected = w / total - (w @ alpha) / total**2
    # Monte Carlo: the standard error of the mean of 4000 draws is about 0.01 here
    assert_close(conc.grad, expected, rtol=0.0, atol=0.05)


@pytest.mark.parametrize("case", WITH_TENSORS, ids=[c[0] for c in WITH_TENSORS])
def test_log_prob_grad(case):
    d, dt, tk_leaves, th_leaves = build(case, requires_grad=True)
    torch.manual_seed(2)
    value = dt.sample((3,)).detach()
    d.log_prob(to_toolkit_value(value)).sum().backward()
    dt.log_prob(value).sum().backward()
    for a, e in zip(_grads(tk_leaves), _grads(th_leaves)):
        if e is None:
            assert a is None or not bool(a.abs().sum())
        else:
            assert_close(a, e, accum=max(16, 3 * int(math.prod(dt.batch_shape) or 1)))


@pytest.mark.parametrize("case", WITH_TENSORS, ids=[c[0] for c in WITH_TENSORS])
def test_log_prob_gradcheck(case):
    _, dt, tk_leaves, _ = build(case, dtype=np.float64, requires_grad=True)
    torch.manual_seed(4)
    value = to_toolkit_value(dt.sample((2,)))

    def log_prob(*leaves):
        return rebuild_from(case, list(leaves)).log_prob(value)

    with _no_validation():
        assert toolkit.autograd.gradcheck(log_prob, tuple(tk_leaves), eps=1e-6, atol=1e-5, rtol=1e-4)


# rsample as a function of the parameters, for a fixed seed, where that function is the reparametrization
# (the gamma family's draws are rejection samples: their gradient is the implicit one, not this function's
# derivative; the straight-through estimator is not a derivative by design)
SMOOTH_RSAMPLE = [c for c in RSAMPLE_CASES
                  if c[0] not in GAMMA_FAMILY and c[0] != "OneHotCategoricalStraightThrough"]


@pytest.mark.parametrize("case", SMOOTH_RSAMPLE, ids=[c[0] for c in SMOOTH_RSAMPLE])
def test_rsample_gradcheck(case):
    _, _, tk_leaves, _ = build(case, dtype=np.float64, requires_grad=True)

    def rsample(*leaves):
        toolkit.manual_seed(21)
        return rebuild_from(case, list(leaves)).rsample((2,))

    with _no_validation():
        assert toolkit.autograd.gradcheck(rsample, tuple(tk_leaves), eps=1e-6, atol=1e-5, rtol=1e-4)
