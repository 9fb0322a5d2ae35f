"""The CUDA benchmarks' setups run, and check their results, on numba's CUDA simulator at the suite's tiny sizes;
the compile-time child builds a CUDA fusion group and a second process finds its source in the cache; without a
device the section says so. Fresh processes (numba picks the simulator when first imported); no timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SETUPS = textwrap.dedent("""
    import json, os, tempfile
    from benchmarks import bench_cuda as b

    assert b.SMALL and b.SIMULATED, (b.SMALL, b.SIMULATED)
    batch, hidden = b.SIZES["lstm"]
    done = {"probe": b.probe("toolkit")}
    with tempfile.TemporaryDirectory() as tmp:
        info = os.path.join(tmp, "info.jsonl")
        runs = {"memcpy": b.memcpy(b.SIZES["chain"]), "copy": b.copy("toolkit", b.SIZES["chain"]),
                "chain": b.chain("toolkit", b.SIZES["chain"]), "matmul": b.matmul("toolkit", b.SIZES["matmul"]),
                "lstm eager": b.lstm_call("toolkit", "eager", batch, hidden, info),
                "lstm fused": b.lstm_call("toolkit", "fused", batch, hidden, info)}
        for name, run in runs.items():
            run()
            done[name] = True
        done["groups"] = b._recorded(info)["groups"]
        cache = os.path.join(tmp, "cache")
        done["compile"] = b._spawn_compile("chain", b.SIZES["compile_chain"], cache)
        done["load"] = b._spawn_compile("chain", b.SIZES["compile_chain"], cache)
    print(json.dumps(done))
""")


def _python(code: str, **env) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLKIT_CUDA_SIMULATOR", "NUMBA_ENABLE_CUDASIM")} | env
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_setups_and_compile_child_run_in_the_simulator():
    r = _python(SETUPS, TOOLKIT_CUDA_SIMULATOR="1")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    done = json.loads(r.stdout.strip().splitlines()[-1])
    assert done["probe"]["gpu"] and done["probe"]["simulated"]
    assert all(done[k] for k in ("memcpy", "copy", "chain", "matmul", "lstm eager", "lstm fused"))
    assert done["groups"] and all(g >= 1 for g in done["groups"])
    for first in (done["compile"], done["load"]):
        assert "error" not in first, first
        assert first["kernels"] == ["CudaFusedKernel"] and first["first"] > 0 and first["steady"] > 0
    # the second process found the first's source in the cache and wrote no other
    assert done["compile"]["sources"] == done["load"]["sources"] == 1


def test_without_a_device_the_section_says_so():
    # numba's simulator switched on without toolkit's flag: toolkit sees no CUDA device, on any machine
    r = _python("from benchmarks import bench_cuda; print(bench_cuda.main())", NUMBA_ENABLE_CUDASIM="1")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "### CUDA" in r.stdout and "No GPU on this machine: the CUDA benchmarks did not run" in r.stdout
