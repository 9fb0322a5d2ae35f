"""toolkit.distributions.transforms and constraint_registry against torch's: values, inverses,
log-det-Jacobians, shapes, domains, flags, caching, equality, gradients, and biject_to/transform_to."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from tests.conftest import assert_close
from toolkit.autograd import gradcheck
from toolkit.distributions import constraint_registry as KR
from toolkit.distributions import constraints as KC
from toolkit.distributions import transforms as KT
from toolkit.distributions.normal import Normal

torch = pytest.importorskip("torch")
TT = torch.distributions.transforms
TC = torch.distributions.constraints


def _tk(a):
    return toolkit.tensor(a.detach().numpy())


# (id, builder taking the transforms module, input shape, input kind)
CASES = [
    ("exp", lambda m: m.ExpTransform(), (3, 4), "real"),
    ("power", lambda m: m.PowerTransform(2.5), (3,), "positive"),
    ("power_tensor", lambda m, t=None: m.PowerTransform(_param(m, [0.5, 2.0, -1.5])), (2, 3), "positive"),
    ("sigmoid", lambda m: m.SigmoidTransform(), (5,), "real"),
    ("softplus", lambda m: m.SoftplusTransform(), (5,), "real"),
    ("tanh", lambda m: m.TanhTransform(), (5,), "real"),
    ("abs", lambda m: m.AbsTransform(), (3,), "real"),
    ("affine", lambda m: m.AffineTransform(1.0, -2.0), (4,), "real"),
    ("affine_tensor", lambda m: m.AffineTransform(_param(m, [0.5, -1.0]), _param(m, [2.0, -0.5])), (3, 2), "real"),
    ("affine_event", lambda m: m.AffineTransform(1.0, 3.0, event_dim=1), (2, 4), "real"),
    ("affine_tensor_event2", lambda m: m.AffineTransform(0.0, _param(m, [[1.0, 2.0], [3.0, 4.0]]), event_dim=2),
     (3, 2, 2), "real"),
    ("stick_breaking", lambda m: m.StickBreakingTransform(), (2, 4), "real"),
    ("softmax", lambda m: m.SoftmaxTransform(), (2, 4), "real"),
    ("corr_cholesky", lambda m: m.CorrCholeskyTransform(), (2, 6), "real"),
    ("corr_cholesky_2x2", lambda m: m.CorrCholeskyTransform(), (1,), "real"),
    ("lower_cholesky", lambda m: m.LowerCholeskyTransform(), (2, 3, 3), "real"),
    ("positive_definite", lambda m: m.PositiveDefiniteTransform(), (3, 3), "real"),
    ("compose", lambda m: m.ComposeTransform([m.AffineTransform(0.5, 2.0), m.ExpTransform()]), (3,), "real"),
    ("compose_event", lambda m: m.ComposeTransform([m.ExpTransform(), m.StickBreakingTransform()]), (2, 3), "real"),
    ("identity", lambda m: m.identity_transform, (3,), "real"),
    ("independent", lambda m: m.IndependentTransform(m.ExpTransform(), 1), (2, 3), "real"),
    ("reshape", lambda m: m.ReshapeTransform((6,), (2, 3)), (4, 6), "real"),
    ("cat", lambda m: m.CatTransform([m.ExpTransform(), m.AffineTransform(0, 2.0)], dim=-1, lengths=[2, 3]),
     (2, 5), "real"),
    ("cat_dim0", lambda m: m.CatTransform([m.ExpTransform(), m.TanhTransform()], dim=0, lengths=[1, 2]),
     (3, 2), "real"),
    ("cat_event", lambda m: m.CatTransform([m.IndependentTransform(m.ExpTransform(), 1), m.SigmoidTransform()],
                                           dim=0, lengths=[1, 1]), (2, 3), "real"),
    ("stack", lambda m: m.StackTransform([m.ExpTransform(), m.SigmoidTransform()], dim=-1), (3, 2), "real"),
    ("inverse_exp", lambda m: m.ExpTransform().inv, (3,), "positive"),
    ("inverse_sigmoid", lambda m: m.SigmoidTransform().inv, (3,), "unit"),
]


def _param(module, values):
    """A float64 tensor parameter for the module's framework."""
    if module is KT:
        return toolkit.tensor(values, dtype=toolkit.float64)
    return torch.tensor(values, dtype=torch.float64)


def _input(shape, kind, seed=0):
    gen = np.random.default_rng(seed)
    x = gen.standard_normal(shape)
    if kind == "positive":
        x = np.abs(x) + 0.1
    elif kind == "unit":
        x = 1 / (1 + np.exp(-x))
    return torch.tensor(x, dtype=torch.float64)


