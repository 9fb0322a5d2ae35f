"""A rank that dies or hangs: the others fail quickly with a clear timeout error instead of hanging."""

from __future__ import annotations

import pytest

from ._launch import mpirun, needs_mpi

pytestmark = needs_mpi


@pytest.mark.parametrize("mode", ["sleep", "exit"])
def test_dead_or_hung_rank_times_out_clearly(mode):
    # The hung rank sleeps 600 s; a job that did not abort would outlive this limit and fail with TimeoutExpired.
    proc = mpirun(2, "worker_fault.py", mode, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "DistBackendError: [rank 0] toolkit.distributed: all_reduce on process group '0' (ranks [0, 1]) " \
           "timed out after 2 s (Timeout(ms)=2000)" in out
    assert "another rank of the group died, hung, or did not call the same operation" in out
    assert "unreachable" not in out
    # The whole job ends (MPI_Abort at exit): the hung rank is killed in its sleep, never reaching its next line.
    assert "woke up" not in out
