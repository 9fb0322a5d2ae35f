"""An RPC script for ``python -m toolkit.distributed.run -n 3``: init_rpc gets no rank, size or address."""

import os

import toolkit
import toolkit.distributed.rpc as rpc
from tests.distributed.rpc import _funcs as f

rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
rpc.init_rpc(f"worker{rank}")
if rank == 0:
    values = [rpc.rpc_sync(f"worker{r}", f.echo, args=(toolkit.ones(2) * r,)).tolist() for r in range(3)]
    print("RESULT", values, rpc.get_worker_info("worker2"), flush=True)
rpc.shutdown()
