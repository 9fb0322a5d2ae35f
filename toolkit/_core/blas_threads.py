"""numpy's BLAS uses the cores other processes leave free: threads for a product follow the machine's load.

Why: a multi-threaded BLAS product waits for all of its threads at every block, so one thread that another
process keeps off its core stalls the whole product. On two cores beside two busy processes, a 64x800 @ 800x500
float32 product measured 36-80 ms with OpenBLAS's two threads against 0.3 ms with one, and 50 steps of a
two-layer training loop 2.4 s against 0.04 s. PyTorch collapses the same way; toolkit does not.

The policy: before a product large enough for the BLAS to split, :func:`fit_blas_threads` gives the BLAS the
cores other processes leave free (``load.free_cores``: a clock read on most calls, a look at the machine's load
at most 20 times a second), between one and the intra-op thread count (``toolkit.set_num_threads``, else what the
BLAS started with, which honours ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``, or a limit set since through
``threadpoolctl``). On a quiet machine nothing changes, nor where the load cannot be read;
``TOOLKIT_FOLLOW_LOAD=0`` turns the looking off. Products below ``ONE_THREAD_WORK`` multiply-adds run on one
thread whatever the load: a second BLAS thread gains them a few microseconds, then spins on the core that the
split kernels' helper thread needs next. A ``threadpoolctl`` limit is seen as the BLAS count differing
from the one last fitted, so a limit equal to what a busy look had just set is taken for the fitting's own and
lifted when the machine is quiet again (``toolkit.set_num_threads`` has no such blind spot).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from .load import free_cores
from .threads import _cores
from .threads import _state as _thread_state

# OpenBLAS runs a GEMM with fewer multiply-adds (m * n * k) on one thread whatever its setting.
MIN_SPLIT_WORK = 1 << 18
# Products below this many multiply-adds run on one BLAS thread: alone, two threads take 12 us where one takes
# 20 (64x320 @ 320x50), but OpenBLAS's second thread then spins for a while on its core, where toolkit's split
# kernels want their helper: with these products on one thread the seed Net's training step went from 10
# involuntary context switches to none, and its mean time from 5.7-5.9 ms to 4.65-4.74 (200 steps, one process).
ONE_THREAD_WORK = 1 << 22

# The count the BLAS was last given lives in threads._state["blas_fitted"], which set_num_threads clears.
_state: dict = {"setters": None, "getter": None, "started": None, "free": None}
_held: dict = {"depth": 0, "before": None}  # one_thread blocks open in the main thread, the count they restore


def _setters() -> list:
    """``set_num_threads`` of each BLAS numpy loaded, found once (threadpoolctl reads the loaded libraries)."""
    import threadpoolctl  # optional: found on the first large product, never at import toolkit

    controllers = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
    _state["started"] = max((c.num_threads for c in controllers), default=1)
    _state["getter"] = controllers[0].get_num_threads if controllers else None
    return [c.set_num_threads for c in controllers]


def fit_blas_threads(work: int) -> None:
    """Give the BLAS the cores other processes leave free, before a product of ``work`` multiply-adds."""
    if work < MIN_SPLIT_WORK or _held["depth"]:  # held at one thread by a split kernel
        return
    free = 1 if work < ONE_THREAD_WORK else free_cores()
    fitted = _thread_state["blas_fitted"]
    if fitted is not None and free == _state["free"]:
        return
    if _state["setters"] is None:
        _state["setters"] = _setters()
    getter = _state["getter"]
    if fitted is not None and getter is not None and getter() != fitted:
        # Someone else set the BLAS's threads (``threadpoolctl.threadpool_limits``): that is the ceiling now.
        _state["started"] = fitted = getter()
    most = _thread_state["intra"] or _state["started"]
    threads = most if free >= _cores() else max(1, min(most, free))  # cores all free: the BLAS's own count
    if threads != fitted:
        for setter in _state["setters"]:
            setter(threads)
    _thread_state["blas_fitted"] = threads
    _state["free"] = free


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)`` with the BLAS fitted to the load first."""
    fit_blas_threads(a.size * (b.shape[-1] if b.ndim > 1 else 1))
    return np.matmul(a, b)


@contextmanager
def one_thread():
    """The BLAS on one thread inside the block, for products the caller itself runs on several threads at once
    (each of the caller's threads then runs its own products; a threaded BLAS called from two threads would make
    them queue for its one pool). The count it had comes back after the block, and :func:`fit_blas_threads`
    leaves it alone meanwhile.

    Only the main thread changes it: OpenBLAS ignores a count set from any other thread (measured with OpenBLAS
    0.3.30), so a block entered elsewhere (a ``jit.fork`` task) changes nothing, and a count set to one there
    could never be restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if not _held["depth"]:
        if _state["setters"] is None:
            _state["setters"] = _setters()
        _held["before"] = _state["getter"]() if _state["getter"] is not None else 1
        for setter in _state["setters"]:
            setter(1)
    _held["depth"] += 1
    try:
        yield
    finally:
        _held["depth"] -= 1
        if not _held["depth"]:
            for setter in _state["setters"]:
                setter(_held["before"])
