"""How many threads toolkit's kernels use: ``set_num_threads`` / ``get_num_threads`` (intra-op) and
``set_num_interop_threads`` / ``get_num_interop_threads``, by PyTorch's names.

Intra-op threads are the threads one kernel splits its work over: numba's
parallel kernels (``numba.set_num_threads``) and numpy's BLAS (through
``threadpoolctl``). Setting them imports numba and threadpoolctl then, never at
``import toolkit``. numba keeps its setting per calling thread (its documented
behaviour), and caps it at the pool it started with (``NUMBA_NUM_THREADS``);
``get_num_threads`` reports the value set, as PyTorch does::

    toolkit.set_num_threads(1)   # reproducible single-threaded timings
    toolkit.get_num_threads()    # 1

Inter-op threads run independent work side by side (``toolkit.jit.fork``): the
value can be set once, before such work starts, as in PyTorch.
"""

from __future__ import annotations

import operator
import os


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity masks
        return os.cpu_count() or 1


_state: dict = {"intra": None, "interop": None, "blas_limits": None, "blas_fitted": None}


def _check_count(name: str, n) -> int:
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    n = operator.index(n)
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(n: int) -> None:
    """Use ``n`` threads inside each op: numba's parallel kernels and numpy's BLAS."""
    n = _check_count("set_num_threads", n)
    _state["intra"] = n
    import numba  # optional: numba's thread pool; loaded by this call only, never by import toolkit
    import threadpoolctl  # optional: numpy's BLAS threads (threadpoolctl comes with scikit-learn)

    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    # Kept alive: the limit holds until the next call replaces it.
    _state["blas_limits"] = threadpoolctl.threadpool_limits(limits=n, user_api="blas")
    _state["blas_fitted"] = None  # blas_threads fits the BLAS to the load again, within the new count


def get_num_threads() -> int:
    """The intra-op thread count: the value set, else the cores this process may run on."""
    return _state["intra"] or _cores()


def set_num_interop_threads(n: int) -> None:
    """The size of the pool that runs forked work; once only, before any such work (PyTorch's rule)."""
    n = _check_count("set_num_interop_threads", n)
    if _state["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _state["interop"] = n


def get_num_interop_threads() -> int:
    return _state["interop"] or _cores()


def start_interop_pool() -> int:
    """The size of the pool for forked work, fixed from now on: the pool is starting (later
    ``set_num_interop_threads`` calls then fail, as PyTorch's do once parallel work has started)."""
    if _state["interop"] is None:
        _state["interop"] = _cores()
    return _state["interop"]
