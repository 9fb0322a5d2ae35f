"""Running one compiled kernel's work on the cores: the caller and up to ``get_num_threads() - 1`` helper threads
(no more than other processes leave cores free, ``load.free_cores``) share its chunks, and a busy machine never
makes a call slower than the serial loop.

Why not numba's ``prange``: its OpenMP and workqueue layers wait for every worker, so a worker that another
process keeps off its core stalls the whole call (a ``prange`` softmax measured 2.1 ms alone on two cores
and a 6.2 ms median beside two busy processes, where the serial loop takes 4.4 ms), and the workqueue layer
aborts when two threads launch kernels at once. Here the caller takes chunks from a shared counter like any
helper, and once the counter runs out it waits only about one chunk's time for chunks still in a helper's
hands before computing them itself (see :class:`_Split`).

Two ways to hand out work:

- ``run_tasks(kernel, ntasks, work, inputs, outputs, tail)`` calls ``kernel(*inputs, *outputs, t0, t1,
  *tail)`` for task ranges; a kernel's tasks may read any of the inputs (reductions over blocks, columns).
- ``run_slices(kernel, n, work, inputs, outputs, tail)`` calls ``kernel(*inputs[a:b], *outputs[a:b], *tail)``
  on slices along the first dim, for kernels whose rows are independent (softmax rows).

The outputs are fresh arrays the call owns until it returns, and both return the outputs to use: helpers
write their chunks straight into them, and only when a helper is too late (the caller computes its chunks
itself) does the call return copies instead, so that a helper still writing into the first arrays never
touches what the user holds. The common case pays no copy; the late case pays one.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ..._core.load import free_cores
from ..._core.threads import get_num_threads

# Work (in elements of a float32 sum, about 0.1 ns each) from which a split pays: handing chunks to a helper
# costs 30-60 us, a serial float32 sum of 2M elements about 0.1-0.2 ms. Costlier kernels scale their work.
PARALLEL_MIN = 1 << 21
# Large calls to run serially after a split whose helpers were too late to contribute: one after the first
# such split, twice as many after each further one in a row, at most BUSY_BACKOFF. So while other processes
# keep the cores busy only one call in BUSY_BACKOFF + 1 pays for finding out whether they still do, and a
# single hiccup on a quiet machine costs one serial call.
BUSY_BACKOFF = 8
_busy = [0, 1]  # serial calls still to run, serial calls after the next late split
_pool: list = [None]


def _reset_pool() -> None:
    _pool[0] = None  # a forked child has none of the parent's threads


os.register_at_fork(after_in_child=_reset_pool)


def _executor(workers: int) -> ThreadPoolExecutor:
    pool = _pool[0]
    if pool is None or pool._max_workers < workers:
        pool = _pool[0] = ThreadPoolExecutor(workers, thread_name_prefix="toolkit-split")
    return pool


def split_threads(work: int, ntasks: int) -> int:
    """How many threads a call with ``work`` elements in ``ntasks`` tasks splits over now (1: none): at most
    the cores other processes leave free (``load.free_cores``), since a helper they keep off its core holds
    its chunk (and, in a chunk that runs Python between its compiled calls, the GIL) while the caller waits."""
    if work < PARALLEL_MIN:
        return 1
    if _busy[0] > 0:
        _busy[0] -= 1
        return 1
    return min(get_num_threads(), ntasks, free_cores())


def run_tasks(kernel, ntasks: int, work: int, inputs: tuple, outputs: tuple, tail: tuple = (),
              threads: int | None = None) -> tuple:
    """Call ``kernel(*inputs, *outputs, t0, t1, *tail)`` over the tasks [0, ntasks): at once below
    ``PARALLEL_MIN`` elements of ``work``, else in chunks shared with helper threads, and return the outputs
    to use (``outputs`` themselves, or copies after a late helper; ``None`` entries stay ``None``).

    The tasks of a range write all of their part of the outputs (whatever it held before) and no other part;
    the outputs must be fresh arrays nobody else sees until the call returns. ``threads``: the count
    :func:`split_threads` gave the caller (which then ignores ``work``), for callers that prepare differently
    for a split call.
    """
    threads = split_threads(work, ntasks) if threads is None else threads
    if threads < 2:
        kernel(*inputs, *outputs, 0, ntasks, *tail)
        return outputs
    return _Split(kernel, ntasks, threads, inputs, outputs, tail).run()


def run_slices(kernel, n: int, work: int, inputs: tuple, outputs: tuple, tail: tuple = (),
               threads: int | None = None) -> tuple:
    """Call ``kernel(*(a[lo:hi] for a in inputs), *(o[lo:hi] for o in outputs), *tail)`` over slices of the
    first dim [0, n): at once below ``PARALLEL_MIN`` elements of ``work``, else in chunks shared with helper
    threads, and return the outputs to use (as :func:`run_tasks`). Every input and output has ``n`` rows; each
    output row depends only on the same input rows; the outputs are fresh arrays; ``threads`` as for
    :func:`run_tasks`."""
    threads = split_threads(work, n) if threads is None else threads
    if threads < 2:
        kernel(*inputs, *outputs, *tail)
        return outputs
    return _Slices(kernel, n, threads, inputs, outputs, tail).run()


class _Split:
    """One call's chunks, taken from a shared counter by the caller and the helpers.

    Helpers write their chunks straight into the outputs and mark each one done under the lock. Once the
    counter runs out, the caller waits about one chunk's time for chunks still in a helper's hands; past
    that it copies the outputs (finished chunks included), computes the late chunks into the copies and
    returns those, leaving the first arrays to the late helper. So when the other cores are busy (a helper
    not started, or descheduled halfway through a chunk) the call costs what the serial loop costs, where
    thread pools that wait for every worker lose many times over.
    """

    FREE, HELPER, HELPED, CALLER, TAKEN = 0, 1, 2, 3, 4  # chunk states: by whom it is computed or was

    def __init__(self, kernel, ntasks, threads, inputs, outputs, tail):
        self.kernel, self.inputs, self.outputs, self.tail = kernel, inputs, outputs, tail
        self.threads = threads
        nchunks = min(ntasks, 4 * threads)
        self.bounds = [ntasks * i // nchunks for i in range(nchunks + 1)]
        self.state = [self.FREE] * nchunks
        self.counter = itertools.count()
        self.cond = threading.Condition()

    def _claim(self, by: int):
        with self.cond:
            i = next(self.counter)
            if i >= len(self.state):
                return None
            self.state[i] = by
            return i

    def _chunk(self, outputs, i: int) -> None:
        """Compute chunk ``i`` into ``outputs``."""
        self.kernel(*self.inputs, *outputs, self.bounds[i], self.bounds[i + 1], *self.tail)

    def _help(self) -> None:
        outputs = self.outputs  # a late helper keeps writing into these, never into the copies
        i = self._claim(self.HELPER)
        while i is not None:
            self._chunk(outputs, i)
            with self.cond:
                if self.state[i] == self.HELPER:
                    self.state[i] = self.HELPED
                    self.cond.notify_all()
            i = self._claim(self.HELPER)

    def run(self) -> tuple:
        pool = _executor(self.threads - 1)
        for _ in range(self.threads - 1):
            pool.submit(self._help)
        start, own = time.perf_counter(), 0
        i = self._claim(self.CALLER)
        while i is not None:
            self._chunk(self.outputs, i)
            own += 1
            i = self._claim(self.CALLER)
        now = time.perf_counter()
        deadline = now + max((now - start) / max(own, 1), 50e-6)
        with self.cond:
            while self.HELPER in self.state and deadline > time.perf_counter():
                self.cond.wait(deadline - time.perf_counter())
            late = [i for i, s in enumerate(self.state) if s == self.HELPER]
            for i in late:
                self.state[i] = self.TAKEN
            if late or self.HELPED not in self.state:
                _busy[0] = min(_busy[1], BUSY_BACKOFF)
                _busy[1] = min(2 * _busy[1], BUSY_BACKOFF)
            else:
                _busy[1] = 1
        if not late:
            return self.outputs
        # A late chunk's rows in the first arrays may still change, the rest are final: copy, then recompute.
        outputs = tuple(None if o is None else o.copy() for o in self.outputs)
        for i in late:
            self._chunk(outputs, i)
        return outputs


class _Slices(_Split):
    """Chunks that are slices along the first dim."""

    def _chunk(self, outputs, i: int) -> None:
        lo, hi = self.bounds[i], self.bounds[i + 1]
        self.kernel(*(a[lo:hi] for a in self.inputs), *(o[lo:hi] for o in outputs), *self.tail)
