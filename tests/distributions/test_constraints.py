"""toolkit.distributions.constraints against torch.distributions.constraints: check results, flags,
reprs and errors, case by case."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.distributions import constraints as K

torch = pytest.importorskip("torch")
T = torch.distributions.constraints


def _both(make):
    """The constraint ``make(module)`` builds, from toolkit's module and torch's."""
    return make(K), make(T)


_MATS = np.array([
    [[1.0, 0.0], [0.5, 2.0]],       # lower Cholesky
    [[1.0, 0.3], [0.3, 2.0]],       # symmetric positive definite
    [[1.0, 2.0], [2.0, 1.0]],       # symmetric indefinite
    [[0.0, 0.0], [0.0, 0.0]],       # positive semidefinite
    [[0.8, 0.0], [0.6, 0.8]],       # correlation Cholesky factor
    [[-1.0, 0.0], [0.0, 1.0]],      # negative diagonal
])

CASES = [
    ("real", lambda m: m.real, [0.0, -np.inf, np.nan, 3.5]),
    ("positive", lambda m: m.positive, [0.0, 1e-30, -1.0, np.inf]),
    ("nonnegative", lambda m: m.nonnegative, [0.0, -1e-30, 2.0]),
    ("greater_than", lambda m: m.greater_than(1.5), [1.5, 1.6, 0.0]),
    ("greater_than_eq", lambda m: m.greater_than_eq(1.5), [1.5, 1.4]),
    ("less_than", lambda m: m.less_than(-1.0), [-1.0, -2.0, 0.0]),
    ("unit_interval", lambda m: m.unit_interval, [0.0, 1.0, 1.01, -0.01]),
    ("interval", lambda m: m.interval(-2.0, 3.0), [-2.0, 3.0, 3.5]),
    ("half_open_interval", lambda m: m.half_open_interval(-2.0, 3.0), [-2.0, 3.0, 2.9]),
    ("boolean", lambda m: m.boolean, [0.0, 1.0, 0.5, 2.0]),
    ("nonnegative_integer", lambda m: m.nonnegative_integer, [0.0, 3.0, -1.0, 2.5]),
    ("positive_integer", lambda m: m.positive_integer, [0.0, 1.0, 7.0, 1.5]),
    ("integer_interval", lambda m: m.integer_interval(1, 4), [0.0, 1.0, 4.0, 5.0, 2.5]),
    ("simplex", lambda m: m.simplex, [[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1], [1.0, 0.0]]),
    ("one_hot", lambda m: m.one_hot, [[0.0, 1.0], [1.0, 1.0], [0.5, 0.5], [0.0, 0.0]]),
    ("multinomial", lambda m: m.multinomial(3), [[1.0, 2.0], [2.0, 2.0], [-1.0, 1.0]]),
    ("real_vector", lambda m: m.real_vector, [[0.0, 1.0], [np.nan, 0.0]]),
    ("independent", lambda m: m.independent(m.positive, 2), [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 0.0]]]),
    ("lower_triangular", lambda m: m.lower_triangular, _MATS),
    ("lower_cholesky", lambda m: m.lower_cholesky, _MATS),
    ("corr_cholesky", lambda m: m.corr_cholesky, _MATS),
    ("square", lambda m: m.square, _MATS),
    ("symmetric", lambda m: m.symmetric, _MATS),
    ("positive_semidefinite", lambda m: m.positive_semidefinite, _MATS),
    ("positive_definite", lambda m: m.positive_definite, _MATS),
    ("cat", lambda m: m.cat([m.positive, m.real], dim=-1, lengths=[1, 2]), [[1.0, -1.0, 2.0], [-1.0, 0.0, np.nan]]),
    ("stack", lambda m: m.stack([m.positive, m.unit_interval], dim=-1), [[1.0, 0.5], [-1.0, 2.0], [3.0, 1.0]]),
    ("mixture", lambda m: m.MixtureSameFamilyConstraint(m.positive), [[1.0, 2.0], [0.0, 1.0]]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "make", "values"), CASES, ids=[c[0] for c in CASES])
def test_check_matches_torch(name, make, values, dtype):
    mine, theirs = _both(make)
    value = np.asarray(values, dtype=dtype)
    got = mine.check(toolkit.tensor(value))
    expected = theirs.check(torch.tensor(value))
    assert got.dtype == toolkit.bool
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize(("name", "make", "values"), CASES, ids=[c[0] for c in CASES])
def test_flags_and_repr_match_torch(name, make, values):
    mine, theirs = _both(make)
    assert mine.is_discrete == theirs.is_discrete
    assert mine.event_dim == theirs.event_dim
    assert repr(mine) == repr(theirs)


def test_public_names_match_torch():
    assert sorted(K.__all__) == sorted(T.__all__)
    for name in T.__all__:
        assert hasattr(K, name), name


@pytest.mark.parametrize("dim", [-3, -2, -1, 0, 1])
def test_stack_event_dim_counts_a_stacking_dim_inside_the_event(dim):
    mine = K.stack([K.simplex, K.simplex], dim=dim)
    assert mine.event_dim == T.stack([T.simplex, T.simplex], dim=dim).event_dim
    assert mine.event_dim == (2 if dim == -2 or dim == -3 else 1)


def test_dependent_cannot_be_checked_or_inspected():
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        K.dependent.check(toolkit.zeros(2))
    with pytest.raises(NotImplementedError):
        _ = K.dependent.event_dim
    with pytest.raises(NotImplementedError):
        _ = K.dependent.is_discrete
    fixed = K.dependent(is_discrete=True, event_dim=1)
    assert (fixed.is_discrete, fixed.event_dim) == (True, 1)
    assert K.is_dependent(fixed) and K.is_dependent(K.dependent) and not K.is_dependent(K.real)
    assert repr(K.dependent) == repr(T.dependent)


def test_dependent_property_reads_as_constraint_on_class_and_value_on_instance():
    class Box:
        def __init__(self, low):
            self.low = low

        @K.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return K.greater_than(self.low)

    assert K.is_dependent(Box.support)
    assert Box.support.event_dim == 0 and Box.support.is_discrete is False
    assert Box(2.0).support.lower_bound == 2.0
    plain = K.dependent_property(lambda self: 1)
    assert Box.__dict__["support"] is not plain
    with pytest.raises(NotImplementedError):
        _ = plain.event_dim


def test_independent_needs_enough_dims():
    constraint = K.independent(K.real, 2)
    with pytest.raises(ValueError, match=r"Expected value.dim\(\) >= 2 but got 1"):
        constraint.check(toolkit.zeros(3))
    with pytest.raises(ValueError, match=r"Expected value.dim\(\) >= 2 but got 1"):
        T.independent(T.real, 2).check(torch.zeros(3))


def test_check_broadcasts_tensor_bounds():
    low = np.array([0.0, 1.0, 2.0])
    value = np.array([[0.5, 0.5, 2.5], [1.5, 1.5, 1.5]])
    got = K.interval(toolkit.tensor(low), toolkit.tensor(low + 1)).check(toolkit.tensor(value))
    expected = T.interval(torch.tensor(low), torch.tensor(low + 1)).check(torch.tensor(value))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
