"""The threads that run incoming calls: a pool that grows past its size only while its threads wait on RPCs.

A callee that calls another worker (or back its caller) blocks a pool thread until the answer comes. With a
fixed pool, enough such nested calls at once would take every thread and wait for work queued behind them: a
deadlock. So a thread that waits on an RPC future (``RpcFuture.wait``) counts as blocked, and the pool starts a
new thread whenever work is queued and fewer than ``size`` threads are running; the extra threads leave once idle.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable

from ...futures import Future

__all__ = ["CallPool", "RpcFuture"]

IDLE_EXIT_S = 5.0
_local = threading.local()


class CallPool:
    """At most ``size`` threads running calls at once, plus one for each thread blocked on an RPC."""

    def __init__(self, size: int, name: str):
        self.size, self._name = size, name
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = self._idle = self._blocked = self._queued = 0
        self._stopped = False

    def submit(self, fn: Callable, *args) -> None:
        with self._lock:
            if self._stopped:
                return
            self._queued += 1
            self._tasks.put((fn, args))
            self._grow()

    @contextlib.contextmanager
    def blocking(self):
        """Mark the current pool thread as waiting (a no-op on other threads) for the duration."""
        if getattr(_local, "pool", None) is not self:
            yield
            return
        with self._lock:
            self._blocked += 1
            self._grow()
        try:
            yield
        finally:
            with self._lock:
                self._blocked -= 1

    def shutdown(self) -> None:
        with self._lock:
            self._stopped = True
            for _ in range(self._threads):
                self._tasks.put(None)

    def _grow(self) -> None:
        # Called with the lock held.
        if self._queued > self._idle and self._threads - self._blocked < self.size:
            self._threads += 1
            threading.Thread(target=self._run, name=f"{self._name}-{self._threads}", daemon=True).start()

    def _run(self) -> None:
        _local.pool = self
        while True:
            with self._lock:
                self._idle += 1
            try:
                task = self._tasks.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    self._idle -= 1
                    if self._threads > self.size or self._stopped:
                        self._threads -= 1
                        return
                continue
            with self._lock:
                self._idle -= 1
                if task is None:
                    self._threads -= 1
                    return
                self._queued -= 1
            fn, args = task
            fn(*args)


class RpcFuture(Future):
    """The Future of an RPC: as ``toolkit.futures.Future``, and ``wait()`` lets the call pool grow meanwhile."""

    def __init__(self, pool: CallPool, on_io_thread: Callable[[], bool]):
        super().__init__()
        self._pool, self._on_io_thread = pool, on_io_thread

    def wait(self):
        if self.done():
            return super().wait()
        if self._on_io_thread():
            raise RuntimeError("An RPC future was waited on from the RPC IO thread (in a then() or "
                               "add_done_callback() callback of another RPC future), where its reply could never "
                               "be read: chain it with then() instead of waiting, or wait outside the callback")
        with self._pool.blocking():
            return super().wait()
