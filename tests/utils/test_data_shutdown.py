"""DataLoader shutdown under garbage collection: an iterator's finalizer may run at any allocation, so it must never
wait for something the interrupted code holds (the registry of live iterators, a queue's lock)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import pytest

import toolkit.utils.data as kud

pytestmark = pytest.mark.timeout(300)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The garbage collector runs at allocations, which happen on nearly every line; this script makes it run at every line
# of the loader's iterator module, once per line, while one epoch is loaded and the exit handler runs. Each time it
# collects a fresh victim: an iterator with a live worker, kept alive by nothing but a reference cycle, so its
# finalizer runs right there, inside whatever that line holds. A finalizer that waits for a lock the line holds
# blocks forever: a watchdog thread then prints where the main thread waits and ends the process.
_SWEEP = r"""
import gc
import os
import sys
import threading
import traceback


def report_hang():
    print("deadlocked; the main thread waits here:", file=sys.stderr)
    traceback.print_stack(sys._current_frames()[threading.main_thread().ident], file=sys.stderr)
    sys.stderr.flush()
    os._exit(3)



import toolkit.utils.data as kud
import toolkit.utils.data._multiprocessing as loader_mp


class Numbers(kud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i


def victim():
    it = iter(kud.DataLoader(Numbers(), num_workers=1))
    it.cycle = it
    return it


def epoch(pids):
    it = iter(kud.DataLoader(Numbers(), batch_size=2, num_workers=1))
    pids += [w.pid for w in it._workers]
    return [b.tolist() for b in it]


def trace_lines(on_line):
    def tracer(frame, event, arg):
        if frame.f_code.co_filename != loader_mp.__file__:
            return None

        def local(frame, event, arg):
            if event == "line":
                on_line(frame)
            return local

        return local

    sys.settrace(tracer)


gc.disable()
lines = set()
trace_lines(lambda frame: lines.add(frame.f_lineno))
epoch([])
sys.settrace(None)

pids = []
victims = [victim() for _ in range(len(lines) + 30)]  # enough for the exit handler's lines, and a slower epoch's
for v in victims:
    pids += [w.pid for w in v._workers]
seen = set()
collected = []


def collect_a_victim(frame):
    if frame.f_lineno in seen or not victims:
        return
    seen.add(frame.f_lineno)
    print(f"collecting at {frame.f_code.co_name}:{frame.f_lineno}", flush=True)
    victims.pop()
    collected.append((frame.f_code.co_name, gc.collect()))


watchdog = threading.Timer(HANG_GUARD_S, report_hang)
watchdog.daemon = True
watchdog.start()
trace_lines(collect_a_victim)
batches = epoch(pids)
kept = iter(kud.DataLoader(Numbers(), num_workers=1))  # still live when the exit handler runs
pids += [w.pid for w in kept._workers]
loader_mp._shutdown_all_at_exit()  # what atexit runs when the interpreter exits
sys.settrace(None)
watchdog.cancel()
assert batches == [[0, 1], [2, 3]], batches
assert all(found for _, found in collected), collected  # every collection freed its victim
places = {name for name, _ in collected}
assert {"__init__", "_stop_workers", "_shutdown_all_at_exit"} <= places, places
print("PIDS", *pids)
"""


def _assert_gone(pids) -> None:
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_collection_at_any_line_of_the_loader_never_deadlocks():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # HANG_GUARD_S bounds a deadlock (which would otherwise last forever); it measures nothing.
    script = _SWEEP.replace("HANG_GUARD_S", "120")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=ROOT,
                          env=env)
    last = [line for line in proc.stdout.splitlines() if line.startswith("collecting at")][-1:]
    assert proc.returncode == 0, f"the loader deadlocked after {last}:\n{proc.stderr[-6000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr
    pids = [int(p) for p in proc.stdout.split("PIDS", 1)[1].split()]
    assert len(pids) > 20
    _assert_gone(pids)  # every worker of every victim, collected or left to the exit handler, was stopped


class _Numbers(kud.Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        return i


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_workers_of_an_iterator_freed_by_the_collector_are_stopped_before_exit():
    it = iter(kud.DataLoader(_Numbers(), num_workers=2))
    next(it)
    pids = [w.pid for w in it._workers]
    it.cycle = it
    del it
    gc.collect()  # the finalizer hands the iterator to the reaper thread, which stops its workers
    hang_guard = time.monotonic() + 60
    while any(_alive(p) for p in pids) and time.monotonic() < hang_guard:
        time.sleep(0.01)
    _assert_gone(pids)
