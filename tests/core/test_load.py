"""numpy's BLAS follows the machine's load (toolkit/_core/blas_threads.py, toolkit/_core/load.py): fewer threads beside busy processes,
never more than ``set_num_threads`` allows, and the behaviour can be turned off.

Each check runs in a fresh interpreter: the BLAS thread count is process-wide.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="the load is read from /proc/loadavg")

_BUSY = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end: pass\n"


def _run(code: str, env: dict | None = None) -> dict:
    out = subprocess.check_output([sys.executable, "-c", textwrap.dedent(code)], text=True,
                                  env={**os.environ, **(env or {})})
    return json.loads(out.strip().splitlines()[-1])


_PRODUCT = """
    import json, time, numpy as np, threadpoolctl, toolkit
    from toolkit._core import load
    numpys = {i["filepath"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}
    def blas():  # the BLAS numpy loaded (scipy may load its own later)
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["filepath"] in numpys]
    started = blas()
    a = toolkit.ones(256, 256)
    seen = []
    for _ in range(5):  # a few looks at the load, SAMPLE_EVERY apart
        (a @ a).sum()
        seen.append(blas())
        time.sleep(load.SAMPLE_EVERY * 1.5)
    load.forget_load()
    print(json.dumps({"started": started, "seen": seen, "others": load.others_running(), "free": load.free_cores()}))
"""


def test_beside_busy_processes_the_blas_runs_on_one_thread():
    cpus = os.cpu_count() or 1
    if cpus > 8:
        pytest.skip(f"keeping all {cpus} cores busy is too much for a unit test")
    busy = [subprocess.Popen([sys.executable, "-c", _BUSY]) for _ in range(cpus)]
    try:
        found = _run(_PRODUCT)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert found["others"] >= cpus and found["free"] == 1
    assert all(n == [1] * len(n) for n in found["seen"][1:]), found


def test_set_num_threads_caps_what_the_load_allows():
    found = _run(_PRODUCT.replace("started = blas()", "toolkit.set_num_threads(1)\n    started = blas()"))
    assert all(n == [1] * len(n) for n in found["seen"]), found


def test_the_policy_can_be_turned_off():
    found = _run(_PRODUCT.replace("started = blas()", "threadpoolctl.threadpool_limits(3, 'blas')\n    started = blas()"),
                 env={"TOOLKIT_FOLLOW_LOAD": "0"})
    assert all(n == found["started"] for n in found["seen"]), found


def test_others_running_counts_other_processes_only():
    found = _run("""
        import json
        from toolkit._core import load
        print(json.dumps({"others": load.others_running()}))
    """)
    assert isinstance(found["others"], int) and found["others"] >= 0


def test_a_threadpoolctl_limit_set_later_is_kept():
    """A limit set through threadpoolctl after the BLAS was fitted is the new ceiling, on busy and quiet looks
    alike. The load seen is scripted here (quiet, then busy and quiet in turn): with the machine's real load, a
    limit equal to the count a busy look had just set cannot be told from the fitting's own (see blas_threads)."""
    found = _run("""
        import json, os, numpy as np, threadpoolctl, toolkit
        from toolkit._core import blas_threads
        from toolkit._core.threads import _cores
        numpys = {i["filepath"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}
        def blas():
            return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["filepath"] in numpys]
        looks = iter([_cores()] + [1, _cores()] * 3)
        blas_threads.free_cores = lambda: next(looks)
        a = toolkit.ones(256, 256)
        (a @ a).sum()
        fitted = blas()
        limit = threadpoolctl.threadpool_limits(1, "blas")
        seen = []
        for _ in range(6):
            (a @ a).sum()
            seen.append(blas())
        print(json.dumps({"fitted": fitted, "seen": seen}))
    """)
    assert all(n == [1] * len(n) for n in found["seen"]), found


# The BLAS numpy loaded (``blas()`` reads its threads), at two threads with two cores free.
_TWO_BLAS_THREADS = """
        import json, threadpoolctl, toolkit
        from toolkit._core import blas_threads
        numpys = {i["filepath"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}
        def blas():
            return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["filepath"] in numpys]
        threadpoolctl.threadpool_limits(2, "blas")
        blas_threads.free_cores = lambda: 2
"""


def test_one_thread_blocks_restore_the_count():
    """Split kernels hold the BLAS at one thread while they run: nested blocks restore the count when the outer
    one leaves, a product fitted to the load meanwhile neither changes it nor takes it for a user's limit, and a
    block in another thread (where OpenBLAS ignores a count set) leaves the count alone."""
    found = _run("""
        import threading
    """ + _TWO_BLAS_THREADS + """
        a = toolkit.ones(256, 256)
        (a @ a).sum()
        seen = {"before": blas()}
        with blas_threads.one_thread():
            with blas_threads.one_thread():
                seen["nested"] = blas()
            seen["inner left"] = blas()
            (a @ a).sum()
            seen["fitted inside"] = blas()
        seen["outer left"] = blas()
        (a @ a).sum()
        seen["after a product"] = blas()
        def other():
            with blas_threads.one_thread():
                seen["other thread"] = blas()
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen["other left"] = blas()
        print(json.dumps(seen))
    """)
    two = found["before"]
    assert two and all(n == 2 for n in two), found
    assert all(n == 1 for n in found["nested"] + found["inner left"] + found["fitted inside"]), found
    assert found["outer left"] == found["after a product"] == found["other thread"] == found["other left"] == two, found


def test_other_processes_count_once_every_recent_look_sees_them(monkeypatch):
    """A thread seen running at one look (ours between the look's two reads, a kernel worker) leaves the cores
    free; a process seen at ``CONFIRM`` looks in a row takes one, and so does one seen at the very first look."""
    from toolkit._core import load

    seen = [1, 0, 1, 1, 1, 0]
    looks = iter(seen)
    monkeypatch.setattr(load, "others_running", lambda: next(looks))
    monkeypatch.setattr(load, "_cores", lambda: 2)
    monkeypatch.setattr(load, "_state", {"next": 0.0, "free": None, "on": True, "cpus": 2, "others": ()})
    monkeypatch.setattr(load, "CONFIRM", 3)
    free = []
    for _ in seen:
        load._state["next"] = 0.0  # look again now
        free.append(load.free_cores())
    assert free == [1, 2, 2, 2, 1, 2]


def test_small_products_run_on_one_blas_thread():
    """A product below ``ONE_THREAD_WORK`` multiply-adds runs on one BLAS thread (so no second BLAS thread spins
    on the core a split kernel's helper wants); a larger one gets the cores the load leaves, here all."""
    found = _run("""
    """ + _TWO_BLAS_THREADS + """
        big = toolkit.ones(256, 256)  # 16.8M multiply-adds
        small = toolkit.ones(64, 128)  # 64x128 @ 128x64: 0.5M
        seen = {}
        (big @ big).sum()
        seen["big"] = blas()
        (small @ small.t()).sum()
        seen["small"] = blas()
        (big @ big).sum()
        seen["big again"] = blas()
        print(json.dumps({"seen": seen, "limits": [blas_threads.MIN_SPLIT_WORK, blas_threads.ONE_THREAD_WORK]}))
    """)
    low, high = found["limits"]
    assert low <= 64 * 128 * 64 < high <= 256 ** 3, found
    assert all(n == 2 for n in found["seen"]["big"] + found["seen"]["big again"]), found
    assert all(n == 1 for n in found["seen"]["small"]), found
