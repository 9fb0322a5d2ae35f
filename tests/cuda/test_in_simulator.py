"""Runs tests/cuda under numba's CUDA simulator in a fresh process (see conftest.py for why)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SIMULATED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(SIMULATED, reason="already running in the simulator process")
def test_cuda_suite_in_simulator():
    env = dict(os.environ, TOOLKIT_CUDA_SIMULATOR="1", NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "tests/cuda", "-q", "-x", "-p", "no:cacheprovider",
                        "--deselect", "tests/cuda/test_in_simulator.py::test_cuda_suite_in_simulator"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and "error" not in r.stdout.splitlines()[-1]
