"""DataLoader with worker processes: determinism, seeding, errors, crashes, timeouts, persistence, clean shutdown."""

from __future__ import annotations

import math
import os
import random
import signal
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import toolkit
import toolkit.utils.data as kud

pytestmark = pytest.mark.timeout(60)


class Indexed(kud.Dataset):
    """Sample ``i`` is ``(i, [i, i+0.5])``; ``fail_at`` raises, ``exit_at`` crashes, ``sleep`` slows a sample."""

    def __init__(self, n: int, fail_at: int = -1, exit_at: int = -1, kill_at: int = -1, sleep: dict | None = None):
        self.n, self.fail_at, self.exit_at, self.kill_at, self.sleep = n, fail_at, exit_at, kill_at, sleep or {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        if i == self.exit_at:
            os._exit(1)
        if i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(self.sleep.get(i, 0.0))
        return i, np.array([i, i + 0.5], dtype=np.float32)


class RandomDraws:
    """Each sample draws from the worker's seeded generators: toolkit/torch, numpy's global RNG and ``random``."""

    def __init__(self, lib, n: int) -> None:
        self.lib, self.n = lib, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return [i, self.lib.rand(()).item(), float(np.random.rand()), random.random()]


class WhoAmI:
    """Sample = (index, worker id, worker count, worker seed, pid, value set by worker_init_fn)."""

    def __init__(self, n: int, info=None) -> None:
        self.n, self.info, self.tag = n, info, -1

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        w = (self.info or kud.get_worker_info)()
        return [i, w.id, w.num_workers, w.seed, os.getpid(), self.tag]


def _tag_worker(worker_id: int) -> None:
    kud.get_worker_info().dataset.tag = 100 + worker_id


class Range(kud.IterableDataset):
    def __init__(self, start: int, end: int, shard: bool) -> None:
        self.start, self.end, self.shard = start, end, shard

    def __iter__(self):
        info = kud.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.end))
        per = int(math.ceil((self.end - self.start) / info.num_workers))
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))


class TorchRange(tud.IterableDataset):
    def __init__(self, start: int, end: int, shard: bool) -> None:
        self.start, self.end, self.shard = start, end, shard

    def __iter__(self):
        info = tud.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.end))
        per = int(math.ceil((self.end - self.start) / info.num_workers))
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))


def _flat(loader):
    return [[x.tolist() if hasattr(x, "tolist") else x for x in b] for b in loader]


def _assert_gone(pids) -> None:
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_same_seed_same_batches_for_0_1_2_workers_and_torch():
    n = 11
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    ds, tds = kud.TensorDataset(toolkit.tensor(x)), tud.TensorDataset(torch.tensor(x))
    toolkit.manual_seed(5)
    torch.manual_seed(5)
    expected = _flat(tud.DataLoader(tds, batch_size=3, shuffle=True))
    for nw in (0, 1, 2):
        toolkit.manual_seed(5)
        assert _flat(kud.DataLoader(ds, batch_size=3, shuffle=True, num_workers=nw)) == expected


@pytest.mark.parametrize("num_workers", [1, 2])
def test_worker_seeding_matches_torch(num_workers):
    toolkit.manual_seed(9)
    torch.manual_seed(9)
    ours = _flat(kud.DataLoader(RandomDraws(toolkit, 6), batch_size=2, num_workers=num_workers))
    theirs = _flat(tud.DataLoader(RandomDraws(torch, 6), batch_size=2, num_workers=num_workers))
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-6)


def test_get_worker_info_and_worker_init_fn():
    gen = toolkit.Generator().manual_seed(3)
    loader = kud.DataLoader(WhoAmI(6), batch_size=None, num_workers=2, worker_init_fn=_tag_worker, generator=gen)
    rows = list(loader)
    assert [r[0] for r in rows] == list(range(6))
    assert [r[1] for r in rows] == [0, 1, 0, 1, 0, 1]  # round robin, delivered in order
    assert {r[2] for r in rows} == {2}
    assert [r[5] for r in rows] == [100, 101] * 3
    trows = list(tud.DataLoader(WhoAmI(6, tud.get_worker_info), batch_size=None, num_workers=2,
                                generator=torch.Generator().manual_seed(3)))
    assert [r[3] for r in rows] == [r[3] for r in trows]  # base_seed + worker_id, as torch
    assert len({r[4] for r in rows}) == 2 and os.getpid() not in {r[4] for r in rows}


