"""Functions the RPC tests run on other workers: importable by name on every worker."""

from __future__ import annotations

import gc
import os
import signal
import time
import weakref

import toolkit
import toolkit.distributed.rpc as rpc


class CalleeError(Exception):
    """An error type of the tests' own, to check that the caller raises the same type."""


class Counter:
    """A value held by an owner RRef, whose methods run through the RRef proxies."""

    def __init__(self, start: int = 0):
        self.count = start

    def add(self, n: int) -> int:
        self.count += n
        return self.count


def raise_value_error(x):
    raise ValueError(f"bad value {x}")


def raise_callee_error():
    raise CalleeError("from the callee")


def sleep_then(seconds: float, value):
    time.sleep(seconds)
    return value


def add_kw(a, b=0, *, c=0):
    return a + b + c


def echo(x):
    return x


def nested_ping(depth: int, path: list) -> list:
    """Bounces between worker0 and worker1 ``depth`` times, each hop a nested rpc_sync from inside a call."""
    me = rpc.get_worker_info().name
    path = [*path, me]
    if depth == 0:
        return path
    other = "worker1" if me == "worker0" else "worker0"
    return rpc.rpc_sync(other, nested_ping, args=(depth - 1, path))


def kill_self():
    """Die mid-call, as a crash or an OOM kill would."""
    os.kill(os.getpid(), signal.SIGKILL)


_tracked: list = []


def make_tracked(n: int):
    """A tensor whose lifetime this worker watches through a weak reference (``tracked_alive``)."""
    t = toolkit.arange(n, dtype=toolkit.float32)
    _tracked.append(weakref.ref(t))
    return t


def tracked_alive() -> list[bool]:
    gc.collect()
    return [r() is not None for r in _tracked]


_held: list = []


def hold(rref) -> str:
    """Keep a user RRef received as an argument (it counts as one more user on the owner)."""
    _held.append(rref)
    return rref.owner_name()


def drop_held() -> int:
    n = len(_held)
    _held.clear()
    gc.collect()
    return n


def fetch_sum(rref):
    """Read an RRef's value on a third worker (to_here from inside a call)."""
    return rref.to_here().sum()


def rref_debug_info() -> dict:
    return rpc._rref_context_get_debug_info()


def wait_for_forks(num_forks: int, num_owner_rrefs: int | None = None, timeout: float = 20.0) -> dict:
    """This worker's RRef counts once they read ``num_forks`` (RRef deletions arrive asynchronously)."""
    end = time.monotonic() + timeout
    while True:
        gc.collect()
        info = rpc._rref_context_get_debug_info()
        ok = int(info["num_forks"]) == num_forks and (num_owner_rrefs is None
                                                       or int(info["num_owner_rrefs"]) == num_owner_rrefs)
        if ok or time.monotonic() > end:
            return info
        time.sleep(0.02)