def _pair(case):
    _, build, shape, kind = case
    return build(KT), build(TT), _input(shape, kind)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_forward_inverse_and_log_det_match_torch(case):
    mine, theirs, x = _pair(case)
    y = theirs(x)
    assert_close(mine(_tk(x)), y)
    assert_close(mine.inv(_tk(y)), theirs.inv(y))
    try:
        expected = theirs.log_abs_det_jacobian(x, y)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            mine.log_abs_det_jacobian(_tk(x), _tk(y))
        return
    assert_close(mine.log_abs_det_jacobian(_tk(x), _tk(y)), expected, accum=max(1, x.numel()))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_structure_matches_torch(case):
    mine, theirs, x = _pair(case)
    assert repr(mine) == repr(theirs)
    assert repr(mine.domain) == repr(theirs.domain)
    assert repr(mine.codomain) == repr(theirs.codomain)
    assert mine.domain.event_dim == theirs.domain.event_dim
    assert mine.codomain.event_dim == theirs.codomain.event_dim
    assert mine.bijective == theirs.bijective
    y_shape = tuple(theirs.forward_shape(x.shape))
    assert tuple(mine.forward_shape(toolkit.Size(x.shape))) == y_shape
    assert tuple(mine.inverse_shape(toolkit.Size(y_shape))) == tuple(theirs.inverse_shape(torch.Size(y_shape)))
    try:
        expected_sign = theirs.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            _ = mine.sign
        return
    got_sign = mine.sign
    if isinstance(expected_sign, torch.Tensor):
        np.testing.assert_array_equal(got_sign.numpy(), expected_sign.numpy())
    else:
        assert got_sign == expected_sign


_DIFFERENTIABLE = [c for c in CASES if c[0] not in ("abs", "softmax", "identity")]


@pytest.mark.parametrize("case", _DIFFERENTIABLE, ids=[c[0] for c in _DIFFERENTIABLE])
def test_gradcheck_forward_and_log_det(case):
    mine, theirs, x = _pair(case)
    has_log_det = not isinstance(theirs, (TT.LowerCholeskyTransform, TT.PositiveDefiniteTransform))
    x = _tk(x).requires_grad_(True)
    assert gradcheck(lambda v: mine(v), (x,))
    if has_log_det:
        assert gradcheck(lambda v: mine.log_abs_det_jacobian(v, mine(v)), (x,))


@pytest.mark.parametrize("case", _DIFFERENTIABLE, ids=[c[0] for c in _DIFFERENTIABLE])
def test_gradcheck_inverse(case):
    mine, theirs, x = _pair(case)
    y = _tk(theirs(x)).requires_grad_(True)
    assert gradcheck(lambda v: mine.inv(v), (y,))


def test_public_names_match_torch():
    assert sorted(KT.__all__) == sorted(TT.__all__)