@pytest.mark.parametrize("shard", [True, False])
def test_iterable_dataset_with_workers_matches_torch(shard):
    ours = [b.tolist() for b in kud.DataLoader(Range(3, 10, shard), batch_size=2, num_workers=2)]
    theirs = [b.tolist() for b in tud.DataLoader(TorchRange(3, 10, shard), batch_size=2, num_workers=2)]
    assert ours == theirs


def test_out_of_order_arrival_is_delivered_in_order():
    ds = Indexed(8, sleep={0: 0.3, 2: 0.2})
    loader = kud.DataLoader(ds, batch_size=None, num_workers=2, prefetch_factor=3)
    it = iter(loader)
    assert it._tasks_outstanding == 6  # prefetch_factor * num_workers
    assert [i for i, _ in it] == list(range(8))


def test_worker_exception_reraised_with_traceback():
    loader = kud.DataLoader(Indexed(6, fail_at=3), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):")
    assert 'raise ValueError(f"bad sample {i}")' in msg and "ValueError: bad sample 3" in msg


def test_worker_init_fn_exception_reraised():
    def boom(worker_id):
        raise KeyError("init failed")

    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(kud.DataLoader(Indexed(4), num_workers=1, worker_init_fn=boom))


@pytest.mark.parametrize("how, match", [("exit", "exited unexpectedly with exit code 1"),
                                        ("kill", "is killed by signal: Killed")])
def test_worker_death_raises_promptly(how, match):
    ds = Indexed(8, exit_at=5) if how == "exit" else Indexed(8, kill_at=5)
    # A generous timeout as a guard only: the death itself must be what ends the epoch, not the timeout.
    loader = kud.DataLoader(ds, batch_size=2, num_workers=2, timeout=300)
    it = iter(loader)
    pids = [w.pid for w in it._workers]
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) " + match):
        list(it)
    _assert_gone(pids)  # the failure already stopped the surviving worker


def test_timeout_raises():
    loader = kud.DataLoader(Indexed(4, sleep={1: 5.0}), batch_size=None, num_workers=1, timeout=0.5)
    it = iter(loader)
    assert next(it)[0] == 0
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        next(it)  # the item takes 5 s: raising instead of returning it shows the timeout fired
    assert time.monotonic() - start > 0.4  # and not early (a lower bound only: a busy machine only lengthens it)


def test_persistent_workers_survive_epochs():
    loader = kud.DataLoader(WhoAmI(5), batch_size=2, num_workers=2, persistent_workers=True)
    first = _flat(loader)
    it = loader._iterator
    pids = [w.pid for w in it._workers]
    for w in it._workers:
        assert w.is_alive()
    second = _flat(loader)
    assert loader._iterator is it
    assert [b[0] for b in first] == [b[0] for b in second] == [[0, 1], [2, 3], [4]]
    assert {p for b in second for p in b[4]} == set(pids)
    partial = iter(loader)
    next(partial)  # stop early: the next epoch still starts from the beginning
    assert [b[0] for b in _flat(loader)] == [[0, 1], [2, 3], [4]]
    del loader, it, partial  # no reference cycles: deleting the loader stops its workers at once
    _assert_gone(pids)


def test_no_leftover_processes_after_exhaustion_or_deletion():
    it = iter(kud.DataLoader(Indexed(6), batch_size=2, num_workers=2))
    pids = [w.pid for w in it._workers]
    assert len(list(it)) == 3
    _assert_gone(pids)  # exhausted: workers joined
    it = iter(kud.DataLoader(Indexed(20), batch_size=2, num_workers=2))
    next(it)
    pids = [w.pid for w in it._workers]
    del it  # deleted mid-epoch
    _assert_gone(pids)


def test_spawn_context_gives_same_batches():
    ds = kud.TensorDataset(toolkit.arange(10.0).reshape(5, 2), toolkit.arange(5))  # importable without this module
    toolkit.manual_seed(2)
    expected = _flat(kud.DataLoader(ds, batch_size=2, shuffle=True))
    toolkit.manual_seed(2)
    loader = kud.DataLoader(ds, batch_size=2, shuffle=True, num_workers=1, multiprocessing_context="spawn")
    assert _flat(loader) == expected


_EXIT_SCRIPT = """
import toolkit.utils.data as kud

class D(kud.Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return i

plain = iter(kud.DataLoader(D(), batch_size=2, num_workers=2))
next(plain)
persistent = kud.DataLoader(D(), batch_size=2, num_workers=1, persistent_workers=True)
next(iter(persistent))
print(*[w.pid for w in plain._workers + persistent._iterator._workers])
"""


def test_interpreter_exit_stops_workers():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 3
    _assert_gone(pids)
