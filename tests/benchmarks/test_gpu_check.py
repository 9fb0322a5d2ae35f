"""benchmarks/gpu_check.sh runs its steps on numba's CUDA simulator and keeps every result (its dry run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not (shutil.which("make") and shutil.which("timeout")
                                     and (ROOT / ".venv" / "bin" / "python").exists()),
                                reason="the script runs make, timeout and the project's .venv")


def _dry_run(out: Path, pytest_args: str) -> subprocess.CompletedProcess:
    """The script on the simulator with the venv there is, results in ``out``, the tests ``pytest_args`` picks."""
    env = dict(os.environ, OUT=str(out), TOOLKIT_CUDA_SIMULATOR="1", GPU_CHECK_SKIP_INSTALL="1",
               GPU_CHECK_PYTEST_ARGS=pytest_args, TOOLKIT_BENCH_ROUNDS="1")
    return subprocess.run(["bash", "benchmarks/gpu_check.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)


def test_dry_run_writes_every_result(tmp_path):
    r = _dry_run(tmp_path, "-p no:xdist tests/cuda/test_runtime.py")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    summary = (tmp_path / "summary.txt").read_text().splitlines()
    assert [line.split(":")[0] for line in summary] == ["install", "nvidia-smi", "facts", "torch-facts", "tests",
                                                        "bench"]
    assert all("FAILED" not in line for line in summary), summary
    assert '"toolkit.cuda.get_device_name(0)": "numba CUDA simulator"' in (tmp_path / "facts.log").read_text()
    suite = ElementTree.parse(tmp_path / "tests.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) >= 5 and suite.get("failures") == suite.get("errors") == "0"
    assert "### CUDA" in (tmp_path / "bench.log").read_text()


def test_a_failed_step_is_recorded_and_the_next_steps_run(tmp_path):
    r = _dry_run(tmp_path, "tests/cuda/no_such_test.py")
    assert r.returncode == 1, r.stdout[-4000:] + r.stderr[-2000:]
    summary = (tmp_path / "summary.txt").read_text()
    assert "tests: FAILED" in summary and "bench: ok" in summary