def test_cache_size_one_returns_the_cached_pair():
    t = KT.ExpTransform(cache_size=1)
    x = toolkit.tensor([0.5, 1.0])
    y = t(x)
    assert t(x) is y
    assert t.inv(y) is x
    assert t.with_cache(1) is t and t.with_cache(0)._cache_size == 0
    fresh = KT.ExpTransform()
    assert fresh.inv(fresh(x)) is not x
    composed = KT.ComposeTransform([KT.ExpTransform(), KT.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in composed.parts)
    z = composed(x)
    assert composed.inv(z) is x


@pytest.mark.parametrize("cache_size", [2, -1])
def test_bad_cache_size_is_rejected_like_torch(cache_size):
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        KT.ExpTransform(cache_size=cache_size)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        TT.ExpTransform(cache_size=cache_size)


def test_with_cache_of_a_custom_init_is_not_implemented():
    class Scaled(KT.Transform):
        def __init__(self, k):
            super().__init__()
            self.k = k

    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        Scaled(2).with_cache(1)


def test_equality_rules_match_torch():
    for m in (KT, TT):
        assert m.ExpTransform() == m.ExpTransform()
        assert m.ExpTransform().inv == m.ExpTransform().inv
        assert m.ExpTransform() != m.SigmoidTransform()
        assert m.AffineTransform(1.0, 2.0) == m.AffineTransform(1.0, 2.0)
        assert m.AffineTransform(1.0, 2.0) != m.AffineTransform(1.0, 3.0)
        assert m.PowerTransform(2.0) == m.PowerTransform(2.0)
        assert m.ComposeTransform([m.ExpTransform()]) == m.ComposeTransform([m.ExpTransform()])
        assert m.CorrCholeskyTransform() != m.CorrCholeskyTransform()  # identity equality, as torch
    assert KT.AffineTransform(_param(KT, [1.0]), 2.0) == KT.AffineTransform(_param(KT, [1.0]), 2.0)
    with pytest.raises(TypeError):
        hash(KT.ExpTransform())


def test_inverse_of_inverse_and_compose_inverse():
    t = KT.ExpTransform()
    assert t.inv.inv is t
    c = KT.ComposeTransform([KT.ExpTransform(), KT.AffineTransform(1.0, 2.0)])
    assert c.inv.inv is c
    assert repr(c.inv) == repr(TT.ComposeTransform([TT.ExpTransform(), TT.AffineTransform(1.0, 2.0)]).inv)


def test_event_dim_is_ambiguous_when_domain_and_codomain_differ():
    with pytest.raises(ValueError, match="Please use either .domain.event_dim or .codomain.event_dim"):
        _ = KT.CorrCholeskyTransform().event_dim
    assert KT.StickBreakingTransform().event_dim == 1


@pytest.mark.parametrize(("build", "shape", "message"), [
    (lambda m: m.ReshapeTransform((6,), (2, 3)), (4,), "Shape mismatch"),
    (lambda m: m.ReshapeTransform((2, 3), (6,)), (3,), "Too few dimensions on input"),
    (lambda m: m.CorrCholeskyTransform(), (4,), "Input is not a flattened lower-diagonal number"),
    (lambda m: m.CorrCholeskyTransform(), (), "Too few dimensions on input"),
    (lambda m: m.StickBreakingTransform(), (), "Too few dimensions on input"),
    (lambda m: m.SoftmaxTransform(), (), "Too few dimensions on input"),
])
def test_forward_shape_errors_match_torch(build, shape, message):
    with pytest.raises(ValueError, match=message):
        build(KT).forward_shape(toolkit.Size(shape))
    with pytest.raises(ValueError, match=message):
        build(TT).forward_shape(torch.Size(shape))


def test_reshape_needs_equal_numel():
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        KT.ReshapeTransform((2, 3), (5,))


def test_cumulative_distribution_transform_uses_cdf_icdf_and_log_prob():
    mine = KT.CumulativeDistributionTransform(Normal(toolkit.tensor(0.5, dtype=toolkit.float64), 2.0))
    theirs = TT.CumulativeDistributionTransform(torch.distributions.Normal(torch.tensor(0.5, dtype=torch.float64), 2.0))
    x = _input((4,), "real")
    y = theirs(x)
    assert_close(mine(_tk(x)), y)
    assert_close(mine.inv(_tk(y)), theirs.inv(y))
    assert_close(mine.log_abs_det_jacobian(_tk(x), _tk(y)), theirs.log_abs_det_jacobian(x, y))
    assert repr(mine.domain) == repr(theirs.domain) and mine.sign == 1 and mine.bijective
    assert mine.with_cache(1)._cache_size == 1


# Constraints biject_to / transform_to know, as builders over (constraints module).
REGISTRY_CASES = [
    ("real", lambda c: c.real, (3,)),
    ("positive", lambda c: c.positive, (3,)),
    ("nonnegative", lambda c: c.nonnegative, (3,)),
    ("greater_than", lambda c: c.greater_than(2.0), (3,)),
    ("greater_than_eq", lambda c: c.greater_than_eq(-1.0), (3,)),
    ("less_than", lambda c: c.less_than(3.0), (3,)),
    ("unit_interval", lambda c: c.unit_interval, (3,)),
    ("interval", lambda c: c.interval(-1.0, 2.0), (3,)),
    ("half_open_interval", lambda c: c.half_open_interval(0, 1), (3,)),
    ("simplex", lambda c: c.simplex, (2, 3)),
    ("corr_cholesky", lambda c: c.corr_cholesky, (2, 3)),
    ("real_vector", lambda c: c.real_vector, (2, 3)),
    ("independent", lambda c: c.independent(c.positive, 2), (2, 3)),
    ("cat", lambda c: c.cat([c.positive, c.real], 0, [1, 2]), (3, 2)),
    ("stack", lambda c: c.stack([c.positive, c.unit_interval], -1), (3, 2)),
    ("lower_cholesky", lambda c: c.lower_cholesky, (2, 2)),
    ("positive_definite", lambda c: c.positive_definite, (2, 2)),
    ("positive_semidefinite", lambda c: c.positive_semidefinite, (2, 2)),
]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize(("name", "build", "shape"), REGISTRY_CASES, ids=[c[0] for c in REGISTRY_CASES])
def test_registry_matches_torch(registry, name, build, shape):
    mine_registry = getattr(KR, registry)
    theirs_registry = getattr(torch.distributions, registry)
    constraint, expected_constraint = build(KC), build(TC)
    try:
        theirs = theirs_registry(expected_constraint)
    except NotImplementedError as err:
        with pytest.raises(NotImplementedError, match=str(err)):
            mine_registry(constraint)
        return
    mine = mine_registry(constraint)
    assert repr(mine) == repr(theirs)
    x = _input(shape, "real")
    y = theirs(x)
    assert_close(mine(_tk(x)), y)
    assert bool(constraint.check(mine(_tk(x))).all())


def test_registry_registration_rules():
    registry = KR.ConstraintRegistry()
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        registry.register(3, lambda c: c)
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        registry(KC.real)

    @registry.register(KC.positive)
    def _factory(constraint):
        return KT.ExpTransform()

    assert isinstance(registry(KC.greater_than(5.0)), KT.ExpTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _Dependent constraints"):
        KR.biject_to(KC.dependent)
