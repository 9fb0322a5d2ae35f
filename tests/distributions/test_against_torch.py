"""Every distribution of ``cases_a`` against its PyTorch twin: shapes, samples under the same seed,
log_prob, cdf/icdf, moments, entropy, enumerate_support and expand."""

from __future__ import annotations

import math

import pytest

import toolkit
from tests.conftest import assert_close
from tests.distributions.cases_a import CASES
from tests.distributions.pairs_a import build, to_toolkit_value

torch = pytest.importorskip("torch")

IDS = [c[0] for c in CASES]


def _same_seed_samples(d, dt, shape=(5,), seed=7):
    toolkit.manual_seed(seed)
    ours = d.sample(shape)
    torch.manual_seed(seed)
    theirs = dt.sample(shape)
    return ours, theirs


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shapes_and_flags(case):
    d, dt, _, _ = build(case)
    assert tuple(d.batch_shape) == tuple(dt.batch_shape)
    assert tuple(d.event_shape) == tuple(dt.event_shape)
    assert d.has_rsample == dt.has_rsample
    assert d.has_enumerate_support == dt.has_enumerate_support
    assert type(d).__name__ == type(dt).__name__
    assert sorted(d.arg_constraints) == sorted(dt.arg_constraints)
    assert repr(d.support).replace("toolkit.", "torch.") == repr(dt.support)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sample_same_seed(case, dtype):
    d, dt, _, _ = build(case, dtype=dtype)
    ours, theirs = _same_seed_samples(d, dt)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob(case):
    d, dt, _, _ = build(case)
    torch.manual_seed(3)
    value = dt.sample((4,))
    ours = d.log_prob(to_toolkit_value(value))
    assert_close(ours, dt.log_prob(value), accum=max(1, int(math.prod(dt.event_shape))))


def _attr_or_error(dist, name):
    try:
        value = getattr(dist, name)
        return value() if callable(value) else value
    except NotImplementedError:
        return NotImplementedError


@pytest.mark.parametrize("name", ["mean", "mode", "variance", "stddev", "entropy", "perplexity"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_moments_and_entropy(case, name):
    d, dt, _, _ = build(case)
    expected = _attr_or_error(dt, name)
    actual = _attr_or_error(d, name)
    if expected is NotImplementedError:
        assert actual is NotImplementedError
        return
    assert actual is not NotImplementedError
    # sums over the event (entropies of vectors) and over Binomial/Multinomial supports accumulate
    assert_close(actual, expected, accum=16)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cdf_icdf(case):
    d, dt, _, _ = build(case)
    torch.manual_seed(5)
    value = dt.sample((3,))
    try:
        expected = dt.cdf(value)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            d.cdf(to_toolkit_value(value))
    else:
        assert_close(d.cdf(to_toolkit_value(value)), expected)
    if dt.event_shape:
        return
    batch = tuple(dt.batch_shape)
    q = torch.tensor([0.1, 0.5, 0.9]).reshape((3,) + (1,) * len(batch)).expand((3,) + batch)
    try:
        expected = dt.icdf(q)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            d.icdf(to_toolkit_value(q))
    else:
        assert_close(d.icdf(to_toolkit_value(q.contiguous())), expected)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_enumerate_support(case):
    d, dt, _, _ = build(case)
    if not dt.has_enumerate_support:
        with pytest.raises(NotImplementedError):
            d.enumerate_support()
        return
    for expand in (True, False):
        try:
            expected = dt.enumerate_support(expand)
        except NotImplementedError as e:
            with pytest.raises(NotImplementedError, match=str(e).replace("`", ".")):
                d.enumerate_support(expand)
        else:
            assert_close(d.enumerate_support(expand), expected)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expand(case):
    d, dt, _, _ = build(case)
    shape = (2,) + tuple(dt.batch_shape)
    de, dte = d.expand(shape), dt.expand(shape)
    assert type(de) is type(d)
    assert tuple(de.batch_shape) == tuple(dte.batch_shape) and tuple(de.event_shape) == tuple(dte.event_shape)
    ours, theirs = _same_seed_samples(de, dte, shape=(3,))
    assert_close(ours, theirs)
    assert_close(de.log_prob(to_toolkit_value(theirs)), dte.log_prob(theirs),
                 accum=max(1, int(math.prod(dt.event_shape))))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_repr(case):
    d, dt, _, _ = build(case)
    assert repr(d).replace("toolkit.", "torch.") == repr(dt)
