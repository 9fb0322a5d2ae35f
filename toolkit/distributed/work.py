"""``Work``: the handle of a non-blocking operation, polled against its group's timeout and its peers' exit notices.

MPI's blocking calls wait forever when a peer is gone, so every operation is started with a non-blocking MPI
call and finished here by polling it. While polling, the exit notices of the other ranks are read (``_notices``):
when a rank the operation needs has exited or raised, the group is aborted and a ``DistBackendError`` naming that
rank is raised at once; past the group's timeout (a rank that hangs) the same happens with a timeout message.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ._errors import DistBackendError
from ._mpi import mpi
from ._notices import NOTICES

if TYPE_CHECKING:
    from .process_group import ProcessGroup

__all__ = ["Work", "testall", "wait_requests", "wait_until"]

# After a peer's notice, how long its operation may still complete: what the peer sent before leaving may still be
# on its way (MPI orders messages per communicator, and the notices travel on a communicator of their own).
_DRAIN_S = 0.2


def testall(requests: list, statuses=None):
    """The test of a plain operation: are all its MPI requests done?"""
    MPI = mpi()
    if statuses is None:
        return lambda: MPI.Request.Testall(requests)
    return lambda: MPI.Request.Testall(requests, statuses)


def _poll(test, deadline: float, pg: ProcessGroup, peers: list[int] | None, need_all: bool):
    """Drive MPI progress until ``test()`` is true (None), the deadline passes ("timeout"), or a peer the operation
    needs (global ranks; the group's other members when None) has left (its rank and how)."""
    if test():
        return None
    # Poll as MPI's own blocking wait does (it spins too): each test drives the progress of non-blocking
    # collectives, so sleeping between tests would stall them. Past the first millisecond yield the core
    # between tests, for machines with more ranks than cores, and read the other ranks' exit notices.
    yield_after = time.perf_counter() + 1e-3
    while True:
        if test():
            return None
        now = time.perf_counter()
        if now >= deadline:
            return "timeout"
        if now > yield_after:
            os.sched_yield()
            if peers is None:
                peers = _other_members(pg)
            left = NOTICES.first_departed(peers, need_all)
            if left is not None:
                drained = now + _DRAIN_S
                while time.perf_counter() < drained:
                    if test():
                        return None
                    os.sched_yield()
                return left


def _other_members(pg: ProcessGroup) -> list[int]:
    me = mpi().COMM_WORLD.Get_rank()
    return [r for r in pg._ranks if r != me]


def _failed(pg: ProcessGroup, what: str, why: str) -> DistBackendError:
    """Abort ``pg`` and return the error of its operation ``what``."""
    msg = (f"[rank {mpi().COMM_WORLD.Get_rank()}] toolkit.distributed: {what} on process group {pg.group_name!r} "
           f"(ranks {pg._ranks}) {why}. The group is aborted; the MPI job ends when this process exits.")
    pg._abort(msg)
    return DistBackendError(msg)


def _departed(rank: int, how: str) -> str:
    return f"cannot complete: rank {rank} {how}"


def wait_until(pg: ProcessGroup, test, what: str, timeout: float | None = None, peers: list[int] | None = None,
               need_all: bool = True) -> None:
    """Poll ``test`` until it is true; abort ``pg`` and raise ``DistBackendError`` when a rank of ``peers`` (global
    ranks; the group's other members by default) has left, or when the timeout passes. With ``need_all=False``
    (a receive from any rank) only all of them leaving fails it."""
    timeout = pg._timeout if timeout is None else timeout
    try:
        result = _poll(test, time.perf_counter() + timeout, pg, peers, need_all)
    except mpi().Exception as e:
        msg = f"toolkit.distributed: {what} failed in MPI: {e.Get_error_string()}"
        pg._abort(msg)
        raise DistBackendError(msg) from None
    if result == "timeout":
        raise _failed(pg, what, f"timed out after {timeout:g} s (Timeout(ms)={int(timeout * 1000)}): another rank "
                                f"of the group died, hung, or did not call the same operation")
    if result is not None:
        raise _failed(pg, what, _departed(*result))


def wait_requests(pg: ProcessGroup, requests: list, what: str, timeout: float | None = None,
                  statuses=None) -> None:
    """Block until ``requests`` complete, or abort ``pg`` and raise a clear error (see ``wait_until``)."""
    wait_until(pg, testall(requests, statuses), what, timeout)


class Work:
    """A started collective or point-to-point operation (as ``torch.distributed.Work``).

    ``wait()`` blocks until it is done (then the output tensors hold the result); ``is_completed()`` asks
    without blocking. Both run the finishing step (copying into non-contiguous outputs, averaging) once.
    """

    def __init__(self, pg: ProcessGroup, what: str, requests: list, finish=None, outputs=None,
                 statuses=None, test=None, peers: list[int] | None = None, need_all: bool = True) -> None:
        self._pg = pg
        self._what = what
        self._requests = requests
        self._test = test if test is not None else testall(requests, statuses)
        self._peers = peers
        self._need_all = need_all
        self._finish = finish
        self._outputs = outputs if outputs is not None else []
        self._done = False
        self._exception: BaseException | None = None
        self._source_rank = -1
        self._departure_seen: float | None = None

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            fin, self._finish = self._finish, None
            try:
                r = fin()
            except RuntimeError as e:
                self._exception = e
                raise
            if isinstance(r, int):
                self._source_rank = r

    def is_completed(self) -> bool:
        """Whether the operation has finished (never blocks); a failed operation counts as finished, one that waits
        for a rank that has left included (``wait()`` then raises)."""
        if self._done:
            return True
        try:
            if self._test():
                self._complete()
            else:
                self._check_departures()
        except mpi().Exception as e:
            self._exception = DistBackendError(f"toolkit.distributed: {self._what} failed in MPI: "
                                               f"{e.Get_error_string()}")
            self._done = True
        except RuntimeError as e:
            self._exception = e
            self._done = True
        return self._done

    def _check_departures(self) -> None:
        peers = _other_members(self._pg) if self._peers is None else self._peers
        left = NOTICES.first_departed(peers, self._need_all)
        if left is None:
            return
        now = time.perf_counter()
        if self._departure_seen is None:
            self._departure_seen = now  # what the rank sent before leaving may still arrive: ask again later
        elif now - self._departure_seen > _DRAIN_S:
            self._exception = _failed(self._pg, self._what, _departed(*left))
            self._done = True

    def wait(self, timeout=None) -> bool:
        """Block until done; raise ``DistBackendError`` past the timeout (the group's unless given) or when a rank
        the operation needs has left, and the operation's own error (a size mismatch) as it is."""
        if self._exception is not None:
            raise self._exception
        if not self._done:
            seconds = None
            if timeout is not None:
                seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
            try:
                wait_until(self._pg, self._test, self._what, seconds, self._peers, self._need_all)
            except RuntimeError as e:
                self._exception = e
                self._done = True
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
