"""One RPC worker process of the tests: ``python -m tests.distributed.rpc._worker SCENARIO RANK WORLD PORT OUT``.

Rank 0 drives each scenario and writes what it saw to ``OUT/rank0.json``; every rank writes ``OUT/rank{r}.json``
(an ``error`` entry when its script failed); the test reads them back.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback

import numpy as np

import toolkit
import toolkit.distributed.rpc as rpc

from . import _dist_autograd_jobs as da
from . import _funcs as f


def _init(name: str, rank: int, world: int, port: int, **options) -> None:
    opts = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{port}", **options)
    rpc.init_rpc(name, rank=rank, world_size=world, rpc_backend_options=opts)


def _error_of(fn) -> dict:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test reads what was raised
        return {"type": type(e).__name__, "module": type(e).__module__, "msg": str(e)}
    return {"type": None}


def basic(rank: int, world: int, port: int) -> dict:
    # Rank and world size from Open MPI's variables (as under toolkit.distributed.run), the address from env://.
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMPI_COMM_WORLD_RANK=str(rank),
                      OMPI_COMM_WORLD_SIZE=str(world))
    rpc.init_rpc(f"worker{rank}")
    out: dict = {}
    if rank == 0:
        a = toolkit.randn(3, 4)
        out["sync"] = rpc.rpc_sync("worker1", toolkit.add, args=(a, 1)).tolist()
        out["sync_expected"] = (a + 1).tolist()
        out["transposed"] = rpc.rpc_sync("worker1", f.echo, args=(a.t(),)).tolist() == a.t().tolist()
        fut = rpc.rpc_async(rpc.get_worker_info("worker1"), toolkit.mul, args=(a, a))
        out["async"] = fut.then(lambda fu: fu.wait().sum().item()).wait()
        out["async_expected"] = (a * a).sum().item()
        out["python"] = rpc.rpc_sync(1, f.add_kw, args=(1, 2), kwargs={"c": 3})
        out["builtin"] = rpc.rpc_sync("worker1", max, args=([3, 9, 4],))
        out["nested_values"] = rpc.rpc_sync("worker1", f.echo, args=({"x": [a, (1, "s")], "y": None},))["x"][0] \
            .tolist() == a.tolist()
        out["self"] = rpc.rpc_sync("worker0", f.add_kw, args=(5,), kwargs={"b": 1})
        out["worker_info"] = [repr(rpc.get_worker_info()), repr(rpc.get_worker_info("worker1"))]
        out["requires_grad"] = rpc.rpc_sync("worker1", f.echo, args=(toolkit.ones(2, requires_grad=True),)) \
            .requires_grad
        big = toolkit.from_numpy(np.random.default_rng(0).standard_normal(10_000_000).astype(np.float32))
        back = rpc.rpc_sync("worker1", f.echo, args=(big,))
        out["big_equal"] = bool(np.array_equal(back.numpy(), big.numpy()))
        out["unknown_worker"] = _error_of(lambda: rpc.rpc_sync("nobody", f.echo, args=(1,)))
        out["local_function"] = _error_of(lambda: rpc.rpc_sync("worker1", lambda: 1))
        out["late"] = rpc.rpc_async("worker1", f.sleep_then, args=(0.3, "done"))  # shutdown waits for it
    rpc.shutdown()
    if rank == 0:
        out["late"] = out["late"].wait()
    return out


def _driven(drive, **options):
    """A scenario in which rank 0 runs ``drive()`` while the other workers serve, then all shut down."""

    def scenario(rank: int, world: int, port: int) -> dict:
        _init(f"worker{rank}", rank, world, port, **options)
        out = drive() if rank == 0 else {}
        rpc.shutdown()
        return out

    scenario.__name__ = drive.__name__
    return scenario


def errors() -> dict:
    out: dict = {}
    out["value_error"] = _error_of(lambda: rpc.rpc_sync("worker1", f.raise_value_error, args=(3,)))
    out["custom"] = _error_of(lambda: rpc.rpc_async("worker1", f.raise_callee_error).wait())
    out["timeout"] = _error_of(lambda: rpc.rpc_sync("worker1", f.sleep_then, args=(1.5, 1), timeout=0.3))
    out["after_timeout"] = rpc.rpc_sync("worker1", f.echo, args=("still up",))
    rref = rpc.remote("worker1", f.raise_value_error, args=(7,))
    out["remote_error"] = _error_of(rref.to_here)
    pending = rpc.rpc_async("worker1", f.sleep_then, args=(0.2, 1))  # its callback runs on the IO thread
    chained = pending.then(lambda fu: rpc.rpc_sync("worker1", f.echo, args=(2,)))
    out["wait_in_callback"] = _error_of(chained.wait)
    return out


def rrefs() -> dict:
    out: dict = {}
    rref = rpc.remote("worker1", f.make_tracked, args=(5,))
    out["to_here"] = rref.to_here().tolist()
    out["identity"] = [rref.is_owner(), rref.owner_name(), repr(rref.owner()), rref.confirmed_by_owner()]
    out["local_value"] = _error_of(rref.local_value)
    out["one_user"] = rpc.rpc_sync("worker1", f.wait_for_forks, args=(1, 1))
    out["held_by"] = rpc.rpc_sync("worker2", f.hold, args=(rref,))
    out["two_users"] = rpc.rpc_sync("worker1", f.wait_for_forks, args=(2, 1))
    out["third_party_sum"] = rpc.rpc_sync("worker2", f.fetch_sum, args=(rref,)).item()
    out["owner_sees_owner"] = rpc.rpc_sync("worker1", f.echo, args=(rref,)) is not None
    del rref
    gc.collect()
    out["after_first_drop"] = rpc.rpc_sync("worker1", f.wait_for_forks, args=(1, 1))
    out["alive_before_last"] = rpc.rpc_sync("worker1", f.tracked_alive)
    out["dropped"] = rpc.rpc_sync("worker2", f.drop_held)
    out["after_last_drop"] = rpc.rpc_sync("worker1", f.wait_for_forks, args=(0, 0))
    out["alive_after_last"] = rpc.rpc_sync("worker1", f.tracked_alive)
    counter = rpc.remote("worker2", f.Counter, args=(10,))
    out["proxy_sync"] = counter.rpc_sync().add(5)
    out["proxy_async"] = counter.rpc_async().add(1).wait()
    out["proxy_remote"] = counter.remote().add(1).to_here()
    local = rpc.RRef(toolkit.ones(2))
    out["local_rref"] = [repr(local).startswith("OwnerRRef("), local.is_owner(), local.to_here().tolist(),
                         local.confirmed_by_owner()]
    out["sum_of_local"] = rpc.rpc_sync("worker2", f.fetch_sum, args=(local,)).item()
    mine = rpc.remote("worker0", f.Counter, args=(1,))
    out["remote_to_self"] = [mine.is_owner(), mine.rpc_sync().add(1), mine.local_value().count]
    del counter, local, mine
    gc.collect()
    out["end_counts"] = {w: rpc.rpc_sync(w, f.wait_for_forks, args=(0, 0))
                         for w in ("worker0", "worker1", "worker2")}
    return out


def nested() -> dict:
    out: dict = {}
    out["path"] = rpc.rpc_sync("worker1", f.nested_ping, args=(5, ["start"]))
    futs = [rpc.rpc_async("worker1", f.nested_ping, args=(2, [i])) for i in range(8)]
    out["many"] = [fu.wait() for fu in futs]
    return out


def killed(rank: int, world: int, port: int) -> dict:
    _init(f"worker{rank}", rank, world, port, rpc_timeout=30)
    out: dict = {}
    if rank == 0:
        slow = rpc.rpc_async("worker2", f.sleep_then, args=(0.2, "ok"))
        out["killed"] = _error_of(lambda: rpc.rpc_sync("worker1", f.kill_self))
        out["after"] = _error_of(lambda: rpc.rpc_sync("worker1", f.echo, args=(1,)))
        out["others_fine"] = [slow.wait(), rpc.rpc_sync("worker2", f.echo, args=("alive",))]
        out["shutdown"] = _error_of(lambda: rpc.shutdown(graceful=True))
    elif rank == 2:
        out["shutdown"] = _error_of(lambda: rpc.shutdown(graceful=True))
    else:
        time.sleep(60)  # killed by its own call before this ends
    return out


def duplicate(rank: int, world: int, port: int) -> dict:
    return {"init": _error_of(lambda: _init("same", rank, world, port))}


SCENARIOS = {"basic": basic, "errors": _driven(errors), "rrefs": _driven(rrefs),
             "nested": _driven(nested, num_worker_threads=4), "killed": killed, "duplicate": duplicate,
             "dist_autograd_chain": _driven(da.chain), "dist_autograd_dmp": _driven(da.dmp),
             "profiled": _driven(da.profiled)}


def main() -> int:
    scenario, rank, world, port, out_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), \
        sys.argv[5]
    try:
        result = SCENARIOS[scenario](rank, world, port)
    except BaseException:  # noqa: BLE001 - reported to the test
        result = {"error": traceback.format_exc()}
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as fh:
        json.dump(result, fh, default=repr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
