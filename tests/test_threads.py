"""``set_num_threads`` / ``get_num_threads`` and the inter-op thread count, against PyTorch.

The counts are process-wide, and the inter-op one can be set only once per
process, so each check runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

import toolkit


def _run(code: str) -> dict:
    out = subprocess.check_output([sys.executable, "-c", textwrap.dedent(code)], text=True)
    return json.loads(out.strip().splitlines()[-1])


def test_set_num_threads_reaches_numba_and_blas():
    found = _run("""
        import json, sys, toolkit
        before = toolkit.get_num_threads()
        numba_loaded_at_import = "numba" in sys.modules
        toolkit.set_num_threads(1)
        import numba, threadpoolctl
        blas = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        one = [toolkit.get_num_threads(), numba.get_num_threads(), blas]
        toolkit.set_num_threads(2)
        two = [toolkit.get_num_threads(), numba.get_num_threads()]
        x = toolkit.arange(100000.0)
        print(json.dumps({"before": before, "numba_at_import": numba_loaded_at_import, "one": one, "two": two,
                          "arange_ok": float(x[-1]) == 99999.0}))
    """)
    assert found["before"] >= 1
    assert found["numba_at_import"] is False
    assert found["one"][:2] == [1, 1]
    assert found["one"][2] and all(n == 1 for n in found["one"][2])
    assert found["two"][0] == 2 and 1 <= found["two"][1] <= 2
    assert found["arange_ok"]


def test_get_num_threads_defaults_to_the_usable_cores():
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert _run("import json, toolkit; print(json.dumps({'n': toolkit.get_num_threads()}))")["n"] == cores


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_set_num_threads_rejects_what_torch_rejects(bad):
    with pytest.raises(RuntimeError) as expected:
        torch.set_num_threads(bad)
    with pytest.raises(RuntimeError) as got:
        toolkit.set_num_threads(bad)
    assert str(got.value) == str(expected.value)


def test_interop_threads_are_set_once():
    found = _run("""
        import json, toolkit, torch
        out = {"default_positive": toolkit.get_num_interop_threads() >= 1}
        toolkit.set_num_interop_threads(3)
        torch.set_num_interop_threads(3)
        out["value"] = [toolkit.get_num_interop_threads(), torch.get_num_interop_threads()]
        messages = []
        for lib in (torch, toolkit):
            try:
                lib.set_num_interop_threads(4)
            except RuntimeError as e:
                messages.append(str(e))
        out["messages"] = messages
        print(json.dumps(out))
    """)
    assert found["default_positive"]
    assert found["value"] == [3, 3]
    assert len(found["messages"]) == 2 and found["messages"][0] == found["messages"][1]


def test_set_num_interop_threads_rejects_non_positive():
    with pytest.raises(RuntimeError, match="positive"):
        toolkit.set_num_interop_threads(0)


def test_the_fork_pool_takes_the_interop_thread_count(tmp_path):
    # A fresh process: the count is set once, before forked work starts, and the pool is that size.
    code = textwrap.dedent("""
        import toolkit
        toolkit.set_num_interop_threads(3)

        def work(x):
            return x * 2

        @toolkit.jit.script
        def run(x):
            fut = toolkit.jit.fork(work, x)
            return toolkit.jit.wait(fut)

        run(toolkit.ones(2))
        from toolkit.jit.runtime import fork
        print(fork._POOL._max_workers)
        try:
            toolkit.set_num_interop_threads(4)
        except RuntimeError as e:
            print("refused")
    """)
    script = tmp_path / "forks.py"  # a file: scripting reads the functions' source
    script.write_text(code)
    out = subprocess.check_output([sys.executable, str(script)], text=True).split()
    assert out[-2:] == ["3", "refused"]
