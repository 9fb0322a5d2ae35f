"""Exit notices: a rank that exits or raises tells the others at once, so they fail instead of waiting.

Open MPI (4.x, without ULFM) gives a waiting rank no way to learn that a peer left: a rank whose script ended sits in
``MPI_Finalize`` until every other rank arrives, and a peer waiting for it in a collective waits until its timeout
(30 minutes by default). So every rank keeps one receive posted on a communicator of its own, and when its interpreter
exits, or an exception reaches the top of its script, it sends every other rank a short notice: ``exited (...)`` or
``raised ValueError: ...``. Every wait of toolkit.distributed reads the notices as it polls (``work.wait_until``); a
notice from a rank the operation needs fails the operation at once, with that rank named, whatever the timeout (the
timeout is left for ranks that hang).

A rank that raised then waits up to ``RAISE_GRACE_S`` for every other rank to have exited or raised as well (those
waiting for it fail at once, print their error and leave); ranks still running after that are ended with ``MPI_Abort``
so that the job never outlives the error, as torchrun ends the workers of a job when one fails. A rank that exits
normally aborts nothing: the others may legitimately finish later. A rank ended by a signal or ``os._exit`` sends no
notice; mpirun sees it end without ``MPI_Finalize`` and ends the job.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from ._mpi import mpi

__all__ = ["NOTICES", "RAISE_GRACE_S"]

RAISE_GRACE_S = 5.0
_TAG = 7
_SIZE = 512  # bytes a notice may have; a longer text is cut
_SEND_WAIT_S = 2.0  # how long an exiting rank waits for its notices to leave


def _describe_exception(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + "..."
    return f"raised {type(exc).__name__}: {text}" if text else f"raised {type(exc).__name__}"


class _Notices:
    """This process's side of the notices: the posted receive, what other ranks said, what this rank sent."""

    def __init__(self) -> None:
        self._comm = None
        self._rank = -1
        self._size = 0
        self._buf = np.zeros(_SIZE, dtype=np.uint8)
        self._req = None
        self._status = None
        # Tried, never waited for: a thread that finds another one reading the notices goes on polling its own work.
        self._reading = threading.Lock()
        self._sent: list = []
        self._announced = False
        self._previous_hook = None
        self.departed: dict[int, str] = {}  # global rank -> how it left ("exited ...", "raised ...")

    def start(self) -> None:
        """Open the notice channel (collective over COMM_WORLD, once per process) and watch for unhandled errors."""
        if self._comm is not None:
            return
        MPI = mpi()
        comm = MPI.COMM_WORLD.Dup()
        comm.Set_errhandler(MPI.ERRORS_RETURN)
        self._comm, self._rank, self._size = comm, comm.Get_rank(), comm.Get_size()
        self._post()
        self._previous_hook = sys.excepthook
        sys.excepthook = self._excepthook

    def _post(self) -> None:
        MPI = mpi()
        self._status = MPI.Status()
        self._req = self._comm.Irecv(self._buf, MPI.ANY_SOURCE, _TAG)

    def poll(self) -> None:
        """Record the notices that have arrived; never blocks."""
        if self._req is None or not self._reading.acquire(blocking=False):
            return
        try:
            while self._req is not None and self._req.Test(self._status):
                n = self._status.Get_count(mpi().BYTE)
                self.departed[self._status.Get_source()] = bytes(self._buf[:n]).decode("utf-8", "replace")
                self._post()
        except mpi().Exception:
            self._req = None  # the channel itself failed: operations fall back to their timeout
        finally:
            self._reading.release()

    def first_departed(self, ranks, need_all: bool = True) -> tuple[int, str] | None:
        """A rank of ``ranks`` (global ranks) that has left, with how; with ``need_all=False`` only once all have."""
        self.poll()
        if not self.departed:
            return None
        gone = [r for r in ranks if r in self.departed]
        if not gone or (not need_all and len(gone) < len(ranks)):
            return None
        return gone[0], self.departed[gone[0]]

    def announce(self, how: str) -> None:
        """Tell every other rank how this one leaves (once), and wait a little for the notices to go out."""
        if self._comm is None or self._announced:
            return
        self._announced = True
        data = np.frombuffer(how.encode("utf-8")[:_SIZE], dtype=np.uint8).copy()
        MPI = mpi()
        try:
            self._sent = [data] + [self._comm.Isend(data, r, _TAG) for r in range(self._size) if r != self._rank]
            deadline = time.monotonic() + _SEND_WAIT_S
            while not MPI.Request.Testall(self._sent[1:]) and time.monotonic() < deadline:
                os.sched_yield()
        except MPI.Exception:
            pass

    def _missing(self) -> list[int]:
        self.poll()
        return [r for r in range(self._size) if r != self._rank and r not in self.departed]

    def after_error(self, exc: BaseException) -> None:
        """An exception ended this rank's script: announce it, let the others finish, abort the job if they don't."""
        if self._comm is None or self._announced:
            return
        self.announce(_describe_exception(exc))
        deadline = time.monotonic() + RAISE_GRACE_S
        while (missing := self._missing()) and time.monotonic() < deadline:
            time.sleep(0.005)
        if missing:
            print(f"[rank {self._rank}] toolkit.distributed: rank(s) {missing} still running {RAISE_GRACE_S:g} s after "
                  f"this rank's {type(exc).__name__}; aborting the MPI job so that none of them waits for this rank "
                  f"forever", file=sys.stderr, flush=True)
            sys.stdout.flush()
            mpi().COMM_WORLD.Abort(1)

    def _excepthook(self, exc_type, exc, tb) -> None:
        (self._previous_hook or sys.__excepthook__)(exc_type, exc, tb)
        if not hasattr(sys, "ps1"):  # an interactive session goes on after an error
            self.after_error(exc)

    def at_exit(self) -> None:
        """The interpreter exits: announce it (if an error did not already), then stop listening, so that
        ``MPI_Finalize`` finds no pending receive."""
        if self._comm is None:
            return
        exc = getattr(sys, "last_value", None)
        if exc is not None and not hasattr(sys, "ps1"):
            self.after_error(exc)  # an unhandled error whose hook (another library's) did not call ours
        self.announce("exited (end of its script or sys.exit)")
        locked = self._reading.acquire(timeout=1.0)
        try:
            req, self._req = self._req, None
            if req is not None:
                req.Cancel()
                req.Wait()
        except mpi().Exception:
            pass
        finally:
            if locked:
                self._reading.release()


NOTICES = _Notices()
