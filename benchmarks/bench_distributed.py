"""Distributed benchmarks on real MPI jobs (Open MPI, shared memory on one machine).

Targets: all_reduce of 10M float32 between 2 processes within 10% of the raw mpi4py ``Allreduce``;
DDP training step of the seed's Net (batch 64 per process) with 2 processes against 1 process.

``main()`` starts the jobs with ``mpirun`` (through toolkit.distributed.run's command line); this file is also
the worker each rank runs (``--worker allreduce|ddp``), printing its timings as JSON from rank 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

REPEAT = 10


def _allreduce_worker() -> dict:
    import toolkit
    import toolkit.distributed as dist
    from toolkit.distributed._mpi import mpi

    dist.init_process_group()
    MPI = mpi()
    comm = MPI.COMM_WORLD
    arr = np.ones(10_000_000, dtype=np.float32)
    t = toolkit.ones(10_000_000)

    def raw():
        comm.Allreduce(MPI.IN_PLACE, arr, MPI.SUM)

    def raw_nonblocking():
        comm.Iallreduce(MPI.IN_PLACE, arr, MPI.SUM).Wait()

    def ours():
        dist.all_reduce(t)

    def ours_async():
        dist.all_reduce(t, async_op=True).wait()

    fns = {"raw": raw, "raw_nb": raw_nonblocking, "ours": ours, "async": ours_async}
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()
    for _ in range(REPEAT):  # interleaved, best of REPEAT, each started together after a barrier
        for key, fn in fns.items():
            comm.Barrier()
            t0 = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - t0)
    return best


def _ddp_worker() -> dict:
    import toolkit
    import toolkit.distributed as dist
    from toolkit.demo import seed_net
    from toolkit.nn.parallel import DistributedDataParallel

    dist.init_process_group()
    rng = np.random.default_rng(dist.get_rank())
    x = toolkit.from_numpy(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = toolkit.from_numpy(rng.integers(0, 10, 64))
    toolkit.manual_seed(0)
    net = seed_net()
    model = DistributedDataParallel(net) if dist.get_world_size() > 1 else net
    opt = toolkit.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        toolkit.nn.functional.nll_loss(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    best = float("inf")
    for _ in range(REPEAT):
        dist.barrier()
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
    return {"step": best}


def _job(n: int, kind: str) -> dict:
    from toolkit.distributed.run import mpirun_command, mpirun_env

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = mpirun_env()
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cmd = mpirun_command(n, [os.path.abspath(__file__), "--worker", kind])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=root)
    if out.returncode != 0:
        raise RuntimeError(f"benchmark job failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    line = next(s for s in out.stdout.splitlines() if s.startswith("{"))
    return json.loads(line)


def main() -> str:
    from .common import fmt

    head = ["### Distributed (MPI)", "",
            "Target: all_reduce of 10M float32 between 2 processes within 10% of the raw mpi4py call; DDP step "
            "time of 2 processes against 1.", ""]
    if shutil.which("mpirun") is None:
        return "\n".join(head + ["Not run: Open MPI is not installed (`make mpi`).", ""])
    ar = _job(2, "allreduce")
    one, two = _job(1, "ddp"), _job(2, "ddp")
    out = head + ["| case | toolkit | raw mpi4py | ratio |", "|---|---|---|---|",
                  f"| all_reduce 10M float32, 2 processes | {fmt(ar['ours']).strip()} | {fmt(ar['raw']).strip()} "
                  f"| {ar['ours'] / ar['raw']:.2f}x |",
                  f"| all_reduce(async_op=True).wait(), same | {fmt(ar['async']).strip()} | {fmt(ar['raw']).strip()} "
                  f"| {ar['async'] / ar['raw']:.2f}x |",
                  f"| all_reduce, against raw Iallreduce().Wait() | {fmt(ar['ours']).strip()} | "
                  f"{fmt(ar['raw_nb']).strip()} | {ar['ours'] / ar['raw_nb']:.2f}x |",
                  "", "| seed Net training step, batch 64 per process (SGD, momentum) | 2 processes (DDP) | "
                  "1 process | ratio |", "|---|---|---|---|",
                  f"| step time | {fmt(two['step']).strip()} | {fmt(one['step']).strip()} | "
                  f"{two['step'] / one['step']:.2f}x |", ""]
    return "\n".join(out)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        kind = sys.argv[sys.argv.index("--worker") + 1]
        res = _allreduce_worker() if kind == "allreduce" else _ddp_worker()
        import toolkit.distributed as dist

        if dist.get_rank() == 0:
            print(json.dumps(res), flush=True)
        dist.destroy_process_group()
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from benchmarks import bench_distributed

        print(bench_distributed.main())
