"""``Work``: the handle of a non-blocking operation, polled against its group's timeout.

MPI's blocking calls wait forever when a peer is gone, so every operation is started with a non-blocking MPI
call and finished here by polling ``Testall``; past the group's timeout the group is aborted and a clear
``DistBackendError`` is raised instead of a hang.
"""

from __future__ import annotations

import os
import time

from ._mpi import mpi
from .process_group import DistBackendError, ProcessGroup

__all__ = ["Work", "wait_requests"]


def _poll(requests: list, deadline: float, statuses=None) -> bool:
    """Drive MPI progress until every request is done (True) or the deadline passes (False)."""
    MPI = mpi()
    if statuses is None:
        testall = MPI.Request.Testall
    else:
        def testall(reqs):
            return MPI.Request.Testall(reqs, statuses)
    if testall(requests):
        return True
    # Poll as MPI's own blocking wait does (it spins too): each test drives the progress of non-blocking
    # collectives, so sleeping between tests would stall them. Past the first millisecond yield the core
    # between tests, for machines with more ranks than cores.
    yield_after = time.perf_counter() + 1e-3
    while True:
        if testall(requests):
            return True
        now = time.perf_counter()
        if now >= deadline:
            return False
        if now > yield_after:
            os.sched_yield()


def _describe(pg: ProcessGroup, what: str, timeout: float) -> str:
    return (f"[rank {mpi().COMM_WORLD.Get_rank()}] toolkit.distributed: {what} on process group "
            f"{pg.group_name!r} (ranks {pg._ranks}) timed out after {timeout:g} s (Timeout(ms)="
            f"{int(timeout * 1000)}): another rank of the group died, hung, or did not call the same "
            f"operation. The group is aborted; the MPI job ends when this process exits.")


def wait_requests(pg: ProcessGroup, requests: list, what: str, timeout: float | None = None,
                  statuses=None) -> None:
    """Block until ``requests`` complete, or abort ``pg`` and raise a clear timeout error."""
    timeout = pg._timeout if timeout is None else timeout
    try:
        done = _poll(requests, time.perf_counter() + timeout, statuses)
    except mpi().Exception as e:
        msg = f"toolkit.distributed: {what} failed in MPI: {e.Get_error_string()}"
        pg._abort(msg)
        raise DistBackendError(msg) from None
    if not done:
        msg = _describe(pg, what, timeout)
        pg._abort(msg)
        raise DistBackendError(msg)


class Work:
    """A started collective or point-to-point operation (as ``torch.distributed.Work``).

    ``wait()`` blocks until it is done (then the output tensors hold the result); ``is_completed()`` asks
    without blocking. Both run the finishing step (copying into non-contiguous outputs, averaging) once.
    """

    def __init__(self, pg: ProcessGroup, what: str, requests: list, finish=None, outputs=None,
                 statuses=None) -> None:
        self._pg = pg
        self._statuses = statuses
        self._what = what
        self._requests = requests
        self._finish = finish
        self._outputs = outputs if outputs is not None else []
        self._done = False
        self._exception: BaseException | None = None
        self._source_rank = -1

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            fin, self._finish = self._finish, None
            r = fin()
            if isinstance(r, int):
                self._source_rank = r

    def is_completed(self) -> bool:
        """Whether the operation has finished (never blocks)."""
        if self._done:
            return True
        try:
            done = (mpi().Request.Testall(self._requests) if self._statuses is None
                    else mpi().Request.Testall(self._requests, self._statuses))
            if done:
                self._complete()
        except mpi().Exception as e:
            self._exception = DistBackendError(f"toolkit.distributed: {self._what} failed in MPI: "
                                               f"{e.Get_error_string()}")
            self._done = True
        return self._done

    def wait(self, timeout=None) -> bool:
        """Block until done; past the timeout (the group's unless given) raise ``DistBackendError``."""
        if self._exception is not None:
            raise self._exception
        if not self._done:
            seconds = None
            if timeout is not None:
                seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
            try:
                wait_requests(self._pg, self._requests, self._what, seconds, self._statuses)
            except DistBackendError as e:
                self._exception = e
                raise
            self._complete()
        return True

    def synchronize(self) -> None:
        self.wait()

    def is_success(self) -> bool:
        if not self._done:
            raise RuntimeError("Invalid call to Work::isSuccess before work has completed")
        return self._exception is None

    def exception(self):
        return self._exception

    def result(self) -> list:
        """The output tensors."""
        self.wait()
        return list(self._outputs)

    def source_rank(self) -> int:
        """The sender of a completed ``irecv`` from any source."""
        if self._source_rank < 0:
            raise RuntimeError("sourceRank() may only be called on a completed recv work from any source")
        return self._source_rank

    def get_future(self) -> _Future:
        return _Future(self)

    def __repr__(self) -> str:
        return f"<Work {self._what} completed={self._done}>"


class _Future:
    """A minimal ``torch.futures.Future`` over a Work: ``wait()``/``value()`` give the output tensors."""

    def __init__(self, work: Work) -> None:
        self._work = work

    def done(self) -> bool:
        return self._work.is_completed()

    def wait(self) -> list:
        return self._work.result()

    def value(self) -> list:
        return self._work.result()
