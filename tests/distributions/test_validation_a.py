"""Argument and sample validation, and the base class's behaviour, against PyTorch: the same exception
types and messages for invalid parameters, values outside the support and malformed arguments."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toolkit
import toolkit.distributions as tkd
from tests.conftest import assert_close

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(D, T)`` run with toolkit and with torch: (toolkit exception, torch exception)."""
    errors = []
    for D, T in ((tkd, toolkit.tensor), (torch.distributions, torch.tensor)):
        try:
            fn(D, T)
        except Exception as e:  # noqa: BLE001  (the point is to compare whatever is raised)
            errors.append(e)
        else:
            errors.append(None)
    return errors


INVALID = [
    ("negative-scale", lambda D, T: D.Normal(0.0, -1.0)),
    ("probs-above-one", lambda D, T: D.Bernoulli(probs=T([0.5, 1.5]))),
    ("probs-and-logits", lambda D, T: D.Bernoulli(probs=0.5, logits=0.0)),
    ("neither", lambda D, T: D.Categorical()),
    ("scalar-probs", lambda D, T: D.Categorical(probs=T(0.5))),
    ("scalar-logits", lambda D, T: D.Categorical(logits=T(0.5))),
    ("not-simplex", lambda D, T: D.Categorical(probs=T([-0.1, 1.1]))),
    ("uniform-order", lambda D, T: D.Uniform(T(1.0), T(0.0))),
    ("geometric-zero", lambda D, T: D.Geometric(probs=T([0.0, 0.5]))),
    ("gamma-rate", lambda D, T: D.Gamma(T([1.0]), T([-2.0]))),
    ("dirichlet-scalar", lambda D, T: D.Dirichlet(T(1.0))),
    ("binomial-count", lambda D, T: D.Binomial(T([2.5]), probs=T([0.5]))),
    ("multinomial-count", lambda D, T: D.Multinomial(2.0, probs=T([0.5, 0.5]))),
    ("mvn-two-matrices", lambda D, T: D.MultivariateNormal(T([0.0, 0.0]), T([[1.0, 0.0], [0.0, 1.0]]),
                                                          scale_tril=T([[1.0, 0.0], [0.0, 1.0]]))),
    ("mvn-loc-scalar", lambda D, T: D.MultivariateNormal(T(0.0), T([[1.0]]))),
    ("mvn-1d-matrix", lambda D, T: D.MultivariateNormal(T([0.0]), scale_tril=T([1.0]))),
    ("mvn-not-pd", lambda D, T: D.MultivariateNormal(T([0.0, 0.0]), T([[1.0, 2.0], [2.0, 1.0]]))),
    ("lowrank-factor", lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0], [1.0]]),
                                                                T([1.0, 1.0]))),
    ("lowrank-diag", lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0]]), T([1.0]))),
    ("independent-ndims", lambda D, T: D.Independent(D.Normal(T([0.0]), T([1.0])), 2)),
    ("lkj-dim", lambda D, T: D.LKJCholesky(1)),
    ("continuous-bernoulli", lambda D, T: D.ContinuousBernoulli(probs=T([1.5]), validate_args=True)),
    ("mixture-type", lambda D, T: D.MixtureSameFamily(D.Normal(T([0.0]), T([1.0])), D.Normal(T([0.0]), T([1.0])))),
    ("mixture-count", lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.5, 0.5])), D.Normal(T([0.0] * 3),
                                                                                           T([1.0] * 3)))),
    ("log-prob-outside-support", lambda D, T: D.Exponential(T([1.0])).log_prob(T([-1.0]))),
    ("log-prob-not-tensor", lambda D, T: D.Normal(0.0, 1.0).log_prob(0.5)),
    ("log-prob-event-shape", lambda D, T: D.Dirichlet(T([1.0, 1.0])).log_prob(T([0.2, 0.3, 0.5]))),
    ("log-prob-broadcast", lambda D, T: D.Normal(T([0.0, 0.0]), 1.0).log_prob(T([0.0, 0.0, 0.0]))),
    ("log-prob-simplex", lambda D, T: D.Categorical(T([0.5, 0.5])).log_prob(T(2))),
    ("bad-argument-type", lambda D, T: D.Normal("0", 1.0)),
]


@pytest.mark.parametrize("fn", [c[1] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_arguments_raise_as_torch(fn):
    ours, theirs = _both(fn)
    assert theirs is not None and ours is not None
    assert type(ours) is type(theirs)
    assert str(ours).replace("toolkit.", "torch.") == str(theirs)


def test_validation_can_be_turned_off():
    assert tkd.Distribution._validate_args is True
    d = tkd.Normal(0.0, -1.0, validate_args=False)
    assert float(d.scale) == -1.0
    tkd.Distribution.set_default_validate_args(False)
    try:
        tkd.Normal(0.0, -1.0)
        tkd.Exponential(1.0).log_prob(toolkit.tensor(-1.0))
    finally:
        tkd.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        tkd.Distribution.set_default_validate_args(1.5)


def test_sample_n_warns_and_samples():
    d = tkd.Normal(toolkit.zeros(2), 1.0)
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        x = d.sample_n(3)
    assert tuple(x.shape) == (3, 2)


def test_base_class_interface():
    d = tkd.Distribution(toolkit.Size([2]), validate_args=False)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == ()
    assert tuple(d._extended_shape((3,))) == (3, 2)
    for name in ("mean", "mode", "variance"):
        with pytest.raises(NotImplementedError, match=f"does not implement {name}"):
            getattr(d, name)
    for call in (d.rsample, d.entropy, d.enumerate_support, lambda: d.expand((2,))):
        with pytest.raises(NotImplementedError):
            call()


def test_missing_arg_constraints_warns():
    class Bare(tkd.Distribution):
        pass

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Bare(validate_args=True)
    assert any("does not define `arg_constraints`" in str(w.message) for w in caught)


def test_subclass_with_own_init_must_define_expand():
    class Shifted(tkd.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError, match="Subclass Shifted of Normal that defines a custom __init__"):
        Shifted(toolkit.zeros(2)).expand((3, 2))


def test_rsample_gradient_flows_and_sample_does_not():
    loc = toolkit.tensor([0.5, -1.0], requires_grad=True)
    d = tkd.Normal(loc, 2.0)
    assert not d.sample().requires_grad
    d.rsample((3,)).sum().backward()
    assert_close(loc.grad, np.array([3.0, 3.0], np.float32))


def test_lazy_probs_logits_track_gradients():
    logits = toolkit.tensor([0.2, -0.3], requires_grad=True)
    d = tkd.Bernoulli(logits=logits)
    with toolkit.no_grad():
        probs = d.probs  # computed under enable_grad all the same
    probs.sum().backward()
    s = 1 / (1 + np.exp(-np.array([0.2, -0.3])))
    assert_close(logits.grad, (s * (1 - s)).astype(np.float32))
