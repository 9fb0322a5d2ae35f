"""numpy's BLAS uses the cores other processes leave free: threads for a product follow the machine's load.

Why: a multi-threaded BLAS product waits for all of its threads at every block, so one thread that another
process keeps off its core stalls the whole product. On two cores beside two busy processes, a 64x800 @ 800x500
float32 product measured 36-80 ms with OpenBLAS's two threads against 0.3 ms with one, and 50 steps of a
two-layer training loop 2.4 s against 0.04 s. PyTorch collapses the same way; toolkit does not.

The policy: before a product large enough for the BLAS to split, :func:`fit_blas_threads` (a clock read on most
calls) looks at most every ``SAMPLE_EVERY`` seconds at how many threads of other processes are running (Linux's
``/proc/loadavg`` count of runnable threads, less this process's own running threads), and gives the BLAS the
cores that leaves free, between one and the intra-op thread count (``toolkit.set_num_threads``, else what the
BLAS started with, which honours ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``, or a limit set since through
``threadpoolctl``). On a quiet machine nothing changes. Where the load cannot be read (not Linux) the BLAS keeps its own setting. ``TOOLKIT_BLAS_FOLLOWS_LOAD=0``
turns the policy off.

Inside a container that shares the host's ``/proc/loadavg``, the count is the host's: the policy then sees a
machine with more cores than it may use and keeps the BLAS's setting, which is the behaviour without it.
"""

from __future__ import annotations

import os
import time

import numpy as np

from .threads import _cores
from .threads import _state as _thread_state

SAMPLE_EVERY = 0.05  # seconds between looks at the load: 20 looks a second, ~40 us each
# OpenBLAS runs a GEMM with fewer multiply-adds (m * n * k) on one thread whatever its setting.
MIN_SPLIT_WORK = 1 << 18

_LOADAVG = "/proc/loadavg"
# The count the BLAS was last given lives in threads._state["blas_fitted"], which set_num_threads clears.
_state: dict = {"next": 0.0, "setters": None, "getter": None, "started": None, "cpus": None}


def _enabled() -> bool:
    return os.environ.get("TOOLKIT_BLAS_FOLLOWS_LOAD", "1") != "0" and os.path.exists(_LOADAVG)


def _own_running() -> int:
    """Threads of this process now running or runnable (this one included)."""
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # the thread ended while we looked
            continue
        if stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] == b"R":
            n += 1
    return n


def others_running() -> int | None:
    """Runnable threads of other processes now, by ``/proc/loadavg`` (None where it cannot be read)."""
    try:
        with open(_LOADAVG, "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(running - _own_running(), 0)


def _setters() -> list:
    """``set_num_threads`` of each BLAS numpy loaded, found once (threadpoolctl reads the loaded libraries)."""
    import threadpoolctl  # optional: found on the first large product, never at import toolkit

    controllers = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
    _state["started"] = max((c.num_threads for c in controllers), default=1)
    _state["getter"] = controllers[0].get_num_threads if controllers else None
    return [c.set_num_threads for c in controllers]


def _set(threads: int) -> None:
    for setter in _state["setters"]:
        setter(threads)
    _thread_state["blas_fitted"] = threads


def fit_blas_threads(work: int) -> None:
    """Give the BLAS the cores other processes leave free, before a product of ``work`` multiply-adds."""
    if work < MIN_SPLIT_WORK:
        return
    now = time.monotonic()
    if now < _state["next"]:
        return
    _state["next"] = now + SAMPLE_EVERY
    if _state["setters"] is None:
        if not _enabled():
            _state["next"] = float("inf")
            return
        _state["setters"] = _setters()
        _state["cpus"] = os.cpu_count() or _cores()
    others = others_running()
    if others is None:
        return
    fitted = _thread_state["blas_fitted"]
    if fitted is not None and _state["getter"] is not None and _state["getter"]() != fitted:
        # Someone else set the BLAS's threads (``threadpoolctl.threadpool_limits``): that is the ceiling now.
        _state["started"] = _thread_state["blas_fitted"] = _state["getter"]()
    most = _thread_state["intra"] or _state["started"]
    # Cores of the machine whose load we read, less the busy ones; never more than this process may use.
    threads = max(1, min(most, _state["cpus"] - others, _cores()))
    if threads != _thread_state["blas_fitted"]:
        _set(threads)


def forget_blas_threads() -> None:
    """Look at the load again on the next product (a forked child starts with its own BLAS state)."""
    _state["next"] = 0.0
    _thread_state["blas_fitted"] = None


os.register_at_fork(after_in_child=forget_blas_threads)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)`` with the BLAS fitted to the load first."""
    fit_blas_threads(a.size * (b.shape[-1] if b.ndim > 1 else 1))
    return np.matmul(a, b)
