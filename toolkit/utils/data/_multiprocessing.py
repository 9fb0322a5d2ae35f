"""The multi-process DataLoader iterator: worker processes, index queues, in-order delivery, failure detection.

Each worker has its own index queue; all share one result queue. Task ``i`` goes to worker ``i % num_workers`` (the
next active one), at most ``prefetch_factor * num_workers`` tasks are outstanding, and results arriving out of order
wait in ``_task_info`` until their turn. While waiting the main process polls the result queue in short slices and
checks that every worker is still alive, so a crashed worker raises ``RuntimeError`` promptly instead of hanging.
"""

from __future__ import annotations

import atexit
import gc
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import weakref

from . import worker as _worker
from .dataloader import _BaseDataLoaderIter, _DatasetKind, _pin_memory

# Stopping an iterator's workers must never wait for a lock the code it interrupts may hold. A finalizer (``__del__``)
# runs wherever the garbage collector runs, which is at any allocation, in any thread: inside the code that registers
# an iterator, inside a queue's feeder thread holding that queue's lock. So:
# - the registry of live iterators is a dict with no lock, keyed by a serial number; every step on it is one dict
#   operation, atomic under the GIL, and whoever pops an iterator's entry is the one that stops it;
# - a finalizer run by the collector takes no lock at all: it puts the iterator back in the registry (a strong
#   reference now) and wakes the reaper thread through a ``SimpleQueue``, whose ``put`` is reentrant (made for
#   ``__del__``); the reaper stops the workers in a context of its own, the exit handler any it has not reached.
# A finalizer run by ``del`` (reference counting) stops the workers at once, as before.
_live_iterators: dict[int, weakref.ref | _MultiProcessingDataLoaderIter] = {}
_serials = itertools.count()
_reap_requests: queue.SimpleQueue = queue.SimpleQueue()
_reaper_pid: int | None = None
_collecting = False
_python_exiting = False


def _note_collection(phase: str, info: dict) -> None:
    global _collecting
    _collecting = phase == "start"


gc.callbacks.append(_note_collection)


def _reap_forever(requests: queue.SimpleQueue) -> None:
    """The reaper thread: stop the workers of iterators the garbage collector finalized."""
    while True:
        key = requests.get()
        it = _live_iterators.get(key)
        if isinstance(it, _MultiProcessingDataLoaderIter) and _live_iterators.pop(key, None) is it:
            try:
                it._stop_workers(graceful=False)
            except Exception:  # a failed stop must not end the reaper; the exit handler terminates what is left
                pass
        del it


def _ensure_reaper() -> None:
    """Start the reaper thread, once per process (a forked child does not inherit the parent's)."""
    global _reaper_pid, _reap_requests
    if _reaper_pid != os.getpid():
        if _reaper_pid is not None:
            _reap_requests = queue.SimpleQueue()
        _reaper_pid = os.getpid()
        threading.Thread(target=_reap_forever, args=(_reap_requests,), name="DataLoader worker reaper",
                         daemon=True).start()


def _shutdown_all_at_exit() -> None:
    """Stop every live iterator's workers before multiprocessing's own exit handler terminates them."""
    global _python_exiting
    while True:
        try:
            _, entry = _live_iterators.popitem()
        except KeyError:
            break
        if isinstance(entry, weakref.ref):
            it = entry()
            if it is not None:
                it._stop_workers()
        else:
            entry._stop_workers(graceful=False)
    _python_exiting = True


atexit.register(_shutdown_all_at_exit)


