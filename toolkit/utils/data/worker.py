"""The DataLoader worker process, as ``torch.utils.data._utils.worker``: seeding, ``get_worker_info``, the fetch loop.

A worker seeds Python's ``random`` and toolkit's default generator with ``base_seed + worker_id`` and numpy's global
RNG with PyTorch's SeedSequence-style state, so a dataset drawing random numbers gives the same values as under
PyTorch. It then takes ``(task_idx, indices)`` from its index queue and puts ``(task_idx, batch)`` on the shared
result queue; an exception is sent back as an ``ExceptionWrapper`` that the main process re-raises.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

import toolkit

from ...multiprocessing.reductions import shared_copy
from .._pytree import tree_rebuild, tree_tensors

__all__ = ["WorkerInfo", "get_worker_info"]

# Seconds between checks that the other side is still alive while waiting on a queue.
MP_STATUS_CHECK_INTERVAL = 0.1

_worker_info: WorkerInfo | None = None


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its id, the worker count, its seed, its dataset copy."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """The current DataLoader worker's ``WorkerInfo``; ``None`` in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back once they are ready."""

    seed: int | None = None


class KeyErrorMessage(str):
    """A KeyError message that prints its newlines (KeyError would show the repr)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception type and its formatted traceback, picklable so a worker can send it to the main process."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the wrapped exception type with the original traceback text in its message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _MapDatasetFetcher:
    """Fetch ``dataset[i]`` for each index of a batch (or one index) and collate."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    """Take the next ``len(batch)`` samples from the dataset's iterator and collate; StopIteration at the end."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(is_iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    """The fetcher for a map-style or iterable dataset."""
    cls = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """numpy's seed for a worker: PyTorch's SeedSequence-style hash of (worker_id, base_seed), four 32-bit words."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r, xshift, mask32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    hash_const_a = init_a

    def hash_(value: int) -> int:
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & mask32
        hash_const_a = (hash_const_a * mult_a) & mask32
        value = (value * hash_const_a) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x: int, y: int) -> int:
        result = (((mix_mult_l * x) & mask32) - ((mix_mult_r * y) & mask32)) & mask32
        return (result ^ (result >> xshift)) & mask32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b = init_b
    state = []
    for value in pool:
        value = (value ^ hash_const_b) & mask32
        hash_const_b = (hash_const_b * mult_b) & mask32
        value = (value * hash_const_b) & mask32
        state.append((value ^ (value >> xshift)) & mask32)
    return state


def _seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed ``random``, toolkit and numpy in a worker as PyTorch does; returns the worker's seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    toolkit.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(is_iterable: bool, dataset, index_queue, data_queue, done_event, auto_collation: bool, collate_fn,
                 drop_last: bool, base_seed: int, init_fn, worker_id: int, num_workers: int) -> None:
    """Body of a worker process: serve index batches until told to stop or the parent disappears."""
    global _worker_info
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL * 10)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                try:
                    fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(where=where)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                    tensors = tree_tensors(data)
                    if tensors:  # sent through shared memory: fresh copies there, not in-place moves
                        data = tree_rebuild(data, iter([shared_copy(t) for t in tensors]))
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
