"""``DistributedSampler``: each process of a distributed job loads its own share of the dataset.

It shuffles exactly as PyTorch's does (a generator seeded with ``seed + epoch`` and ``randperm``), so a
toolkit job and a torch job with the same seed visit the same indices on each rank::

    sampler = DistributedSampler(dataset)          # rank and world size from the default process group
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)                   # a new order each epoch
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TypeVar

import toolkit

from ... import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler"]

_T_co = TypeVar("_T_co", covariant=True)


class DistributedSampler(Sampler[_T_co]):
    """Indices ``rank, rank + num_replicas, ...`` of a (shuffled, padded or truncated) permutation."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[_T_co]:
        if self.shuffle:
            g = toolkit.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = toolkit.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Reshuffle differently in the next iteration (call it at the start of each epoch on every rank)."""
        self.epoch = epoch
