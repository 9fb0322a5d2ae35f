"""``spawn``: start ``nprocs`` processes running ``fn(i, *args)`` and surface the first failure in the parent.

As ``torch.multiprocessing.spawn``: a child that raises writes its formatted traceback to a file the parent
reads, and the parent raises ``ProcessRaisedException`` carrying it (or ``ProcessExitedException`` for a
child killed by a signal or exiting non-zero), after stopping the other children.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
           "SpawnContext", "spawn", "start_processes"]

log = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1


class ProcessException(Exception):
    """A child process of ``spawn`` failed; ``error_index`` is its index, ``error_pid`` its process id."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child process was killed by a signal or exited with a non-zero code."""

    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent(sig: int) -> None:
    """Asks Linux to send ``sig`` to this process when its parent dies, so no child is left running."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, sig)


def _wrap(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    _die_with_parent(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent
    except Exception:
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes`` started; ``join`` waits for them and raises the first failure."""

    def __init__(self, processes: list, error_files: list[str]):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout: float) -> None:
        for process in self.processes:
            process.join(timeout)

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Waits for a process to finish; True once all have ended well, False if some still run.

        When one fails, the others get ``grace_period`` seconds to end, are terminated (then killed), and
        the failure is raised: ``ProcessRaisedException`` with the child's traceback, or
        ``ProcessExitedException``.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        self._stop_all(grace_period)
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(f"process {error_index:d} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index:d} terminated with exit code {exitcode:d}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        os.unlink(self.error_files[error_index])
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n" + original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)

    def _stop_all(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                            process.pid)
                process.kill()
            process.join()


class SpawnContext(ProcessContext):
    """The deprecated name of ``ProcessContext``."""

    def __init__(self, processes: list, error_files: list[str]):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _error_file() -> str:
    """A path for a child's traceback: created only if the child fails, so its existence means failure."""
    tf = tempfile.NamedTemporaryFile(prefix="toolkit-errorfile-", suffix=".pickle", delete=False)
    tf.close()
    os.unlink(tf.name)
    return tf.name


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Starts ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; see ``spawn``."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        error_file = _error_file()
        process = mp.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        error_files.append(error_file)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Spawns ``nprocs`` processes that run ``fn(i, *args)``; raises the first child's failure.

    Example::

        def train(rank, model):
            ...
        toolkit.multiprocessing.spawn(train, args=(model,), nprocs=2)

    Returns None when ``join`` is True, else the ``ProcessContext`` to join.
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t toolkit.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
