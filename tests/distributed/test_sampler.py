"""DistributedSampler against torch's: same shards, padding, truncation and shuffling for the same seed."""

from __future__ import annotations

import pytest
import torch

from toolkit.utils.data import DataLoader, DistributedSampler


@pytest.mark.parametrize("n,replicas,drop_last,shuffle", [
    (10, 3, False, True), (10, 3, True, True), (7, 4, False, False), (2, 5, False, True), (12, 4, True, False),
    (100, 2, False, True),
])
def test_matches_torch(n, replicas, drop_last, shuffle):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=7, drop_last=drop_last)
        ref = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=7,
                                                  drop_last=drop_last)
        for epoch in (0, 3):
            ours.set_epoch(epoch)
            ref.set_epoch(epoch)
            assert list(ours) == list(ref)
            assert len(ours) == len(ref)


def test_epochs_reshuffle_and_ranks_partition():
    shards = [DistributedSampler(range(20), 4, r) for r in range(4)]
    assert sorted(i for s in shards for i in s) == list(range(20))
    first = list(shards[0])
    shards[0].set_epoch(1)
    assert list(shards[0]) != first


def test_invalid_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(5), num_replicas=3, rank=3)


def test_with_dataloader():
    loader = DataLoader(list(range(10)), batch_size=2, sampler=DistributedSampler(range(10), 2, 1, shuffle=False))
    assert [b.tolist() for b in loader] == [[1, 3], [5, 7], [9]]
