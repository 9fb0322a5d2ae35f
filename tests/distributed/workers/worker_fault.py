"""Rank 1 hangs, leaves or misbehaves while rank 0 waits for it; ``sys.argv[1]`` says how.

- ``sleep``: rank 1 hangs (sleeps 600 s) while rank 0 all-reduces with a 2 s timeout.
- ``exit`` / ``raise``: rank 1 exits (``sys.exit(0)``) / raises ``ValueError`` while rank 0 all-reduces with the default
  30-minute timeout.
- ``exit_recv``: rank 1 exits while rank 0 waits in ``recv`` from it.
- ``exit_poll``: rank 1 exits while rank 0 polls ``is_completed()`` of an ``irecv`` from it.
- ``send_then_exit``: rank 1 sends a tensor and exits; rank 0 receives it only after rank 1's exit notice arrived
  (the message must still be delivered), then all-reduces.
- ``raise_idle``: rank 1 raises while rank 0 computes (sleeps 600 s) without calling any collective.
- ``size``: rank 0 sends 5 elements into rank 1's ``recv`` of 3; both go on with an all_reduce.
"""

from __future__ import annotations

import datetime
import sys
import time

import toolkit
import toolkit.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=2) if mode == "sleep" else None)
dist.barrier()
rank = dist.get_rank()

if mode == "size":
    if rank == 0:
        dist.send(toolkit.ones(5), dst=1)
        print("rank 0: send completed", flush=True)
    else:
        try:
            dist.recv(toolkit.zeros(3), src=0)
        except RuntimeError as e:
            print(f"rank 1: recv raised {type(e).__name__}: {e}", flush=True)
    t = toolkit.ones(2)
    dist.all_reduce(t)  # the group still works on both ranks
    print(f"rank {rank}: all_reduce after the mismatch gave {t.tolist()}", flush=True)
    dist.destroy_process_group()
    sys.exit(0)

if rank == 1:
    if mode == "sleep":
        time.sleep(600)
        print("rank 1 woke up: it was never killed", flush=True)
    if mode == "raise" or mode == "raise_idle":
        raise ValueError("rank 1's data is bad")
    if mode == "send_then_exit":
        dist.send(toolkit.arange(4.0), dst=0)
    sys.exit(0)

if mode == "raise_idle":
    time.sleep(600)
    print("rank 0 woke up: it was never killed", flush=True)
if mode == "exit_recv":
    dist.recv(toolkit.zeros(4), src=1)
    print("unreachable: the recv should have failed", flush=True)
if mode == "exit_poll":
    work = dist.irecv(toolkit.zeros(4), src=1)
    while not work.is_completed():
        pass
    print(f"rank 0: is_completed() is True, is_success() is {work.is_success()}", flush=True)
    work.wait()
    print("unreachable: wait() should have raised", flush=True)
if mode == "send_then_exit":
    from toolkit.distributed._notices import NOTICES

    while 1 not in NOTICES.departed:  # rank 1 has sent, then exited: its notice arrived before the recv starts
        NOTICES.poll()
    got = toolkit.zeros(4)
    dist.recv(got, src=1)
    print(f"rank 0 received {got.tolist()}", flush=True)
dist.all_reduce(toolkit.ones(3))
print("unreachable: the all_reduce should have failed", flush=True)
