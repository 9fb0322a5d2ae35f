"""Run every collective on every rank and store the results for tests/distributed/test_collectives.py.

Usage: mpirun -n N python worker_collectives.py OUT_DIR. Rank r's input of a case is ``inp(r, shape, dtype)``;
the test recomputes the expected results with numpy. Results go to OUT_DIR/rank{r}.npz, notes (errors,
returned ranks, Work states) to OUT_DIR/rank{r}.json.
"""

from __future__ import annotations

import datetime
import json
import os
import sys

import numpy as np

import toolkit
import toolkit.distributed as dist

OPS = ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]


def inp(r: int, shape=(2, 3), dtype=np.float32) -> np.ndarray:
    n = int(np.prod(shape))
    return ((np.arange(n) % 5 + 1 + r) * (1 if r % 2 == 0 else -1) + 0.5 * (r + 1)).reshape(shape).astype(dtype)


def main(out_dir: str) -> None:
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    res: dict[str, np.ndarray] = {}
    notes: dict = {"rank": r, "world_size": n, "backend": str(dist.get_backend()),
                   "initialized": dist.is_initialized()}

    def run(name: str, fn, *outs):
        """Call a collective synchronously and as async_op, keeping the outputs of both."""
        for mode in ("sync", "async"):
            tensors = outs[0]() if callable(outs[0]) else outs
            ret = fn(tensors, mode == "async")
            if mode == "async":
                assert isinstance(ret, dist.Work), f"{name}: async_op=True returned {ret!r}"
                assert ret.wait() is True
                assert ret.is_completed() and ret.is_success()
            else:
                assert ret is None, f"{name}: sync call returned {ret!r}"
            flat = tensors if isinstance(tensors, (list, tuple)) else [tensors]
            for i, t in enumerate(flat):
                if t is not None:
                    res[f"{name}/{mode}/{i}"] = t.numpy().copy()

    for dtype in (np.float32, np.int64):
        for op in OPS:
            run(f"all_reduce/{np.dtype(dtype).name}/{op}",
                lambda ts, a, op=op: dist.all_reduce(ts[0], op=getattr(dist.ReduceOp, op), async_op=a),
                lambda dtype=dtype: [toolkit.from_numpy(inp(r, dtype=dtype))])
    run("all_reduce/float64/transposed", lambda ts, a: dist.all_reduce(ts[0], async_op=a),
        lambda: [toolkit.from_numpy(inp(r, (3, 4), np.float64)).t()])
    run("all_reduce/float16/SUM", lambda ts, a: dist.all_reduce(ts[0], async_op=a),
        lambda: [toolkit.from_numpy(inp(r, (5,), np.float16))])
    run("all_reduce/bool/MAX", lambda ts, a: dist.all_reduce(ts[0], op=dist.ReduceOp.MAX, async_op=a),
        lambda: [toolkit.from_numpy(np.array([r == 0, False, True]))])
    run("all_reduce/int32/BXOR", lambda ts, a: dist.all_reduce(ts[0], op=dist.ReduceOp.BXOR, async_op=a),
        lambda: [toolkit.from_numpy(np.array([1 << r, 3, r], dtype=np.int32))])
    run("all_reduce/scalar", lambda ts, a: dist.all_reduce(ts[0], async_op=a),
        lambda: [toolkit.tensor(float(r + 1))])
    run("broadcast", lambda ts, a: dist.broadcast(ts[0], src=n - 1, async_op=a),
        lambda: [toolkit.from_numpy(inp(r))])
    run("broadcast/group_src", lambda ts, a: dist.broadcast(ts[0], group_src=1, async_op=a),
        lambda: [toolkit.from_numpy(inp(r, (4,), np.int64))])
    for op in ("SUM", "MAX"):
        run(f"reduce/{op}", lambda ts, a, op=op: dist.reduce(ts[0], dst=1, op=getattr(dist.ReduceOp, op),
                                                             async_op=a),
            lambda: [toolkit.from_numpy(inp(r))])
    run("all_gather", lambda ts, a: dist.all_gather(ts[:n], ts[n], async_op=a),
        lambda: [toolkit.zeros(2, 3) for _ in range(n)] + [toolkit.from_numpy(inp(r))])
    run("all_gather_into_tensor", lambda ts, a: dist.all_gather_into_tensor(ts[0], ts[1], async_op=a),
        lambda: [toolkit.zeros(2 * n, 3), toolkit.from_numpy(inp(r))])
    run("gather", lambda ts, a: dist.gather(ts[-1], ts[:-1] if r == 1 else None, dst=1, async_op=a),
        lambda: ([toolkit.zeros(2, 3) for _ in range(n)] if r == 1 else []) + [toolkit.from_numpy(inp(r))])
    run("scatter", lambda ts, a: dist.scatter(ts[0], [toolkit.from_numpy(inp(k)) for k in range(n)]
                                              if r == 0 else None, src=0, async_op=a),
        lambda: [toolkit.zeros(2, 3)])
    for op in ("SUM", "AVG"):
        run(f"reduce_scatter/{op}", lambda ts, a, op=op: dist.reduce_scatter(
            ts[0], [toolkit.from_numpy(inp(r) * (k + 1)) for k in range(n)], op=getattr(dist.ReduceOp, op),
            async_op=a), lambda: [toolkit.zeros(2, 3)])
    run("reduce_scatter_tensor", lambda ts, a: dist.reduce_scatter_tensor(
        ts[0], toolkit.from_numpy(inp(r, (2 * n, 3))), async_op=a), lambda: [toolkit.zeros(2, 3)])
    # all_to_all: rank r sends k + 1 copies of 10 * r + k to rank k.
    run("all_to_all", lambda ts, a: dist.all_to_all(
        ts, [toolkit.full((k + 1,), 10.0 * r + k) for k in range(n)], async_op=a),
        lambda: [toolkit.zeros(r + 1) for _ in range(n)])
    run("all_to_all_single", lambda ts, a: dist.all_to_all_single(
        ts[0], toolkit.from_numpy(inp(r, (n, 2))), async_op=a), lambda: [toolkit.zeros(n, 2)])
    run("barrier", lambda ts, a: dist.barrier(async_op=a), lambda: [None])

    # Point to point: a ring, blocking and non-blocking; recv from any source returns the sender.
    right, left = (r + 1) % n, (r - 1) % n
    got = toolkit.zeros(2, 3)
    if r % 2 == 0:
        dist.send(toolkit.from_numpy(inp(r)), dst=right)
        notes["recv_from"] = dist.recv(got, src=left)
    else:
        notes["recv_from"] = dist.recv(got)
        dist.send(toolkit.from_numpy(inp(r)), dst=right)
    res["recv/sync/0"] = got.numpy().copy()
    got = toolkit.zeros(2, 3)
    rw = dist.irecv(got, src=left, tag=7)
    sw = dist.isend(toolkit.from_numpy(inp(r)), dst=right, tag=7)
    sw.wait()
    rw.wait()
    res["recv/async/0"] = got.numpy().copy()
    notes["irecv_done"] = rw.is_completed()

    # Two async all-reduces in flight at once, waited in reverse order.
    t1, t2 = toolkit.from_numpy(inp(r)), toolkit.from_numpy(inp(r) * 2)
    w1, w2 = dist.all_reduce(t1, async_op=True), dist.all_reduce(t2, async_op=True)
    w2.wait()
    w1.wait()
    res["two_in_flight/0"], res["two_in_flight/1"] = t1.numpy().copy(), t2.numpy().copy()
    notes["result_is_output"] = w1.result()[0] is t1

    # Groups: ranks {0, 1} and the others; group ranks, non-members.
    g = dist.new_group([0, 1])
    notes["group_rank"] = dist.get_rank(g)
    notes["group_size"] = dist.get_world_size(g)
    if g != dist.GroupMember.NON_GROUP_MEMBER:
        t = toolkit.from_numpy(inp(r))
        dist.all_reduce(t, group=g)
        res["group01/all_reduce"] = t.numpy().copy()
        notes["group_ranks"] = dist.get_process_group_ranks(g)
        t = toolkit.from_numpy(inp(r))
        dist.broadcast(t, src=1, group=g)
        res["group01/broadcast"] = t.numpy().copy()
    if n >= 4:
        g13 = dist.new_group([1, 3])
        if g13 != dist.GroupMember.NON_GROUP_MEMBER:
            t = toolkit.from_numpy(inp(r))
            dist.all_reduce(t, op=dist.ReduceOp.MAX, group=g13)
            res["group13/all_reduce"] = t.numpy().copy()
            notes["group13_global_of_1"] = dist.get_global_rank(g13, 1)

    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r, "name": f"r{r}"})
    notes["all_gather_object"] = objs
    lst = [None, None] if r else ["hello", {"k": [1, 2]}]
    dist.broadcast_object_list(lst, src=0)
    notes["broadcast_object_list"] = lst

    # Mismatched calls give the same clear error on every rank, and the group stays usable.
    errors = {}
    for key, fn in [
        ("shape", lambda: dist.all_reduce(toolkit.ones(2 + r))),
        ("dtype", lambda: dist.broadcast(toolkit.ones(2, dtype=toolkit.float32 if r else toolkit.float64), src=0)),
        ("op", lambda: dist.all_reduce(toolkit.ones(2), op=dist.ReduceOp.MAX if r else dist.ReduceOp.SUM)),
        ("all_to_all", lambda: dist.all_to_all([toolkit.zeros(1) for _ in range(n)],
                                               [toolkit.zeros(1 + (r == 0)) for _ in range(n)])),
        ("root", lambda: dist.broadcast(toolkit.ones(2), src=n + 3)),
        ("list_len", lambda: dist.all_gather([toolkit.zeros(2)], toolkit.ones(2))),
        ("list_shape", lambda: dist.all_gather([toolkit.zeros(3) for _ in range(n)], toolkit.ones(2))),
        ("gather_list", lambda: dist.gather(toolkit.ones(2), None, dst=0)),
        ("self_send", lambda: dist.send(toolkit.ones(2), dst=r)),
        ("float_band", lambda: dist.all_reduce(toolkit.ones(2), op=dist.ReduceOp.BAND)),
        ("twice", lambda: dist.init_process_group("mpi")),
        ("backend", lambda: dist.new_group([0], backend="nccl")),
    ]:
        try:
            fn()
            errors[key] = None
        except Exception as e:  # noqa: BLE001
            errors[key] = [type(e).__name__, str(e)]
    notes["errors"] = errors
    t = toolkit.ones(3)
    dist.all_reduce(t)
    notes["after_errors"] = t.tolist()
    dist.barrier()
    dist.destroy_process_group()
    notes["initialized_after_destroy"] = dist.is_initialized()
    np.savez(os.path.join(out_dir, f"rank{r}.npz"), **{k.replace("/", "|"): v for k, v in res.items()})
    with open(os.path.join(out_dir, f"rank{r}.json"), "w") as f:
        json.dump(notes, f)


if __name__ == "__main__":
    main(sys.argv[1])
