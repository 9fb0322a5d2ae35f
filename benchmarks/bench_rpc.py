"""RPC benchmarks: toolkit.distributed.rpc (ZeroMQ) against torch.distributed.rpc (TensorPipe), 2 processes.

Round-trip latency of a small ``rpc_sync`` (a 2-element tensor there and back) and the time to send a 10M
float32 tensor (40 MB) with a small reply. Each round is a fresh pair of processes per library, the libraries'
jobs interleaved; a job runs one library only (``--worker LIB RANK PORT``: this file is also the module its
processes run), and rank 0 prints its timings as JSON.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

from .common import cell, ratio
from .harness import REPEAT, REPO, ROUNDS, Timing

SMALL_CALLS = 200  # small round trips per timed sample
BIG_ELEMENTS = 10_000_000


def echo(x):
    return x


def numel(x) -> int:
    return int(x.numel())


def _worker(lib_name: str, rank: int, port: int) -> None:
    if lib_name == "torch":
        import torch as lib
        import torch.distributed.rpc as rpc
    else:
        import toolkit as lib
        import toolkit.distributed.rpc as rpc
    opts = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{port}", rpc_timeout=120)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=2, rpc_backend_options=opts)
    if rank == 0:
        small = lib.ones(2)
        big = lib.from_numpy(np.ones(BIG_ELEMENTS, dtype=np.float32))
        for _ in range(20):
            rpc.rpc_sync("worker1", echo, args=(small,))
        rpc.rpc_sync("worker1", numel, args=(big,))
        samples: dict = {"small": [], "big": []}
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            for _ in range(SMALL_CALLS):
                rpc.rpc_sync("worker1", echo, args=(small,))
            samples["small"].append((time.perf_counter() - t0) / SMALL_CALLS)
            t0 = time.perf_counter()
            assert rpc.rpc_sync("worker1", numel, args=(big,)) == BIG_ELEMENTS
            samples["big"].append(time.perf_counter() - t0)
        print(json.dumps(samples), flush=True)
    rpc.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _job(lib_name: str) -> dict:
    """One pair of processes running ``lib_name``; rank 0's samples, or ``{"error": why}``."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-m", "benchmarks.bench_rpc", "--worker", lib_name, str(rank),
                               str(port)], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for rank in (0, 1)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=600))
    except subprocess.TimeoutExpired:
        return {"error": f"{lib_name} RPC job timed out"}
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    line = next((s for s in outs[0][0].splitlines() if s.startswith("{")), None)
    if any(p.returncode != 0 for p in procs) or line is None:
        err = next((o[1].strip().splitlines()[-1] for o in outs if o[1].strip()), "no output")
        return {"error": f"{lib_name} RPC job failed: {err}"}
    return json.loads(line)


def main() -> str:
    head = ["### RPC (2 processes, 127.0.0.1)", "",
            f"Small round trip: `rpc_sync` of a 2-element tensor echoed back (mean of {SMALL_CALLS} calls per "
            "sample); 10M float32: `rpc_sync` sending a 40 MB tensor, replying with its size. toolkit: ZeroMQ; "
            "torch: TensorPipe. Each figure is best / median over "
            f"{ROUNDS} fresh pairs of processes per library (interleaved), {REPEAT} samples each.", ""]
    t = {(lib, k): Timing([]) for lib in ("toolkit", "torch") for k in ("small", "big")}
    for _ in range(ROUNDS):
        for lib in ("toolkit", "torch"):
            res = _job(lib)
            for k in ("small", "big"):
                if "error" in res:
                    t[(lib, k)].error = res["error"]
                else:
                    t[(lib, k)].samples.extend(res[k])
    rows = [("small rpc_sync round trip", "small"), ("send 10M float32", "big")]
    out = head + ["| case | toolkit | torch | ratio |", "|---|---|---|---|"]
    for label, k in rows:
        out.append(f"| {label} | {cell(t[('toolkit', k)])} | {cell(t[('torch', k)])} "
                   f"| {ratio(t[('toolkit', k)], t[('torch', k)])} |")
    return "\n".join(out + [""])


if __name__ == "__main__":
    if "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        _worker(sys.argv[i + 1], int(sys.argv[i + 2]), int(sys.argv[i + 3]))
    else:
        print(main())
