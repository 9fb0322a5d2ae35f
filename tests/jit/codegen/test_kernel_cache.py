"""Fused kernels on disk: a second process loads the machine code instead of compiling; concurrent writers are safe.

Whether numba compiled or loaded is read from the dispatcher's own counters
(``stats.cache_misses`` counts compilations whose result was saved to the
cache, ``stats.cache_hits`` loads from it), never from timings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from toolkit.backends.cpu.cache import source_hash

ROOT = Path(__file__).resolve().parents[3]

_CHILD = r"""
import json, sys, time
from pathlib import Path
import numpy as np
import toolkit
from toolkit.backends.cpu import cache
from toolkit.jit.codegen import fused_kernel
from toolkit.jit.runtime.group_runner import group_runner

fused_kernel.RACE_UNFUSED = False  # the fused loop always runs: on a busy machine the ops one by one may win the race

start, stress = float(sys.argv[1]), int(sys.argv[2])
while time.time() < start:  # concurrent children start writing together
    time.sleep(0.001)
torn = 0
for k in range(stress):  # many large sources, written by every child at once: a reader must never see half of one
    src = f"# kernel {k}\n" + "".join(f"X{i} = {i * k}\n" for i in range(20000))
    path = cache.kernel_dir() / f"stress_{cache.source_hash(src)}.py"
    cache.write_once(path, src)
    torn += path.read_text() != src

def f(x, y):
    return toolkit.relu(x * y + 1.5) * x.neg() - y  # exact arithmetic: fused equals eager bit for bit

x = toolkit.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
y = toolkit.tensor(np.linspace(1, 3, 12, dtype=np.float32).reshape(3, 4))
traced = toolkit.jit.trace(f, (x, y))
traced(x, y)
out = traced(x, y)
[plan] = traced._executor.plans.values()
[group] = plan.fusion_groups()
kernel = group_runner(group).kernel
[module] = kernel._modules.values()
stats = module.serial.stats
print(json.dumps({
    "out": out.tolist(), "eager": f(x, y).tolist(), "torn": torn, "file": module.__file__,
    "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
    "calls": kernel.calls, "fallbacks": kernel.fallbacks,
}))
"""


def _start(cache: Path, start: float = 0.0, stress: int = 0) -> subprocess.Popen:
    env = dict(os.environ, TOOLKIT_CACHE_DIR=str(cache))
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    return subprocess.Popen([sys.executable, "-c", _CHILD, repr(start), str(stress)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): p.stat().st_mtime_ns for p in d.rglob("*") if p.is_file()}


def test_second_process_loads_the_fused_kernel_without_compiling(tmp_path):
    first = _result(_start(tmp_path))
    assert first["misses"] == 1 and first["hits"] == 0  # compiled, and the machine code saved
    assert first["calls"] >= 1 and first["fallbacks"] == 0
    files = _snapshot(tmp_path)
    path = Path(first["file"])
    assert path.parent == tmp_path / "kernels"
    assert path.name == f"fused_{source_hash(path.read_text())}.py"  # named by the hash of its source
    assert any(f.endswith(".nbi") for f in files) and any(f.endswith(".nbc") for f in files), files

    second = _result(_start(tmp_path))
    assert second["hits"] == 1 and second["misses"] == 0  # loaded from disk: numba did not compile
    assert second["file"] == first["file"]
    assert _snapshot(tmp_path) == files  # nothing written or rewritten
    assert second["out"] == first["out"] == first["eager"]


def test_concurrent_processes_never_leave_a_torn_file(tmp_path):
    start = time.time() + 3.0  # both children have imported by then (a late one still races the other)
    procs = [_start(tmp_path, start, stress=12) for _ in range(2)]
    results = [_result(p) for p in procs]
    for r in results:
        assert r["torn"] == 0
        assert r["out"] == r["eager"]
    assert results[0]["file"] == results[1]["file"]
    kernels = tmp_path / "kernels"
    assert not [p.name for p in kernels.iterdir() if p.name.endswith(".tmp")]  # no temp files left behind
    for p in kernels.glob("*.py"):
        prefix = p.name.split("_", 1)[0]
        assert p.name == f"{prefix}_{source_hash(p.read_text())}.py"  # every file whole: its hash is its name
    assert len(list(kernels.glob("stress_*.py"))) == 12
    third = _result(_start(tmp_path))  # whatever the two compiled and saved, a third process loads it
    assert third["hits"] == 1 and third["misses"] == 0
