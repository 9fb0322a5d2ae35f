"""DataLoader in the main process (num_workers=0) against torch.utils.data.DataLoader: arguments, len, batches."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import toolkit
import toolkit.utils.data as kud


class Squares(kud.Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return {"i": i, "sq": np.array([i * i], dtype=np.float32), "name": f"s{i}"}


class Stream(kud.IterableDataset):
    def __init__(self, n: int, length: int | None = None) -> None:
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self) -> int:
        return self.length if self.length is not None else self.n


def _pair(n: int = 10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n)
    return kud.TensorDataset(toolkit.tensor(x), toolkit.tensor(y)), tud.TensorDataset(torch.tensor(x),
                                                                                       torch.tensor(y))


def _batches(loader):
    return [[t.tolist() for t in b] for b in loader]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_workers": -1}, "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."),
        ({"timeout": -1}, "timeout option should be non-negative"),
        ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in multiprocessing.let num_workers"),
        ({"num_workers": 1, "prefetch_factor": -1}, "prefetch_factor option should be non-negative"),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"sampler": [0, 1], "shuffle": True}, "sampler option is mutually exclusive with shuffle"),
        ({"batch_sampler": [[0, 1]], "batch_size": 2},
         "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
        ({"batch_sampler": [[0, 1]], "shuffle": True}, "batch_sampler option is mutually exclusive"),
        ({"batch_sampler": [[0, 1]], "sampler": [0]}, "batch_sampler option is mutually exclusive"),
        ({"batch_sampler": [[0, 1]], "drop_last": True}, "batch_sampler option is mutually exclusive"),
        ({"batch_size": None, "drop_last": True},
         "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
        ({"multiprocessing_context": "fork"}, "multiprocessing_context can only be used with multi-process loading"),
        ({"num_workers": 1, "multiprocessing_context": "nope"},
         "multiprocessing_context option should specify a valid start method in"),
    ],
)
def test_argument_errors_match_torch(kwargs, match):
    ds, tds = _pair()
    with pytest.raises(ValueError, match=match):
        tud.DataLoader(tds, **kwargs)
    with pytest.raises(ValueError, match=match):
        kud.DataLoader(ds, **kwargs)


def test_iterable_dataset_argument_errors():
    for kwargs, match in [({"shuffle": True}, "expected unspecified shuffle option, but got shuffle=True"),
                          ({"sampler": [0]}, r"expected unspecified sampler option, but got sampler=\[0\]"),
                          ({"batch_sampler": [[0]]}, "expected unspecified batch_sampler option")]:
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: " + match):
            kud.DataLoader(Stream(3), **kwargs)


def test_multiprocessing_context_type_error():
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid context object"):
        kud.DataLoader([1], num_workers=1, multiprocessing_context=3)


def test_attributes_frozen_after_init():
    loader = kud.DataLoader([1, 2, 3])
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 2
    loader.num_workers = 0  # allowed, as in torch
    assert loader.prefetch_factor is None and loader.batch_size == 1 and loader.drop_last is False


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (10, True), (11, True)])
def test_len_and_batches_match_torch(batch_size, drop_last):
    ds, tds = _pair()
    ours = kud.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
    theirs = tud.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert _batches(ours) == _batches(theirs)


@pytest.mark.parametrize("seed", [0, 1, 31])
def test_shuffle_with_global_seed_matches_torch_over_epochs(seed):
    ds, tds = _pair(13)
    toolkit.manual_seed(seed)
    torch.manual_seed(seed)
    ours = kud.DataLoader(ds, batch_size=4, shuffle=True)
    theirs = tud.DataLoader(tds, batch_size=4, shuffle=True)
    for _ in range(3):
        assert _batches(ours) == _batches(theirs)
    assert toolkit.rand(2).tolist() == pytest.approx(torch.rand(2).tolist())


def test_shuffle_with_generator_matches_torch():
    ds, tds = _pair(9)
    ours = kud.DataLoader(ds, batch_size=2, shuffle=True, generator=toolkit.Generator().manual_seed(4))
    theirs = tud.DataLoader(tds, batch_size=2, shuffle=True, generator=torch.Generator().manual_seed(4))
    for _ in range(2):
        assert _batches(ours) == _batches(theirs)


def test_dict_samples_and_batch_sampler():
    loader = kud.DataLoader(Squares(5), batch_sampler=[[4, 0], [2]])
    assert loader.batch_size is None and len(loader) == 2
    first, second = list(loader)
    assert first["i"].tolist() == [4, 0] and first["i"].dtype == toolkit.int64
    assert first["sq"].dtype == toolkit.float32 and first["sq"].tolist() == [[16.0], [0.0]]
    assert first["name"] == ["s4", "s0"] and second["name"] == ["s2"]


def test_batch_size_none_converts_without_batching():
    loader = kud.DataLoader(Squares(3), batch_size=None)
    items = list(loader)
    assert len(loader) == 3 and items[2]["i"] == 2
    assert isinstance(items[2]["sq"], toolkit.Tensor) and items[2]["sq"].shape == (1,)


def test_custom_sampler_and_collate_fn():
    loader = kud.DataLoader(list(range(10)), batch_size=3, sampler=[9, 8, 7, 1], collate_fn=sum)
    assert list(loader) == [24, 1]


def test_iterable_dataset_batches_and_len():
    loader = kud.DataLoader(Stream(7), batch_size=3)
    assert len(loader) == 3
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    dropped = kud.DataLoader(Stream(7), batch_size=3, drop_last=True)
    assert len(dropped) == 2 and [b.tolist() for b in dropped] == [[0, 1, 2], [3, 4, 5]]


def test_iterable_dataset_len_warning():
    loader = kud.DataLoader(Stream(5, length=2), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


def test_get_worker_info_is_none_in_main_process():
    assert kud.get_worker_info() is None


def test_timeout_without_workers_is_rejected_as_torch():
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(kud.DataLoader([1, 2], timeout=1))


def test_pin_memory_without_accelerator_warns():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        out = list(kud.DataLoader([1, 2], pin_memory=True))
    assert [t.tolist() for t in out] == [[1], [2]]
