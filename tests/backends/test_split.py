"""The shared-chunk runner: a helper that comes too late never writes into what the call returned."""

import threading
import time

import numpy as np
import pytest

import toolkit
from toolkit.backends.cpu import split


@pytest.fixture
def two_threads(monkeypatch):
    old = toolkit.get_num_threads()
    toolkit.set_num_threads(2)
    monkeypatch.setattr(split, "_busy", [0, 1])  # split this call even after an earlier late helper
    monkeypatch.setattr(split, "PARALLEL_MIN", 1)
    monkeypatch.setattr(split, "free_cores", lambda: 2)  # as on a quiet machine, whatever else runs now
    yield
    toolkit.set_num_threads(old)


def _slow_helper_kernel(done: threading.Event):
    main = threading.main_thread()

    def kernel(x, out):  # every row: twice its input; a helper's chunk comes long after the caller's
        if threading.current_thread() is not main:
            time.sleep(0.3)
            out[:] = 2 * x
            done.set()
        else:  # slow enough that the helper thread claims a chunk before the caller has taken them all
            time.sleep(0.02)
            out[:] = 2 * x
    return kernel


def test_late_helper_writes_only_into_the_abandoned_arrays(two_threads):
    x = np.arange(64.0).reshape(16, 4)
    out = np.full_like(x, np.nan)
    done = threading.Event()
    result, = split.run_slices(_slow_helper_kernel(done), 16, 1 << 30, (x,), (out,))
    assert result is not out  # the helper's chunk was late, so the call returned a copy
    np.testing.assert_array_equal(result, 2 * x)
    result[:] = -1.0  # the user's array now: the late helper must not touch it
    assert done.wait(5)
    time.sleep(0.05)
    assert (result == -1.0).all()


def test_helpers_in_time_return_the_given_outputs(two_threads):
    x = np.arange(40_000.0).reshape(400, 100)
    out = np.empty_like(x)

    def kernel(a, o):
        o[:] = a + 1

    results = [split.run_slices(kernel, 400, 1 << 30, (x,), (out,))[0] for _ in range(5)]
    for r in results:
        np.testing.assert_array_equal(r, x + 1)
    assert any(r is out for r in results)  # on a busy machine some calls may still find a helper late


def test_tasks_late_helper_returns_copies(two_threads):
    x = np.arange(32.0)
    out = np.full(32, np.nan)
    main = threading.main_thread()
    done = threading.Event()

    def kernel(a, o, unused, t0, t1):
        if threading.current_thread() is not main:
            time.sleep(0.3)
            done.set()
        else:
            time.sleep(0.02)
        o[t0:t1] = a[t0:t1] * 3

    result, none = split.run_tasks(kernel, 32, 1 << 30, (x,), (out, None))
    assert none is None
    np.testing.assert_array_equal(result, 3 * x)
    assert result is not out
    assert done.wait(5)


def test_busy_helper_takes_no_part_of_the_next_call(two_threads):
    """A helper still computing a late chunk of one call is passed over by the next: the caller computes
    every chunk of that call itself, and its result is right."""
    x = np.arange(32.0)
    main = threading.main_thread()
    release = threading.Event()
    helper_calls = []

    def slow(a, o, t0, t1):
        if threading.current_thread() is not main:
            helper_calls.append((t0, t1))
            release.wait(5)
        else:
            time.sleep(0.02)
        o[t0:t1] = a[t0:t1] + 1

    first, = split.run_tasks(slow, 32, 1 << 30, (x,), (np.empty(32),))
    np.testing.assert_array_equal(first, x + 1)
    assert helper_calls  # the helper took a chunk and is stuck in it
    second_in_helpers = []

    def double(a, o, t0, t1):
        if threading.current_thread() is not main:
            second_in_helpers.append((t0, t1))
        o[t0:t1] = a[t0:t1] * 2

    split._busy[:] = [0, 1]
    second, = split.run_tasks(double, 32, 1 << 30, (x,), (np.empty(32),))
    np.testing.assert_array_equal(second, 2 * x)
    release.set()  # the stuck helper finishes its late chunk; a job queued behind it would run now
    time.sleep(0.1)
    assert not second_in_helpers


def _split_in_child(conn):
    toolkit.set_num_threads(2)
    split._busy[:] = [0, 1]
    split.PARALLEL_MIN = 1
    split.free_cores = lambda: 2
    x = np.arange(4000.0).reshape(400, 10)
    main = threading.main_thread()
    helped = []

    def kernel(a, o):
        if threading.current_thread() is not main:
            helped.append(len(a))
        else:
            time.sleep(0.002)  # long enough for a live helper to take chunks
        o[:] = a * 3

    right = True
    for _ in range(5):
        split._busy[:] = [0, 1]
        r, = split.run_slices(kernel, 400, 1 << 30, (x,), (np.empty_like(x),))
        right = right and bool((r == 3 * x).all())
    conn.send((right, bool(helped)))  # a helper of the child's own computed chunks


def test_forked_child_starts_helpers_of_its_own(two_threads):
    import multiprocessing as mp  # optional here: the fork start method is what is tested

    x = np.arange(400.0).reshape(40, 10)
    split.run_slices(lambda a, o: o.__setitem__(Ellipsis, a), 40, 1 << 30, (x,), (np.empty_like(x),))
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_split_in_child, args=(child,))
    p.start()
    assert parent.poll(60) and parent.recv() == (True, True)
    p.join(60)
    assert p.exitcode == 0


def test_a_kernel_error_in_a_helper_reaches_the_caller_and_the_helper_lives_on(two_threads):
    """The helper that meets an error leaves its chunk unfinished; the caller computes it and raises the error
    itself, and the next calls still share their chunks with the helper."""
    x = np.arange(64.0)
    main = threading.main_thread()

    def failing(a, o, t0, t1):
        if threading.current_thread() is not main:
            raise ValueError("bad chunk")
        time.sleep(0.002)
        if t0 >= 32:
            raise ValueError("bad chunk")
        o[t0:t1] = a[t0:t1]

    with pytest.raises(ValueError, match="bad chunk"):
        split.run_tasks(failing, 64, 1 << 30, (x,), (np.empty(64),))
    helped = []

    def kernel(a, o, t0, t1):
        if threading.current_thread() is not main:
            helped.append(t0)
        else:
            time.sleep(0.002)  # long enough for the helper to take chunks
        o[t0:t1] = a[t0:t1] + 1

    for _ in range(5):
        split._busy[:] = [0, 1]
        r, = split.run_tasks(kernel, 64, 1 << 30, (x,), (np.empty(64),))
        np.testing.assert_array_equal(r, x + 1)
    assert helped
