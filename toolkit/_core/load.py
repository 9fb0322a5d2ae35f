"""How many cores other processes leave free now: the one signal toolkit's thread choices follow.

Why: a kernel that waits for all of its threads (a multi-threaded BLAS product, numba's ``prange``) stalls
whenever another process keeps one of them off its core, and then runs many times slower than on one thread
(see ``blas_threads``). So before such a kernel toolkit asks :func:`free_cores`: a clock read on most calls,
and at most every ``SAMPLE_EVERY`` seconds a look at Linux's ``/proc/loadavg`` count of runnable threads, less
this process's own running threads. Kernels that share their work through ``backends.cpu.split`` look too:
they never wait long for a late helper, but beside two busy processes the wait they do make, and a helper
descheduled while it holds the GIL in a chunk that runs Python, cost convolutions 8-27% of their serial time
(medians); with the look they run serially there. Other processes count when ``CONFIRM`` looks in a row see
them: one look alone also catches threads that run for a moment (our own between the look's two reads, the kernel's
workers), and during the seed Net's training steps one look in three to six did, each keeping the next
``SAMPLE_EVERY`` seconds serial.

Inside a container that shares the host's ``/proc/loadavg`` the count is the host's: the machine then looks
larger than this process may use, and ``free_cores`` answers the cores it may use, as without the look. Where
the load cannot be read (not Linux), or with ``TOOLKIT_FOLLOW_LOAD=0``, every core counts as free.
"""

from __future__ import annotations

import os
import time

from .threads import _cores

SAMPLE_EVERY = 0.05  # seconds between looks at the load: 20 looks a second, ~40 us each
CONFIRM = 3  # looks in a row that must see another process running before it counts

_LOADAVG = "/proc/loadavg"
_state: dict = {"next": 0.0, "free": None, "on": None, "cpus": None, "others": ()}


def _own_running() -> int:
    """Threads of this process now running or runnable (this one included)."""
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # the thread ended while we looked
            continue
        end = stat.rindex(b")")
        if stat[end + 2:end + 3] == b"R":
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


def free_cores() -> int:
    """The cores this process may use that other processes leave free now (at least 1), sampled at most every
    ``SAMPLE_EVERY`` seconds."""
    now = time.monotonic()
    if now < _state["next"]:
        return _state["free"]
    _state["next"] = now + SAMPLE_EVERY
    if _state["on"] is None:
        _state["on"] = os.environ.get("TOOLKIT_FOLLOW_LOAD", "1") != "0" and os.path.exists(_LOADAVG)
        _state["cpus"] = os.cpu_count() or _cores()
    others = others_running() if _state["on"] else None
    if others is not None:
        seen = _state["others"] = (*_state["others"][1 - CONFIRM:], others)
        others = min(seen)  # other processes busy at every one of the last CONFIRM looks
    mine = _cores()
    _state["free"] = mine if others is None else max(1, min(mine, _state["cpus"] - others))
    return _state["free"]


def forget_load() -> None:
    """Look at the load again on the next question (a forked child)."""
    _state["next"] = 0.0
    _state["others"] = ()


os.register_at_fork(after_in_child=forget_load)
