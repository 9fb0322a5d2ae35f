"""Every collective on real MPI jobs of 2 and 4 processes, sync and async, against numpy references."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from ..conftest import assert_close
from ._launch import needs_mpi, shared_job
from .workers.worker_collectives import OPS, inp

pytestmark = needs_mpi

MODES = ("sync", "async")


@pytest.fixture(scope="module", params=[2, 4], ids=["np2", "np4"])
def job(request, tmp_path_factory):
    """One MPI job per world size runs every case; the tests read its per-rank results."""
    n = request.param
    out = shared_job(tmp_path_factory, f"collectives{n}", n, "worker_collectives.py")
    ranks = []
    for r in range(n):
        with np.load(os.path.join(out, f"rank{r}.npz")) as z:
            res = {k.replace("|", "/"): z[k] for k in z.files}
        with open(os.path.join(out, f"rank{r}.json")) as f:
            ranks.append((res, json.load(f)))
    return n, ranks


def _reduce(arrs, op: str):
    a = np.stack(arrs)
    if op == "SUM":
        return a.sum(0, dtype=a.dtype)
    if op == "PRODUCT":
        return a.prod(0, dtype=a.dtype)
    if op == "MIN":
        return a.min(0)
    if op == "MAX":
        return a.max(0)
    s = a.sum(0, dtype=a.dtype)
    return s / len(arrs) if a.dtype.kind == "f" else np.trunc(s / len(arrs)).astype(a.dtype)


def _same(got, want):
    """Dtype, shape and values; a reduction combines at most one term per rank (jobs of 2 and 4 processes)."""
    assert_close(got, want, accum=4)


def test_init_state(job):
    n, ranks = job
    for r, (_, notes) in enumerate(ranks):
        assert (notes["rank"], notes["world_size"], notes["backend"]) == (r, n, "mpi")
        assert notes["initialized"] and not notes["initialized_after_destroy"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("op", OPS)
def test_all_reduce_ops(job, op, dtype, mode):
    n, ranks = job
    want = _reduce([inp(k, dtype=np.dtype(dtype)) for k in range(n)], op)
    for res, _ in ranks:
        _same(res[f"all_reduce/{dtype}/{op}/{mode}/0"], want)


@pytest.mark.parametrize("mode", MODES)
def test_all_reduce_layouts_and_dtypes(job, mode):
    n, ranks = job
    transposed = sum(inp(k, (3, 4), np.float64) for k in range(n)).T
    half = np.stack([inp(k, (5,), np.float16).astype(np.float32) for k in range(n)]).sum(0).astype(np.float16)
    boolean = np.array([True, False, True])
    xor = np.bitwise_xor.reduce(np.stack([np.array([1 << k, 3, k], np.int32) for k in range(n)]))
    for res, _ in ranks:
        _same(res[f"all_reduce/float64/transposed/{mode}/0"], transposed)
        _same(res[f"all_reduce/float16/SUM/{mode}/0"], half)
        _same(res[f"all_reduce/bool/MAX/{mode}/0"], boolean)
        _same(res[f"all_reduce/int32/BXOR/{mode}/0"], xor)
        _same(res[f"all_reduce/scalar/{mode}/0"], np.array(n * (n + 1) / 2, np.float32))


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_and_reduce(job, mode):
    n, ranks = job
    for r, (res, _) in enumerate(ranks):
        _same(res[f"broadcast/{mode}/0"], inp(n - 1))
        _same(res[f"broadcast/group_src/{mode}/0"], inp(1, (4,), np.int64))
        if r == 1:
            for op in ("SUM", "MAX"):
                _same(res[f"reduce/{op}/{mode}/0"], _reduce([inp(k) for k in range(n)], op))
        else:
            _same(res[f"reduce/SUM/{mode}/0"], inp(r))


@pytest.mark.parametrize("mode", MODES)
def test_gathers_and_scatters(job, mode):
    n, ranks = job
    for r, (res, _) in enumerate(ranks):
        for i in range(n):
            _same(res[f"all_gather/{mode}/{i}"], inp(i))
        _same(res[f"all_gather_into_tensor/{mode}/0"], np.concatenate([inp(k) for k in range(n)]))
        if r == 1:
            for i in range(n):
                _same(res[f"gather/{mode}/{i}"], inp(i))
        _same(res[f"scatter/{mode}/0"], inp(r))
        _same(res[f"reduce_scatter/SUM/{mode}/0"], sum(inp(k) * (r + 1) for k in range(n)))
        _same(res[f"reduce_scatter/AVG/{mode}/0"], sum(inp(k) * (r + 1) for k in range(n)) / n)
        _same(res[f"reduce_scatter_tensor/{mode}/0"], sum(inp(k, (2 * n, 3))[2 * r:2 * r + 2] for k in range(n)))


@pytest.mark.parametrize("mode", MODES)
def test_all_to_all(job, mode):
    n, ranks = job
    for r, (res, _) in enumerate(ranks):
        for j in range(n):
            _same(res[f"all_to_all/{mode}/{j}"], np.full(r + 1, 10.0 * j + r, np.float32))
        _same(res[f"all_to_all_single/{mode}/0"], np.stack([inp(j, (n, 2))[r] for j in range(n)]))


def test_send_recv_ring(job):
    n, ranks = job
    for r, (res, notes) in enumerate(ranks):
        _same(res["recv/sync/0"], inp((r - 1) % n))
        _same(res["recv/async/0"], inp((r - 1) % n))
        assert notes["recv_from"] == (r - 1) % n
        assert notes["irecv_done"]


def test_async_work_semantics(job):
    n, ranks = job
    for res, notes in ranks:
        _same(res["two_in_flight/0"], sum(inp(k) for k in range(n)))
        _same(res["two_in_flight/1"], sum(inp(k) * 2 for k in range(n)))
        assert notes["result_is_output"]


def test_groups(job):
    n, ranks = job
    for r, (res, notes) in enumerate(ranks):
        if r < 2:
            assert (notes["group_rank"], notes["group_size"], notes["group_ranks"]) == (r, 2, [0, 1])
            _same(res["group01/all_reduce"], inp(0) + inp(1))
            _same(res["group01/broadcast"], inp(1))
        else:
            assert (notes["group_rank"], notes["group_size"]) == (-1, -1)
            assert "group01/all_reduce" not in res
        if n >= 4 and r in (1, 3):
            _same(res["group13/all_reduce"], np.maximum(inp(1), inp(3)))
            assert notes["group13_global_of_1"] == 3


def test_object_collectives(job):
    n, ranks = job
    for _, notes in ranks:
        assert notes["all_gather_object"] == [{"rank": k, "name": f"r{k}"} for k in range(n)]
        assert notes["broadcast_object_list"] == ["hello", {"k": [1, 2]}]


def test_mismatches_give_clear_errors_on_every_rank(job):
    n, ranks = job
    for r, (_, notes) in enumerate(ranks):
        e = notes["errors"]
        assert e["shape"][0] == "RuntimeError"
        assert "rank 0 called all_reduce(float32[2], op=SUM), rank 1 called all_reduce(float32[3], op=SUM)" \
            in e["shape"][1]
        assert "rank 0 called broadcast(float64[2], root=0), rank 1 called broadcast(float32[2], root=0)" \
            in e["dtype"][1]
        assert "op=MAX" in e["op"][1]
        assert "all_to_all: rank 0 sends 2 elements to rank" in e["all_to_all"][1]
        assert e["root"] == ["RuntimeError", f"broadcast: invalid root rank: {n + 3} (the group has ranks 0..{n - 1})"]
        assert e["list_len"] == ["ValueError", f"all_gather: the tensor list has 1 entries, the group has {n} ranks"]
        assert e["list_shape"][1] == "all_gather: invalid tensor size at index 0 (expected (2,), got (3,))"
        if r == 0:
            assert e["gather_list"] == ["ValueError", "Argument ``gather_list`` must be specified on destination rank."]
        else:
            assert "rank 0 called gather with invalid arguments" in e["gather_list"][1]
        assert e["self_send"][0] == "ValueError" and "should not be the same" in e["self_send"][1]
        assert "BAND is not defined for floating point" in e["float_band"][1]
        assert e["twice"] == ["ValueError", "trying to initialize the default process group twice!"]
        assert "backend 'nccl' is not available" in e["backend"][1]
        assert notes["after_errors"] == [float(n)] * 3
