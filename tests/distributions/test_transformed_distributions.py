"""TransformedDistribution and the distributions built on it, against torch's twins: same samples under the
same seed, log_prob, cdf/icdf, moments, entropy, rsample gradients, expand, and validate_args errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import toolkit
import toolkit.distributions as KD
from tests.conftest import assert_close
from toolkit.autograd import gradcheck
from toolkit.distributions import transforms as KT
from toolkit.distributions.normal import Normal
from toolkit.distributions.transformed_distribution import TransformedDistribution

torch = pytest.importorskip("torch")
TD = torch.distributions

MODULES = {
    "LogNormal": "log_normal", "Gumbel": "gumbel", "HalfCauchy": "half_cauchy", "HalfNormal": "half_normal",
    "Pareto": "pareto", "Weibull": "weibull", "Kumaraswamy": "kumaraswamy", "LogisticNormal": "logistic_normal",
    "RelaxedBernoulli": "relaxed_bernoulli", "LogitRelaxedBernoulli": "relaxed_bernoulli",
    "RelaxedOneHotCategorical": "relaxed_categorical", "ExpRelaxedCategorical": "relaxed_categorical",
    "InverseGamma": "inverse_gamma", "GeneralizedPareto": "generalized_pareto",
}


def _mine(name):
    return getattr(importlib.import_module(f"toolkit.distributions.{MODULES[name]}"), name)


def _theirs(name):
    return getattr(TD, name, None) or getattr(getattr(TD, MODULES[name]), name)


def _t(*values):
    return torch.tensor(values, dtype=torch.float64)


def _tk(a):
    return toolkit.tensor(a.detach().numpy()) if isinstance(a, torch.Tensor) else a


# (id, class name, positional args as float64 torch tensors or numbers)
CASES = [
    ("lognormal", "LogNormal", (_t(0.5, -1.0), _t(1.0, 2.0))),
    ("lognormal_scalar", "LogNormal", (0.5, 1.5)),
    ("gumbel", "Gumbel", (_t(0.5, -1.0), _t(1.0, 2.0))),
    ("gumbel_scalar", "Gumbel", (1.0, 2.0)),
    ("halfcauchy", "HalfCauchy", (_t(1.0, 2.0),)),
    ("halfnormal", "HalfNormal", (_t(1.0, 2.0),)),
    ("pareto", "Pareto", (_t(1.0, 2.0), _t(3.0, 0.5))),
    ("weibull", "Weibull", (_t(1.0, 2.0), _t(1.5, 0.7))),
    ("kumaraswamy", "Kumaraswamy", (_t(1.5, 2.0), _t(2.0, 0.7))),
    ("logisticnormal", "LogisticNormal", (_t(0.1, -0.3, 0.2), _t(1.0, 0.5, 2.0))),
    ("relaxedbernoulli", "RelaxedBernoulli", (_t(0.7), _t(0.2, 0.6))),
    ("logitrelaxedbernoulli", "LogitRelaxedBernoulli", (_t(0.7), _t(0.2, 0.6))),
    ("relaxedonehot", "RelaxedOneHotCategorical", (_t(0.7), _t(0.2, 0.3, 0.5))),
    ("exprelaxedcategorical", "ExpRelaxedCategorical", (_t(0.7), _t(0.2, 0.3, 0.5))),
    ("inversegamma", "InverseGamma", (_t(1.5, 3.0), _t(2.0, 0.7))),
]
IDS = [c[0] for c in CASES]


def _pair(case):
    _, name, args = case
    return _mine(name)(*[_tk(a) for a in args]), _theirs(name)(*args)


def _as(case, dtype):
    """``case`` with its tensor parameters cast to ``dtype``."""
    name, cls, args = case
    return name, cls, tuple(a.to(dtype) if isinstance(a, torch.Tensor) else a for a in args)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_samples_and_log_prob_match_torch(case, dtype):
    mine, theirs = _pair(_as(case, dtype))
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(mine.event_shape) == tuple(theirs.event_shape)
    torch.manual_seed(0)
    toolkit.manual_seed(0)
    expected = theirs.sample((4,))
    got = mine.sample((4,))
    assert_close(got, expected)
    assert_close(mine.log_prob(_tk(expected)), theirs.log_prob(expected), accum=max(1, expected.shape[-1]))
    assert mine.has_rsample == theirs.has_rsample
    assert repr(mine) == repr(theirs).replace("torch", "toolkit")
    assert repr(mine.support) == repr(theirs.support).replace("torch", "toolkit")


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("attr", ["mean", "mode", "variance", "stddev", "entropy"])
def test_moments_and_entropy_match_torch(case, attr):
    mine, theirs = _pair(case)
    try:
        expected = getattr(theirs, attr)
        expected = expected() if callable(expected) else expected
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            value = getattr(mine, attr)
            value() if callable(value) else value
        return
    got = getattr(mine, attr)
    got = got() if callable(got) else got
    assert_close(got, expected, accum=max(1, theirs.event_shape.numel()))


_TENSOR_CASES = [c for c in CASES if all(isinstance(a, torch.Tensor) for a in c[2])]
_CDF = [c for c in CASES if c[1] in ("Gumbel", "HalfCauchy", "HalfNormal", "Pareto", "Weibull", "Kumaraswamy",
                                     "LogNormal", "InverseGamma")]


@pytest.mark.parametrize("case", _CDF, ids=[c[0] for c in _CDF])
def test_cdf_and_icdf_match_torch(case):
    mine, theirs = _pair(case)
    torch.manual_seed(1)
    value = theirs.sample((3,))
    assert_close(mine.cdf(_tk(value)), theirs.cdf(value))
    prob = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64).reshape((3,) + (1,) * len(theirs.batch_shape))
    prob = prob.expand((3,) + tuple(theirs.batch_shape))
    try:
        expected = theirs.icdf(prob)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            mine.icdf(_tk(prob))
        return
    assert_close(mine.icdf(_tk(prob)), expected)


# InverseGamma's rsample gradient is Gamma's, an approximation of the implicit derivative that fails gradcheck in
# torch too; Gamma's own tests own it.
_RSAMPLE = [c for c in CASES if _theirs(c[1]).has_rsample and c[1] != "InverseGamma"
            and any(isinstance(a, torch.Tensor) for a in c[2])]


@pytest.mark.parametrize("case", _RSAMPLE, ids=[c[0] for c in _RSAMPLE])
def test_rsample_gradients_match_torch(case):
    _, name, args = case
    targs = [a.clone().requires_grad_(True) if isinstance(a, torch.Tensor) else a for a in args]
    margs = [_tk(a).requires_grad_(True) if isinstance(a, torch.Tensor) else a for a in args]
    torch.manual_seed(2)
    toolkit.manual_seed(2)
    (_theirs(name)(*targs).rsample((3,)) ** 2).sum().backward()
    (_mine(name)(*margs).rsample((3,)) ** 2).sum().backward()
    for m, t in zip(margs, targs):
        if isinstance(t, torch.Tensor):
            assert_close(m.grad, t.grad, accum=3)


@pytest.mark.parametrize("case", _RSAMPLE, ids=[c[0] for c in _RSAMPLE])
def test_rsample_gradcheck(case):
    _, name, args = case
    cls = _mine(name)
    tensors = [_tk(a).requires_grad_(True) for a in args]

    def draw(*params):
        toolkit.manual_seed(3)
        return cls(*params).rsample((2,))

    assert gradcheck(draw, tuple(tensors))


@pytest.mark.parametrize("case", _TENSOR_CASES, ids=[c[0] for c in _TENSOR_CASES])
def test_log_prob_gradcheck(case):
    _, name, args = case
    cls = _mine(name)
    tensors = [_tk(a).requires_grad_(True) for a in args]
    torch.manual_seed(4)
    value = _tk(_theirs(name)(*args).sample((2,)))
    assert gradcheck(lambda *params: cls(*params).log_prob(value), tuple(tensors))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expand_matches_torch(case):
    mine, theirs = _pair(case)
    shape = (3,) + tuple(theirs.batch_shape)
    expanded, expected = mine.expand(shape), theirs.expand(shape)
    assert type(expanded) is type(mine)
    assert tuple(expanded.batch_shape) == tuple(expected.batch_shape)
    assert tuple(expanded.event_shape) == tuple(expected.event_shape)
    torch.manual_seed(5)
    toolkit.manual_seed(5)
    value = expected.sample()
    assert_close(expanded.sample(), value)
    assert_close(expanded.log_prob(_tk(value)), expected.log_prob(value), accum=max(1, theirs.event_shape.numel()))


# (class name, args that break an arg constraint)
BAD_ARGS = [
    ("LogNormal", (0.0, -1.0)), ("Gumbel", (_t(0.0), _t(-1.0))), ("HalfCauchy", (_t(-1.0),)),
    ("HalfNormal", (_t(0.0),)), ("Pareto", (_t(1.0), _t(-2.0))), ("Weibull", (_t(-1.0), _t(1.0))),
    ("Kumaraswamy", (_t(1.0), _t(0.0))), ("LogisticNormal", (_t(0.0, 0.0), _t(1.0, -1.0))),
    ("RelaxedBernoulli", (_t(0.5), _t(1.5))), ("RelaxedOneHotCategorical", (_t(0.5), _t(-0.2, 1.2))),
    ("InverseGamma", (_t(-1.0), _t(1.0))),
]


@pytest.mark.parametrize(("name", "args"), BAD_ARGS, ids=[b[0] for b in BAD_ARGS])
def test_invalid_parameters_raise_like_torch(name, args):
    with pytest.raises(ValueError) as expected:
        _theirs(name)(*args, validate_args=True)
    with pytest.raises(ValueError) as got:
        _mine(name)(*[_tk(a) for a in args], validate_args=True)
    prefix = str(expected.value).split(" (")[0]
    assert str(got.value).startswith(prefix)
    assert "to satisfy the constraint" in str(got.value)


# (class name, args, a value outside the support)
BAD_VALUES = [
    ("LogNormal", (0.0, 1.0), -1.0), ("HalfNormal", (_t(1.0),), -0.5), ("Pareto", (_t(2.0), _t(1.0)), 1.0),
    ("Weibull", (_t(1.0), _t(1.0)), -1.0), ("Kumaraswamy", (_t(1.0), _t(2.0)), 1.5),
    ("InverseGamma", (_t(2.0), _t(1.0)), 0.0),
]


@pytest.mark.parametrize(("name", "args", "value"), BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_values_outside_support_raise_like_torch(name, args, value):
    with pytest.raises(ValueError, match="to be within the support"):
        _theirs(name)(*args, validate_args=True).log_prob(torch.tensor(value, dtype=torch.float64))
    with pytest.raises(ValueError, match="to be within the support"):
        _mine(name)(*[_tk(a) for a in args], validate_args=True).log_prob(toolkit.tensor(value, dtype=toolkit.float64))


def test_relaxed_needs_exactly_one_of_probs_and_logits():
    for module in ("RelaxedBernoulli", "LogitRelaxedBernoulli"):
        with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
            _mine(module)(toolkit.tensor(0.5))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        _mine("RelaxedOneHotCategorical")(toolkit.tensor(0.5), toolkit.tensor([0.5, 0.5]),
                                          toolkit.tensor([0.0, 0.0]))


# Generic TransformedDistribution chains, as (id, builder over (distributions module, transforms module)).
CHAINS = [
    ("affine_exp", lambda d, t, p: d(p(0.2, -0.5), p(1.0, 0.5)), lambda t, p: [t.AffineTransform(1.0, -2.0), t.ExpTransform()]),
    ("tanh", lambda d, t, p: d(p(0.2, -0.5), p(1.0, 0.5)), lambda t, p: t.TanhTransform()),
    ("stick_breaking", lambda d, t, p: d(p(0.2, -0.5, 0.1), p(1.0, 0.5, 2.0)), lambda t, p: [t.StickBreakingTransform()]),
    ("reshape", lambda d, t, p: d(p(*range(6)), p(*[1.0] * 6)), lambda t, p: [t.ReshapeTransform((6,), (2, 3))]),
    ("decreasing", lambda d, t, p: d(p(0.2, -0.5), p(1.0, 0.5)), lambda t, p: [t.AffineTransform(0.0, -3.0)]),
    ("empty", lambda d, t, p: d(p(0.2, -0.5), p(1.0, 0.5)), lambda t, p: []),
]


def _kp(*values):
    return toolkit.tensor([float(v) for v in values], dtype=toolkit.float64)


def _tp(*values):
    return torch.tensor([float(v) for v in values], dtype=torch.float64)


@pytest.mark.parametrize(("name", "base", "chain"), CHAINS, ids=[c[0] for c in CHAINS])
def test_generic_chain_matches_torch(name, base, chain):
    mine = TransformedDistribution(base(Normal, KT, _kp), chain(KT, _kp))
    theirs = TD.TransformedDistribution(base(TD.Normal, TD.transforms, _tp), chain(TD.transforms, _tp))
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(mine.event_shape) == tuple(theirs.event_shape)
    assert repr(mine.support) == repr(theirs.support)
    torch.manual_seed(6)
    toolkit.manual_seed(6)
    expected = theirs.rsample((2,))
    assert_close(mine.rsample((2,)), expected)
    assert_close(mine.log_prob(_tk(expected)), theirs.log_prob(expected), accum=6)
    if name in ("affine_exp", "tanh", "decreasing", "empty"):
        assert_close(mine.cdf(_tk(expected)), theirs.cdf(expected))
        prob = torch.tensor([0.25, 0.75], dtype=torch.float64)
        assert_close(mine.icdf(_tk(prob)), theirs.icdf(prob))
    shape = (3,) + tuple(theirs.batch_shape)
    assert tuple(mine.expand(shape).batch_shape) == tuple(theirs.expand(shape).batch_shape)


def test_transforms_argument_is_checked_like_torch():
    base = Normal(0.0, 1.0)
    with pytest.raises(ValueError, match="transforms must be a Transform or a list of Transforms"):
        TransformedDistribution(base, [KT.ExpTransform(), 3])
    with pytest.raises(ValueError, match="transforms must be a Transform or list, but was 3"):
        TransformedDistribution(base, 3)
    with pytest.raises(ValueError, match="base_distribution needs to have shape with size at least 1"):
        TransformedDistribution(base, KT.StickBreakingTransform())


def test_cached_transform_inverts_rsample_exactly():
    mine = TransformedDistribution(Normal(_kp(0.0, 1.0), _kp(1.0, 2.0)), [KT.SigmoidTransform(cache_size=1)])
    y = mine.rsample()
    assert mine.transforms[0].inv(y) is mine.transforms[0]._cached_x_y[0]
    np.testing.assert_array_equal(mine.log_prob(y).numpy(), mine.log_prob(y).numpy())


def _kl_case(p_name, p_args, q_name, q_args):
    return pytest.param(p_name, p_args, q_name, q_args, id=f"{p_name}-{q_name}")


_A = (_t(0.5, 1.5), _t(1.2, 0.8))      # two positive parameters
_B = (_t(2.5, 3.5), _t(0.7, 1.9))
KL_CASES = [
    _kl_case("Gumbel", _A, "Gumbel", _B), _kl_case("HalfNormal", (_t(1.0, 2.0),), "HalfNormal", (_t(0.5, 3.0),)),
    _kl_case("Pareto", (_t(2.0, 0.5), _t(3.0, 2.5)), "Pareto", (_t(1.0, 1.0), _t(1.5, 2.0))),
    _kl_case("LogNormal", _A, "LogNormal", _B),
    _kl_case("Beta", _A, "Pareto", _B), _kl_case("ContinuousBernoulli", (_t(0.3, 0.6),), "Pareto", _B),
    _kl_case("Exponential", (_t(1.0, 2.0),), "Pareto", _B), _kl_case("Gamma", _A, "Pareto", _B),
    _kl_case("Laplace", _A, "Pareto", _B), _kl_case("Normal", _A, "Pareto", _B),
    _kl_case("Gumbel", _A, "Beta", _B), _kl_case("Gumbel", _A, "ContinuousBernoulli", (_t(0.3, 0.6),)),
    _kl_case("Gumbel", _A, "Exponential", (_t(1.0, 2.0),)), _kl_case("Gumbel", _A, "Gamma", _B),
    _kl_case("Gumbel", _A, "Pareto", _B), _kl_case("Gumbel", _A, "Uniform", (_t(0.0, 1.0), _t(2.0, 3.0))),
    _kl_case("Gumbel", _A, "Normal", _B), _kl_case("Normal", _A, "Gumbel", _B),
    _kl_case("Exponential", (_t(1.0, 2.0),), "Gumbel", _B), _kl_case("Gamma", _A, "Gumbel", _B),
    _kl_case("Pareto", (_t(1.0, 2.0), _t(3.0, 0.5)), "Beta", _B),
    _kl_case("Pareto", (_t(1.0, 2.0), _t(3.0, 0.5)), "ContinuousBernoulli", (_t(0.3, 0.6),)),
    _kl_case("Pareto", (_t(1.0, 2.0), _t(3.0, 0.5)), "Uniform", (_t(0.0, 1.0), _t(2.0, 3.0))),
    _kl_case("Pareto", (_t(1.0, 2.0), _t(3.0, 0.5)), "Exponential", (_t(1.0, 2.0),)),
    _kl_case("Pareto", (_t(1.0, 2.0), _t(3.0, 0.5)), "Gamma", _B),
    _kl_case("Pareto", (_t(1.0, 2.0), _t(3.0, 2.5)), "Normal", _B),
    _kl_case("Uniform", (_t(0.0, 1.0), _t(2.0, 3.0)), "Gumbel", _B),
    _kl_case("Uniform", (_t(2.0, 0.5), _t(3.0, 3.0)), "Pareto", (_t(1.0, 1.0), _t(1.5, 2.0))),
]


@pytest.mark.parametrize(("p_name", "p_args", "q_name", "q_args"), KL_CASES)
def test_kl_divergence_matches_torch(p_name, p_args, q_name, q_args):
    expected = TD.kl_divergence(getattr(TD, p_name)(*p_args), getattr(TD, q_name)(*q_args))
    p_params = [_tk(a).requires_grad_(True) for a in p_args]
    got = KD.kl_divergence(getattr(KD, p_name)(*p_params), getattr(KD, q_name)(*[_tk(a) for a in q_args]))
    assert_close(got, expected)
    finite = bool(torch.isfinite(expected).all())
    if finite:
        def kl(*params):
            return KD.kl_divergence(getattr(KD, p_name)(*params), getattr(KD, q_name)(*[_tk(a) for a in q_args]))

        assert gradcheck(kl, tuple(p_params))


def test_kl_of_transformed_needs_equal_transforms():
    p = TransformedDistribution(Normal(0.0, 1.0), [KT.ExpTransform()])
    q = TransformedDistribution(Normal(0.0, 1.0), [KT.SigmoidTransform()])
    with pytest.raises(NotImplementedError):
        KD.kl_divergence(p, q)


def _f32(*values):
    return torch.tensor(values, dtype=torch.float32)


# float32: torch's GeneralizedPareto compares the concentration with a float32 zero, so it fails for float64.
GPD_CASES = [
    pytest.param((_f32(0.1, -1.0, 0.5), _f32(2.0, 0.5, 1.0), _f32(0.4, 0.0, -0.5)), id="mixed_signs"),
    pytest.param((0.0, 1.0, 0.5), id="numbers"),
]


@pytest.mark.parametrize("args", GPD_CASES)
def test_generalized_pareto_matches_torch(args):
    mine, theirs = _mine("GeneralizedPareto")(*[_tk(a) for a in args]), TD.GeneralizedPareto(*args)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert repr(mine) == repr(theirs).replace("torch", "toolkit")
    torch.manual_seed(7)
    toolkit.manual_seed(7)
    value = theirs.sample((4,))
    assert_close(mine.sample((4,)), value)
    for method in ("log_prob", "cdf", "log_cdf", "log_survival_function"):
        assert_close(getattr(mine, method)(_tk(value)), getattr(theirs, method)(value))
    prob = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float32).reshape((3,) + (1,) * len(theirs.batch_shape))
    assert_close(mine.icdf(_tk(prob)), theirs.icdf(prob))
    for attr in ("mean", "variance", "mode", "stddev"):
        assert_close(getattr(mine, attr), getattr(theirs, attr))
    assert_close(mine.entropy(), theirs.entropy())
    assert repr(mine.support) == repr(theirs.support).replace("torch", "toolkit")
    shape = (2,) + tuple(theirs.batch_shape)
    assert tuple(mine.expand(shape).batch_shape) == tuple(theirs.expand(shape).batch_shape)


def test_generalized_pareto_rsample_gradients():
    # Away from concentration 0, where the exponential branch (constant in the concentration) takes over.
    args = [toolkit.tensor(v, dtype=toolkit.float64, requires_grad=True)
            for v in ([0.1, -1.0, 0.5], [2.0, 0.5, 1.0], [0.4, 0.2, -0.5])]
    cls = _mine("GeneralizedPareto")

    def draw(*params):
        toolkit.manual_seed(8)
        return cls(*params).rsample((2,))

    assert gradcheck(draw, tuple(args))
    value = draw(*args).detach()
    assert gradcheck(lambda *params: cls(*params, validate_args=False).log_prob(value), tuple(args))


def test_generalized_pareto_rejects_bad_scale():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        _mine("GeneralizedPareto")(0.0, -1.0, 0.5, validate_args=True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        TD.GeneralizedPareto(0.0, -1.0, 0.5, validate_args=True)
