"""Samplers as ``torch.utils.data.sampler``: the order in which a DataLoader visits dataset indices.

Random samplers draw from toolkit's generator exactly as PyTorch draws from its own, so after the same seed they
yield the same order::

    toolkit.manual_seed(0); list(RandomSampler(range(5)))   # == torch.manual_seed(0); list(torch's RandomSampler)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import toolkit

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)


def _toolkit():
    return toolkit


class Sampler(Generic[_T_co]):
    """Base class: subclasses define ``__iter__`` over indices (or lists of indices) and usually ``__len__``."""

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation (or ``num_samples`` draws with replacement), reshuffled at every iteration.

    Without a generator each iteration seeds a fresh one from the default generator, as PyTorch does.
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        tk = _toolkit()
        n = len(self.data_source)
        if self.generator is None:
            seed = int(tk.empty((), dtype=tk.int64).random_().item())
            generator = tk.Generator()
            generator.manual_seed(seed)
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from tk.randint(high=n, size=(32,), dtype=tk.int64, generator=generator).tolist()
            yield from tk.randint(high=n, size=(self.num_samples % 32,), dtype=tk.int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from tk.randperm(n, generator=generator).tolist()
            yield from tk.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order, without replacement."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _toolkit().randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (``multinomial``)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        tk = _toolkit()
        weights_tensor = tk.as_tensor(weights, dtype=tk.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = _toolkit().multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group another sampler's indices into lists of ``batch_size`` (the last one shorter unless ``drop_last``)."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[sampler_iter] * self.batch_size):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
