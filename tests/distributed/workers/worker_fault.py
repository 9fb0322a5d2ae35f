"""Rank 1 hangs (``sleep``) or exits early (``exit``) while rank 0 all-reduces with a 2 s timeout."""

from __future__ import annotations

import datetime
import sys
import time

import toolkit
import toolkit.distributed as dist

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=2))
dist.barrier()
if dist.get_rank() == 1:
    if sys.argv[1] == "exit":
        sys.exit(0)
    time.sleep(600)
    print("rank 1 woke up: it was never killed", flush=True)
dist.all_reduce(toolkit.ones(3))
print("unreachable: the all_reduce should have timed out", flush=True)
