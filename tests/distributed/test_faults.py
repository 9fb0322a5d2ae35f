"""A rank that dies or hangs: the others fail quickly with a clear timeout error instead of hanging."""

from __future__ import annotations

import time

import pytest

from ._launch import mpirun, needs_mpi

pytestmark = needs_mpi


@pytest.mark.parametrize("mode", ["sleep", "exit"])
def test_dead_or_hung_rank_times_out_clearly(mode):
    t0 = time.perf_counter()
    proc = mpirun(2, "worker_fault.py", mode, timeout=60)
    elapsed = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "DistBackendError: [rank 0] toolkit.distributed: all_reduce on process group '0' (ranks [0, 1]) " \
           "timed out after 2 s (Timeout(ms)=2000)" in out
    assert "another rank of the group died, hung, or did not call the same operation" in out
    assert "unreachable" not in out
    # The whole job ends (MPI_Abort at exit): the hung rank, asleep for 120 s, is killed too.
    assert elapsed < 30, f"the job took {elapsed:.1f} s"