def _default_context():
    """``fork`` on Linux unless the user chose a start method; the platform default elsewhere."""
    if sys.platform.startswith("linux") and multiprocessing.get_start_method(allow_none=True) is None:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _death_message(w) -> str:
    """PyTorch's wording for a worker that is gone: by signal, by exit code, or silently."""
    code = w.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or f"signal {-code}"
        except ValueError:
            name = f"signal {-code}"
        return f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
    if code:
        return (
            f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. Details are lost due to "
            "multiprocessing. Rerunning with num_workers=0 may give better error trace."
        )
    return f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly"


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterate once over the dataset with ``num_workers`` processes (or every epoch, with persistent workers)."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context or _default_context()
        _ensure_reaper()
        self._live_key = next(_serials)
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        self._workers_status = []
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._data_queue = self._worker_result_queue
        _live_iterators[self._live_key] = weakref.ref(self)
        is_iterable = self._dataset_kind == _DatasetKind.Iterable
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_worker._worker_loop,
                args=(is_iterable, self._dataset, index_queue, self._worker_result_queue, self._workers_done_event,
                      self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                      loader.worker_init_fn, i, self._num_workers),
            )
            w.daemon = True
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
            self._workers_status.append(True)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _check_workers(self, cause: BaseException | None = None) -> None:
        """Raise RuntimeError naming any worker that died while still expected to answer."""
        failed = []
        for worker_id, w in enumerate(self._workers):
            if self._workers_status[worker_id] and not w.is_alive():
                failed.append(w)
                self._mark_worker_as_unavailable(worker_id)
        if failed:
            self._shutdown_workers()
            raise RuntimeError(" ".join(_death_message(w) for w in failed)) from cause

    def _try_get_data(self, timeout: float):
        """(True, item) from the result queue, or (False, None) after ``timeout`` seconds with every worker alive."""
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty as e:
            self._check_workers(e)
            return False, None
        except (EOFError, OSError) as e:
            # A batch's shared memory comes from its worker while this process unpickles it: a worker that died
            # right after sending leaves it unreadable. Give a dying worker the status-check interval to be seen
            # dead, so the error names it as it would have without the race.
            deadline = time.monotonic() + _worker.MP_STATUS_CHECK_INTERVAL
            while time.monotonic() < deadline and all(
                    w.is_alive() for i, w in enumerate(self._workers) if self._workers_status[i]):
                time.sleep(0.01)
            self._check_workers(e)
            raise

    def _get_data(self):
        """The next result, polling worker liveness; honours the loader's ``timeout``."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.MP_STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            success, data = self._try_get_data(wait)
            if success:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if self._shutdown or self._tasks_outstanding <= 0:
                raise AssertionError("Invalid iterator state: shutdown or no outstanding tasks when fetching next data")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order or self._workers_num_tasks[worker_queue_idx] < max_tasks // sum(
                        self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx: int):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = _pin_memory(data)
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        """Tell a worker to stop (it exits after its current task) and stop sending it work."""
        try:
            self._index_queues[worker_id].put(None)
        except (OSError, ValueError):
            pass
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Stop the workers, unless another thread (the reaper, the exit handler) already does."""
        if _python_exiting or os.getpid() != getattr(self, "_owner_pid", None):
            return
        if _live_iterators.pop(getattr(self, "_live_key", None), None) is not None:
            self._stop_workers()

    def _stop_workers(self, graceful: bool = True) -> None:
        """Done event, a ``None`` on every index queue, join, then terminate stragglers (called once, by whoever
        removed the iterator from the registry).

        An iterator the garbage collector finalized is stopped with ``graceful=False``: the collector has already run
        multiprocessing's finalizers of its queues, which end their feeder threads, so a ``None`` would never reach
        the workers; they are terminated at once instead of after the join deadline.
        """
        if os.getpid() != self._owner_pid:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            if graceful:
                for worker_id in range(len(self._workers)):
                    if self._persistent_workers or self._workers_status[worker_id]:
                        self._mark_worker_as_unavailable(worker_id)
                deadline = time.monotonic() + 1.0
                for w in self._workers:
                    w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=1.0)
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def __del__(self) -> None:
        try:
            if not _collecting:
                self._shutdown_workers()
            elif not (_python_exiting or getattr(self, "_shutdown", True)):
                # Run by the garbage collector, inside whatever allocated: take no lock, leave it to the reaper.
                _live_iterators[self._live_key] = self
                _reap_requests.put(self._live_key)
        except Exception:
            pass
