"""A rank that hangs, exits or raises: the others fail with a clear error naming it instead of waiting.

A hung rank is found by the group's timeout (2 s here). A rank that exits or raises tells the others at once, so they
fail whatever their timeout: these jobs keep the default 30-minute one, and each subprocess timeout below (far
shorter) only guards against a hang; it measures nothing.
"""

from __future__ import annotations

from ._launch import mpirun, needs_mpi

pytestmark = needs_mpi

_GROUP = "toolkit.distributed: all_reduce on process group '0' (ranks [0, 1])"


def _run(mode: str) -> str:
    proc = mpirun(2, "worker_fault.py", mode, timeout=240)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "unreachable" not in out and "woke up" not in out, out
    return out


def test_hung_rank_times_out_clearly():
    out = _run("sleep")
    assert f"DistBackendError: [rank 0] {_GROUP} timed out after 2 s (Timeout(ms)=2000)" in out
    assert "another rank of the group died, hung, or did not call the same operation" in out
    # The whole job ends (MPI_Abort at exit): the hung rank is killed in its sleep, never reaching its next line.


def test_rank_that_exits_fails_the_others_at_once():
    out = _run("exit")
    assert f"DistBackendError: [rank 0] {_GROUP} cannot complete: rank 1 exited (end of its script or sys.exit). " \
           "The group is aborted" in out, out
    assert "timed out" not in out


def test_rank_that_raises_fails_the_others_at_once():
    out = _run("raise")
    assert "ValueError: rank 1's data is bad" in out  # rank 1's own traceback
    assert f"DistBackendError: [rank 0] {_GROUP} cannot complete: rank 1 raised ValueError: rank 1's data is " \
           "bad. The group is aborted" in out, out
    assert "timed out" not in out


def test_recv_from_a_rank_that_exited_fails_at_once():
    out = _run("exit_recv")
    assert "DistBackendError: [rank 0] toolkit.distributed: recv from rank 1 on process group '0' (ranks [0, 1]) " \
           "cannot complete: rank 1 exited" in out, out


def test_polled_work_of_a_rank_that_exited_completes_with_its_error():
    out = _run("exit_poll")
    assert "rank 0: is_completed() is True, is_success() is False" in out, out
    assert "DistBackendError: [rank 0] toolkit.distributed: recv from rank 1 on process group '0' (ranks [0, 1]) " \
           "cannot complete: rank 1 exited" in out, out


def test_message_sent_before_exiting_is_still_received():
    out = _run("send_then_exit")
    assert "rank 0 received [0.0, 1.0, 2.0, 3.0]" in out, out
    assert f"{_GROUP} cannot complete: rank 1 exited" in out, out


def test_rank_that_raises_ends_a_job_whose_other_ranks_do_not_wait_for_it():
    # Rank 0 computes (sleeps 600 s) and never calls a collective: rank 1's error ends the job (MPI_Abort after a
    # short grace) instead of leaving it to rank 0, which _run checks never wakes up.
    out = _run("raise_idle")
    assert "ValueError: rank 1's data is bad" in out
    assert "[rank 1] toolkit.distributed: rank(s) [0] still running" in out, out
    assert "aborting the MPI job" in out


def test_send_recv_size_mismatch_is_named_and_both_ranks_go_on():
    proc = mpirun(2, "worker_fault.py", "size", timeout=240)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "rank 1: recv raised RuntimeError: recv: expected 3 elements (float32[3], 12 bytes) from rank 0 but the " \
           "message has 5 (20 bytes): the sent and the receiving tensor must have the same number of elements " \
           "and dtype" in out, out
    assert "rank 0: send completed" in out
    for r in range(2):
        assert f"rank {r}: all_reduce after the mismatch gave [2.0, 2.0]" in out, out
