"""Distributed benchmarks on real MPI jobs (Open MPI, shared memory on one machine).

Targets: all_reduce of 10M float32 between 2 processes within 10% of the raw mpi4py ``Allreduce``;
DDP training step of the seed's Net (batch 64 per process) with 2 processes against 1 process.

``main()`` starts the jobs with ``python -m toolkit.distributed.run`` (mpirun with this machine's flags), a
fresh job per round; this file is also the module each rank runs (``--worker allreduce|ddp``), printing its
timings as JSON from rank 0. Every process here is toolkit (and mpi4py) only: there is no PyTorch comparison,
and a rank refuses to report if torch was loaded beside toolkit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from .common import cell, ratio
from .harness import REPEAT, REPO, ROUNDS, Timing

SAMPLES = 2 * REPEAT  # timed calls of each kind per job (10 by default), each started together after a barrier


# -- the ranks' work: runs inside the MPI job, toolkit only -----------------------------------------------------
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
    samples = {key: [] for key in fns}
    for fn in fns.values():
        fn()
    for _ in range(SAMPLES):  # interleaved, each started together after a barrier
        for key, fn in fns.items():
            comm.Barrier()
            t0 = time.perf_counter()
            fn()
            samples[key].append(time.perf_counter() - t0)
    return samples


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
    samples = []
    for _ in range(SAMPLES):
        dist.barrier()
        t0 = time.perf_counter()
        step()
        samples.append(time.perf_counter() - t0)
    return {"step": samples}


def _worker(kind: str) -> None:
    res = _allreduce_worker() if kind == "allreduce" else _ddp_worker()
    import toolkit.distributed as dist

    if "torch" in sys.modules:
        raise RuntimeError("a benchmark rank loaded torch beside toolkit; its timings would not be toolkit's alone")
    if dist.get_rank() == 0:
        print(json.dumps(res), flush=True)
    dist.destroy_process_group()


# -- jobs and tables ---------------------------------------------------------------------------------------------
def _job(n: int, kind: str) -> dict:
    """One MPI job of ``n`` ranks; rank 0's samples, or ``{"error": why}``. The launcher is toolkit's own
    command line, so this (the parent) process imports neither toolkit nor torch."""
    cmd = [sys.executable, "-m", "toolkit.distributed.run", "-n", str(n), "-m", "benchmarks.bench_distributed",
           "--worker", kind]
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"error": f"{kind} job on {n} processes timed out"}
    line = next((s for s in out.stdout.splitlines() if s.startswith("{")), None)
    if out.returncode != 0 or line is None:
        last = (out.stderr.strip().splitlines() or out.stdout.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return {"error": f"{kind} job on {n} processes failed: {last}"}
    return json.loads(line)


def _collect() -> dict:
    """``ROUNDS`` rounds of the three jobs (all_reduce on 2, DDP on 1, DDP on 2), each a fresh job, interleaved."""
    keys = ("ours", "async", "raw", "raw_nb", "one", "two")
    out = {k: Timing([]) for k in keys}
    for _ in range(ROUNDS):
        for job, n, names in (("allreduce", 2, {k: k for k in keys[:4]}), ("ddp", 1, {"one": "step"}),
                              ("ddp", 2, {"two": "step"})):
            res = _job(n, job)
            for key, field in names.items():
                if "error" in res:
                    out[key].error = res["error"]
                else:
                    out[key].samples.extend(res[field])
    return out


def main() -> str:
    head = ["### Distributed (MPI)", "",
            "Target: all_reduce of 10M float32 between 2 processes within 10% of the raw mpi4py call; DDP step "
            "time of 2 processes against 1.", ""]
    if shutil.which("mpirun") is None:
        return "\n".join(head + ["Not run: Open MPI is not installed (`make mpi`).", ""])
    t = _collect()
    if not any(v.samples for v in t.values()):
        return "\n".join(head + [f"Not run: {t['ours'].error or t['one'].error}", ""])
    out = head + [f"Each figure is best / median over {ROUNDS} fresh MPI jobs of {SAMPLES} timed calls each (rank 0's "
                  "clock, every call started after a barrier); ratios are of the best figures. Every rank runs "
                  "toolkit and mpi4py only.", "",
                  "| case | toolkit | raw mpi4py | ratio |", "|---|---|---|---|",
                  f"| all_reduce 10M float32, 2 processes | {cell(t['ours'])} | {cell(t['raw'])} "
                  f"| {ratio(t['ours'], t['raw'])} |",
                  f"| all_reduce(async_op=True).wait(), same | {cell(t['async'])} | {cell(t['raw'])} "
                  f"| {ratio(t['async'], t['raw'])} |",
                  f"| all_reduce, against raw Iallreduce().Wait() | {cell(t['ours'])} | {cell(t['raw_nb'])} "
                  f"| {ratio(t['ours'], t['raw_nb'])} |",
                  "", "| seed Net training step, batch 64 per process (SGD, momentum) | 2 processes (DDP) | "
                  "1 process | ratio |", "|---|---|---|---|",
                  f"| step time | {cell(t['two'])} | {cell(t['one'])} | {ratio(t['two'], t['one'])} |", ""]
    return "\n".join(out)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        _worker(sys.argv[sys.argv.index("--worker") + 1])
    else:
        print(main())
