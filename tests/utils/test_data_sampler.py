"""Samplers against torch.utils.data: the same seed gives the same order."""

from __future__ import annotations

import pytest
import torch
import torch.utils.data as tud

import toolkit
import toolkit.utils.data as kud


def _both(seed: int):
    return toolkit.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


def test_sequential_sampler():
    s = kud.SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


@pytest.mark.parametrize("n", [1, 7, 40])
@pytest.mark.parametrize("seed", [0, 123])
def test_random_sampler_global_seed_matches_torch(n, seed):
    toolkit.manual_seed(seed)
    torch.manual_seed(seed)
    ours, theirs = kud.RandomSampler(range(n)), tud.RandomSampler(range(n))
    for _ in range(2):  # reshuffled each epoch, from the global generator
        assert list(ours) == list(theirs)
    # the global generator advanced identically
    assert toolkit.rand(3).tolist() == pytest.approx(torch.rand(3).tolist())


@pytest.mark.parametrize(
    "kwargs", [{}, {"num_samples": 25}, {"num_samples": 3}, {"replacement": True},
               {"replacement": True, "num_samples": 70}],
)
def test_random_sampler_generator_matches_torch(kwargs):
    g, tg = _both(5)
    ours, theirs = kud.RandomSampler(range(10), generator=g, **kwargs), tud.RandomSampler(
        range(10), generator=tg, **kwargs)
    assert len(ours) == len(theirs)
    assert list(ours) == list(theirs)
    assert list(ours) == list(theirs)


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        kud.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        kud.RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        kud.RandomSampler([])


def test_subset_random_sampler_matches_torch():
    g, tg = _both(3)
    idx = [10, 20, 30, 40, 50, 60]
    ours, theirs = kud.SubsetRandomSampler(idx, generator=g), tud.SubsetRandomSampler(idx, generator=tg)
    assert list(ours) == list(theirs) and sorted(ours) == idx and len(ours) == 6


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler_matches_torch(replacement):
    w = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    g, tg = _both(11)
    ours = kud.WeightedRandomSampler(w, 5, replacement=replacement, generator=g)
    theirs = tud.WeightedRandomSampler(w, 5, replacement=replacement, generator=tg)
    assert ours.weights.dtype == toolkit.float64 and len(ours) == 5
    assert list(ours) == list(theirs)
    toolkit.manual_seed(2)
    torch.manual_seed(2)
    assert list(kud.WeightedRandomSampler(w, 9)) == list(tud.WeightedRandomSampler(w, 9))


def test_weighted_random_sampler_errors():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=True"):
        kud.WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=0"):
        kud.WeightedRandomSampler([1.0], 1, replacement=0)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(2, 1\)"):
        kud.WeightedRandomSampler([[1.0], [2.0]], 1)


@pytest.mark.parametrize("drop_last", [True, False])
@pytest.mark.parametrize("batch_size", [1, 3, 4, 12])
def test_batch_sampler_matches_torch(batch_size, drop_last):
    ours = kud.BatchSampler(kud.SequentialSampler(range(10)), batch_size, drop_last)
    theirs = tud.BatchSampler(tud.SequentialSampler(range(10)), batch_size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


def test_batch_sampler_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        kud.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=True"):
        kud.BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        kud.BatchSampler(range(3), 2, 1)


def test_sampler_base_is_abstract():
    with pytest.raises(NotImplementedError):
        iter(kud.Sampler())
