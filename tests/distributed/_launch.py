"""Start real MPI jobs from the tests: ``mpirun -n N python worker.py ...`` (or the toolkit launcher)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest
from filelock import FileLock

from toolkit.distributed.run import mpirun_command, mpirun_env

WORKERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workers")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _missing() -> str | None:
    if shutil.which("mpirun") is None:
        return "Open MPI is not installed (mpirun not found): `make mpi` installs openmpi-bin and mpi4py as root"
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed in the venv: `make mpi` installs it once Open MPI is present"
    return None


needs_mpi = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def worker(name: str) -> str:
    return os.path.join(WORKERS, name)


def mpirun(n: int, script: str, *args: str, timeout: float = 120, launcher: bool = False
           ) -> subprocess.CompletedProcess:
    """Run a worker script on ``n`` processes; stdout and stderr are captured as text."""
    env = mpirun_env()
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if launcher:
        cmd = [sys.executable, "-m", "toolkit.distributed.run", "-n", str(n), worker(script), *args]
    else:
        cmd = mpirun_command(n, [worker(script), *args])
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def check(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, f"MPI job failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"


def shared_job(tmp_path_factory, key: str, n: int, script: str, *args: str, launcher: bool = False) -> str:
    """Run an MPI job once per test session, even with pytest-xdist's several workers: the first worker runs
    it under a file lock, the others read its output directory. Returns that directory (stdout in job.json)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    out = os.path.join(root, key)
    with FileLock(out + ".lock"):
        done = os.path.join(out, "job.json")
        if not os.path.exists(done):
            os.makedirs(out, exist_ok=True)
            proc = mpirun(n, script, out, *args, launcher=launcher)
            with open(done, "w") as f:
                json.dump({"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}, f)
        with open(done) as f:
            job = json.load(f)
    assert job["returncode"] == 0, f"MPI job failed ({job['returncode']}):\n{job['stdout'][-4000:]}\n" \
                                   f"{job['stderr'][-4000:]}"
    return out
