"""``toolkit.futures``: a ``Future`` for a value computed elsewhere (another thread, a forked graph).

Shaped like ``torch.futures``: ``wait()`` blocks and returns the value or raises
the error the work raised, ``then(callback)`` chains, ``collect_all`` and
``wait_all`` gather several. ``toolkit.jit.fork`` returns one; ``toolkit.jit.Future``
is this class.

Example::

    >>> fut = toolkit.futures.Future()
    >>> chained = fut.then(lambda f: f.wait() + 1)
    >>> fut.set_result(1)
    >>> chained.wait()
    2
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")

__all__ = ["Future", "collect_all", "wait_all"]


class Future(Generic[T]):
    """The eventual result of some work: set once (a value or an exception), read by ``wait()``.

    A future made for a task that has not started yet may carry a ``runner``: a waiter
    then runs the task in its own thread instead of blocking (so nested forks never
    wait on work queued behind themselves).
    """

    def __init__(self, *, devices: list | None = None):
        self._cond = threading.Condition()
        self._done = False
        self._result: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []
        self._runner: Callable[[], None] | None = None

    # -- reading -----------------------------------------------------------------------------------------
    def done(self) -> bool:
        """Whether the value (or an error) is set."""
        return self._done

    def wait(self) -> T:
        """Block until the value is set and return it; raise the error the work raised."""
        runner = self._runner
        if runner is not None:
            runner()  # runs the task here unless a worker claimed it first
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._exception is not None:
            raise self._exception
        return self._result

    def value(self) -> T:
        """The value of a completed future (raises its error); call only once ``done()``."""
        if not self._done:
            raise RuntimeError("Future.value() must be called after the future is completed (done() is False); "
                               "use wait() to block for it")
        if self._exception is not None:
            raise self._exception
        return self._result

    # -- chaining ----------------------------------------------------------------------------------------
    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A future of ``callback(self)``, run once this one completes; an error in the callback goes to it."""
        out: Future[S] = Future()

        def run(fut: Future[T]) -> None:
            try:
                out.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001 - handed to whoever waits on ``out``
                out.set_exception(RuntimeError(f"Got the following error when running the callback: "
                                               f"{type(e).__name__}: {e}"))

        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Call ``callback(self)`` once this future completes (now, if it already has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    # -- completing --------------------------------------------------------------------------------------
    def set_result(self, result: T) -> None:
        """Complete with a value, waking waiters and running callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete with an error: ``wait()`` and ``value()`` raise it."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, result, exception) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._result, self._exception, self._done = result, exception, True
            self._runner = None
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A future completed, with the list of ``futures`` itself, once every one of them is done."""
    out: Future[list[Future]] = Future()
    futures = list(futures)
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result(futures)
        return out

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: list[Future]) -> list:
    """The values of ``futures``, waiting for each; the first error raised by any of them is raised."""
    return [f.wait() for f in futures]
