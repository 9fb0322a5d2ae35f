"""``kl_divergence`` against PyTorch for every pair PyTorch registers among the distributions of
``cases_a``, the dispatch rules (most specific match, ambiguity warning, missing pairs) and the Bregman
divergence of exponential families."""

from __future__ import annotations

import warnings

import pytest

import toolkit
import toolkit.distributions as tkd
from tests.conftest import assert_close
from tests.distributions.pairs_a import CASE_BY_ID, build, perturbed
from toolkit.distributions.kl import _kl_expfamily_expfamily

torch = pytest.importorskip("torch")

# the case that stands for each class in a pair
CLASS_CASE = {
    "Normal": "Normal", "Uniform": "Uniform", "Exponential": "Exponential", "Laplace": "Laplace",
    "Cauchy": "Cauchy", "Bernoulli": "Bernoulli-probs", "Categorical": "Categorical-probs",
    "OneHotCategorical": "OneHotCategorical", "Geometric": "Geometric-probs", "Poisson": "Poisson",
    "Binomial": "Binomial-probs", "Gamma": "Gamma", "Beta": "Beta", "Dirichlet": "Dirichlet",
    "ContinuousBernoulli": "ContinuousBernoulli", "MultivariateNormal": "MultivariateNormal-cov",
    "LowRankMultivariateNormal": "LowRankMultivariateNormal", "Independent": "Independent",
}
PAIRS = sorted({(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY
                if p.__name__ in CLASS_CASE and q.__name__ in CLASS_CASE})


def _q_case(name):
    case = CASE_BY_ID[CLASS_CASE[name]]
    return case, perturbed(case[2])


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_kl_matches_torch(pair):
    p, pt, _, _ = build(CASE_BY_ID[CLASS_CASE[pair[0]]])
    q_case, q_params = _q_case(pair[1])
    q, qt, _, _ = build(q_case, params=q_params)
    try:
        expected = torch.distributions.kl_divergence(pt, qt)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            tkd.kl_divergence(p, q)
        return
    assert_close(tkd.kl_divergence(p, q), expected, accum=16)


def test_uniform_beta_pair_finite():
    """A uniform inside [0, 1] against a beta: the finite branch of that pair."""
    p, pt = tkd.Uniform(toolkit.tensor([0.1, 0.3]), toolkit.tensor([0.6, 0.9])), torch.distributions.Uniform(
        torch.tensor([0.1, 0.3]), torch.tensor([0.6, 0.9]))
    q, qt = tkd.Beta(toolkit.tensor([2.0, 0.7]), 1.5), torch.distributions.Beta(torch.tensor([2.0, 0.7]), 1.5)
    assert_close(tkd.kl_divergence(p, q), torch.distributions.kl_divergence(pt, qt))


def test_missing_pair_raises():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type VonMises and q "
                                                  "type Normal"):
        tkd.kl_divergence(tkd.VonMises(0.0, 1.0), tkd.Normal(0.0, 1.0))


def test_register_kl_checks_types():
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        tkd.register_kl(int, tkd.Normal)
    with pytest.raises(TypeError, match="Expected type_q to be a Distribution subclass"):
        tkd.register_kl(tkd.Normal, "Normal")


def test_most_specific_match_and_ambiguity():
    class A(tkd.Normal):
        pass

    class B(tkd.Normal):
        pass

    p, q = A(0.0, 1.0), B(1.0, 2.0)
    # falls back to (Normal, Normal)
    assert_close(tkd.kl_divergence(p, q), tkd.kl_divergence(tkd.Normal(0.0, 1.0), tkd.Normal(1.0, 2.0)))
    tkd.register_kl(A, tkd.Normal)(lambda p, q: toolkit.tensor(1.0))
    tkd.register_kl(tkd.Normal, B)(lambda p, q: toolkit.tensor(2.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert float(tkd.kl_divergence(p, q)) == 1.0
    assert any(issubclass(w.category, RuntimeWarning) and "Ambiguous kl_divergence(A, B). Please register_kl(A, B)"
               in str(w.message) for w in caught)
    tkd.register_kl(A, B)(lambda p, q: toolkit.tensor(3.0))
    assert float(tkd.kl_divergence(p, q)) == 3.0


@pytest.mark.parametrize("name", ["Normal", "Exponential", "Gamma", "Beta", "Poisson", "Bernoulli", "Dirichlet"])
def test_bregman_divergence_and_entropy(name):
    """The exponential-family fallbacks agree with the closed forms."""
    case = CASE_BY_ID[CLASS_CASE[name]]
    p, _, _, _ = build(case, dtype="float64")
    q, _, _, _ = build(case, dtype="float64", params=perturbed(case[2]))
    assert_close(_kl_expfamily_expfamily(p, q), tkd.kl_divergence(p, q), accum=16)
    if name in ("Beta", "Poisson", "Dirichlet"):  # no carrier measure in closed form, as in PyTorch
        with pytest.raises(NotImplementedError):
            tkd.ExponentialFamily.entropy(p)
    else:
        assert_close(tkd.ExponentialFamily.entropy(p), p.entropy(), accum=16)


def test_bregman_refuses_two_families():
    with pytest.raises(NotImplementedError, match="The cross KL-divergence between different exponential families"):
        _kl_expfamily_expfamily(tkd.Normal(0.0, 1.0), tkd.Poisson(1.0))


def test_event_shape_mismatch():
    p = tkd.MultivariateNormal(toolkit.zeros(2), toolkit.eye(2))
    q = tkd.MultivariateNormal(toolkit.zeros(3), toolkit.eye(3))
    pt = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    qt = torch.distributions.MultivariateNormal(torch.zeros(3), torch.eye(3))
    with pytest.raises(ValueError) as expected:
        torch.distributions.kl_divergence(pt, qt)
    with pytest.raises(ValueError) as actual:
        tkd.kl_divergence(p, q)
    assert str(actual.value) == str(expected.value)
