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
CHUNKS = 4  # chunks per thread: a helper that starts late still takes its share
_busy = [0, 1]  # serial calls still to run, serial calls after the next late split
_helpers: list = []  # the persistent helper threads, started as calls first need them
_hand_out = [threading.Lock()]  # held while a call picks its idle helpers


class _Helper:
    """A helper thread that lives as long as the process, waiting on a lock of its own for the next call's
    chunks: releasing that lock is all a call pays to start it, where an executor's submit builds a future and
    a queue entry, and a thread kept from one call to the next needs no start at all."""

    def __init__(self) -> None:
        self.go = threading.Lock()
        self.go.acquire()  # locked: the thread waits on it until a call releases it
        self.job = None
        self.idle = True
        threading.Thread(target=self._serve, name="toolkit-split", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self.go.acquire()
            job, self.job = self.job, None
            try:
                job()
            except Exception:  # the chunk stays unfinished: the caller computes it and meets the error itself
                pass
            self.idle = True


def _reset_helpers() -> None:
    _helpers.clear()  # a forked child has none of the parent's threads
    _hand_out[0] = threading.Lock()  # nor their locks, which one of them may have held at the fork


os.register_at_fork(after_in_child=_reset_helpers)


def _start_helpers(job, wanted: int) -> int:
    """Give ``job`` to up to ``wanted`` idle helpers (starting threads while there are fewer than ``wanted``)
    and return how many took it: a helper still busy with a late chunk of an earlier call takes none."""
    started = 0
    with _hand_out[0]:
        while len(_helpers) < wanted:
            _helpers.append(_Helper())
        for h in _helpers:
            if started == wanted:
                break
            if h.idle:
                h.idle = False
                h.job = job
                h.go.release()
                started += 1
    return started


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

    Helpers write their chunks straight into the outputs and mark each one done. Once the counter runs out,
    the caller waits about one chunk's time for the helpers to finish; past that it copies the outputs
    (finished chunks included), computes the chunks still in a helper's hands into the copies and returns
    those, leaving the first arrays to the late helper. So when the other cores are busy (a helper not
    started, or descheduled halfway through a chunk) the call costs what the serial loop costs, where thread
    pools that wait for every worker lose many times over.

    No lock guards the chunk states: taking a chunk is one ``next`` of an ``itertools.count`` and marking it
    one list store, each atomic under the GIL, and the caller reads the states once, after the wait, to pick
    the late chunks: every chunk not its own and not marked done (a helper marking one done at that moment
    only writes into the abandoned arrays).
    The last helper to finish releases the call's ``done`` lock, on which the caller waits.
    """

    FREE, HELPER, HELPED, CALLER = 0, 1, 2, 3  # chunk states: by whom it is computed or was

    def __init__(self, kernel, ntasks, threads, inputs, outputs, tail):
        self.kernel, self.inputs, self.outputs, self.tail = kernel, inputs, outputs, tail
        self.threads, self.helpers = threads, threads - 1
        nchunks = min(ntasks, CHUNKS * threads)
        self.bounds = [ntasks * i // nchunks for i in range(nchunks + 1)]
        self.state = [self.FREE] * nchunks
        self.counter = itertools.count()
        self.finished = itertools.count(1)  # helpers done, the one that makes all of them releases ``done``
        self.done = threading.Lock()
        self.done.acquire()

    def _chunk(self, outputs, i: int) -> None:
        """Compute chunk ``i`` into ``outputs``."""
        self.kernel(*self.inputs, *outputs, self.bounds[i], self.bounds[i + 1], *self.tail)

    def _helper_done(self) -> None:
        if next(self.finished) == self.helpers:
            self.done.release()

    def _help(self) -> None:
        outputs, state, n = self.outputs, self.state, len(self.state)  # a late helper keeps to these arrays
        try:
            i = next(self.counter)
            while i < n:
                state[i] = self.HELPER
                self._chunk(outputs, i)
                state[i] = self.HELPED
                i = next(self.counter)
        finally:
            self._helper_done()

    def run(self) -> tuple:
        for _ in range(self.helpers - _start_helpers(self._help, self.helpers)):
            self._helper_done()  # helpers still busy with a late chunk of an earlier call take none of this one
        state, n = self.state, len(self.state)
        start, own = time.perf_counter(), 0
        i = next(self.counter)
        while i < n:
            state[i] = self.CALLER
            self._chunk(self.outputs, i)
            own += 1
            i = next(self.counter)
        now = time.perf_counter()
        in_time = self.done.acquire(timeout=max((now - start) / max(own, 1), 50e-6))
        # Every chunk is taken by now; one neither the caller's nor marked done is a helper's still (FREE too: a
        # helper may hold its number without having marked it yet).
        late = [] if in_time else [i for i, s in enumerate(state) if s != self.CALLER and s != self.HELPED]
        if late or self.HELPED not in state:
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
