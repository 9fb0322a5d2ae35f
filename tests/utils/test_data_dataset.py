"""Datasets and random_split against torch.utils.data."""

from __future__ import annotations

import pytest
import torch
import torch.utils.data as tud

import toolkit
import toolkit.utils.data as kud


class _Iter(kud.IterableDataset):
    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))

    def __len__(self) -> int:
        return self.end - self.start


def test_tensor_dataset_items_and_len():
    x = toolkit.arange(12.0).reshape(6, 2)
    y = toolkit.arange(6)
    ds = kud.TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    assert a.tolist() == [8.0, 9.0] and b.item() == 4
    sl = ds[1:3]
    assert sl[0].shape == (2, 2) and sl[1].tolist() == [1, 2]


def test_tensor_dataset_size_mismatch_as_torch():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tud.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        kud.TensorDataset(toolkit.zeros(3), toolkit.zeros(4))


def test_subset_and_getitems():
    ds = kud.Subset(list(range(10, 20)), [3, 1, 7])
    assert len(ds) == 3
    assert [ds[i] for i in range(3)] == [13, 11, 17]
    assert ds.__getitems__([2, 0]) == [17, 13]


def test_concat_dataset_indices_and_errors():
    ds = kud.ConcatDataset([list(range(3)), list(range(10, 14))])
    tds = tud.ConcatDataset([list(range(3)), list(range(10, 14))])
    assert len(ds) == len(tds) == 7
    assert ds.cumulative_sizes == tds.cumulative_sizes == [3, 7]
    assert [ds[i] for i in range(-7, 7)] == [tds[i] for i in range(-7, 7)]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-8]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        kud.ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        kud.ConcatDataset([_Iter(0, 2)])
    both = kud.TensorDataset(toolkit.arange(2)) + kud.TensorDataset(toolkit.arange(3))
    assert isinstance(both, kud.ConcatDataset) and len(both) == 5


def test_chain_and_stack_datasets():
    chained = _Iter(0, 3) + _Iter(5, 7)
    assert isinstance(chained, kud.ChainDataset)
    assert list(chained) == [0, 1, 2, 5, 6] and len(chained) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(kud.ChainDataset([[1, 2]]))
    st = kud.StackDataset([1, 2, 3], ["a", "b", "c"])
    assert st[1] == (2, "b") and len(st) == 3
    assert kud.StackDataset(x=[1, 2], y=[3, 4])[0] == {"x": 1, "y": 3}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        kud.StackDataset([1, 2], [1])
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        kud.StackDataset()


def test_base_dataset_getitem_not_implemented():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        kud.Dataset()[0]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [1, 2, 3, 4]])
@pytest.mark.parametrize("seed", [0, 42])
def test_random_split_matches_torch_with_generator(lengths, seed):
    ours = kud.random_split(range(10), lengths, generator=toolkit.Generator().manual_seed(seed))
    theirs = tud.random_split(range(10), lengths, generator=torch.Generator().manual_seed(seed))
    assert [list(s.indices) for s in ours] == [list(s.indices) for s in theirs]
    assert [list(s) for s in ours] == [list(s) for s in theirs]


def test_random_split_default_generator_follows_manual_seed():
    toolkit.manual_seed(7)
    torch.manual_seed(7)
    ours = kud.random_split(range(30), [0.3, 0.3, 0.4])
    theirs = tud.random_split(range(30), [0.3, 0.3, 0.4])
    assert [s.indices for s in ours] == [s.indices for s in theirs]
    assert [len(s) for s in ours] == [9, 9, 12]


def test_random_split_fraction_remainder_round_robin():
    ours = kud.random_split(range(11), [0.5, 0.5], generator=toolkit.Generator().manual_seed(1))
    theirs = tud.random_split(range(11), [0.5, 0.5], generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in ours] == [len(s) for s in theirs] == [6, 5]


def test_random_split_errors_and_warning():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        kud.random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        kud.random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        kud.random_split(range(2), [0.9, 0.1])
