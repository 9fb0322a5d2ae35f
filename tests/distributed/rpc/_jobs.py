"""Start the test scenarios of ``_worker`` as real worker processes on 127.0.0.1, and always clean them up."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(scenario: str, world: int, out_dir, timeout: float = 90, killed: tuple[int, ...] = ()) -> list[dict]:
    """Run ``scenario`` on ``world`` processes; the dict each rank wrote (its ``error`` when its script failed),
    None for the ranks in ``killed`` (which the scenario kills)."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
        env.pop(var, None)
    procs = [subprocess.Popen([sys.executable, "-m", "tests.distributed.rpc._worker", scenario, str(rank),
                               str(world), str(port), str(out_dir)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for rank in range(world)]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=timeout)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    results = []
    for rank in range(world):
        if rank in killed:
            assert procs[rank].returncode < 0, f"rank {rank} of {scenario} was to be killed"
            results.append(None)
            continue
        path = os.path.join(out_dir, f"rank{rank}.json")
        assert os.path.exists(path), f"rank {rank} of {scenario} wrote no result; output:\n" + "\n".join(logs)
        with open(path) as fh:
            result = json.load(fh)
        assert "error" not in result, f"rank {rank} of {scenario} failed:\n{result['error']}\noutput:\n{logs[rank]}"
        results.append(result)
    return results
