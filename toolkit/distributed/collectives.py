"""Collectives as ``torch.distributed``: each one starts a non-blocking MPI operation and returns a ``Work``
with ``async_op=True``, or waits for it (against the group's timeout) and returns None.

Tensors are CPU tensors; results land in the tensors passed in, as in PyTorch::

    t = toolkit.ones(3) * (dist.get_rank() + 1)
    work = dist.all_reduce(t, op=dist.ReduceOp.SUM, async_op=True)
    work.wait()          # t == 3 on both ranks of a 2-process job
"""

from __future__ import annotations

import numpy as np

from ._mpi import mpi
from ._util import (
    agree,
    as_bytes,
    average,
    check_list,
    check_tensor,
    contiguous,
    finish_work,
    group_or_none,
    group_root,
    reduce_op,
    reduction_buffer,
    store,
    validated,
    writable_buffer,
)
from .process_group import ReduceOp

__all__ = ["all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all", "all_to_all_single", "barrier",
           "broadcast", "gather", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter"]


def _in_place_buffer(tensor) -> np.ndarray:
    """The buffer an in-place reduction writes: the tensor's memory, or a float32 copy of half precision."""
    return reduction_buffer(tensor._data) if tensor._data.dtype == np.float16 else writable_buffer(tensor)


def _averaged(output, buf: np.ndarray, op, pg):
    """The finishing step of a reduction: divide for AVG, then put ``buf`` into ``output``."""
    def finish():
        average(buf, op, pg.size())
        store(output, buf)

    return finish


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the group in place; every rank gets the result."""
    a = check_tensor(tensor, "all_reduce")
    pg = group_or_none(group, "all_reduce")
    if pg is None:
        return None
    with validated(pg, "all_reduce"):
        mop, op = reduce_op(op, a.dtype, "all_reduce")
    agree(pg, "all_reduce", a, op)
    buf = _in_place_buffer(tensor)
    finish = _averaged(tensor, buf, op, pg)
    if not async_op:
        # Every rank has just agreed on this very call (a dead or hung rank fails the agreement with the
        # timeout error), so the data moves by MPI's blocking all-reduce: Open MPI picks faster algorithms
        # for it than for Iallreduce (10M floats: ~27 ms against ~39 ms on 2 processes here).
        pg._comm.Allreduce(mpi().IN_PLACE, buf, mop)
        finish()
        return None
    req = pg._comm.Iallreduce(mpi().IN_PLACE, buf, mop)
    return finish_work(pg, "all_reduce", [req], finish, [tensor], async_op)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False, group_src: int | None = None):
    """Copy ``tensor`` from rank ``src`` into ``tensor`` on every other rank."""
    a = check_tensor(tensor, "broadcast")
    pg = group_or_none(group, "broadcast")
    if pg is None:
        return None
    with validated(pg, "broadcast"):
        root = group_root(pg, src, group_src, "broadcast", "src")
    agree(pg, "broadcast", a, root=root)
    buf = writable_buffer(tensor)
    req = pg._comm.Ibcast(as_bytes(buf), root)
    return finish_work(pg, "broadcast", [req], lambda: store(tensor, buf), [tensor], async_op)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` (other ranks' tensors are unchanged)."""
    a = check_tensor(tensor, "reduce")
    pg = group_or_none(group, "reduce")
    if pg is None:
        return None
    with validated(pg, "reduce"):
        root = group_root(pg, dst, group_dst, "reduce", "dst")
        mop, op = reduce_op(op, a.dtype, "reduce")
    agree(pg, "reduce", a, op, root)
    MPI = mpi()
    if pg.rank() == root:
        buf = _in_place_buffer(tensor)
        req = pg._comm.Ireduce(MPI.IN_PLACE, buf, mop, root)
        finish = _averaged(tensor, buf, op, pg)
    else:
        buf = reduction_buffer(a)
        req = pg._comm.Ireduce(buf, None, mop, root)
        finish = None
    return finish_work(pg, "reduce", [req], finish, [tensor], async_op)


def _check_same(ts: list, a: np.ndarray, what: str, n: int) -> None:
    if len(ts) != n:
        raise ValueError(f"{what}: the tensor list has {len(ts)} entries, the group has {n} ranks")
    for i, t in enumerate(ts):
        if t._data.dtype != a.dtype:
            raise RuntimeError(f"{what}: invalid tensor type at index {i} (expected {a.dtype}, got "
                               f"{t._data.dtype})")
        if t._data.shape != a.shape:
            raise RuntimeError(f"{what}: invalid tensor size at index {i} (expected {tuple(a.shape)}, got "
                               f"{tuple(t._data.shape)})")


def _root_list(pg, root: int, ts, a: np.ndarray, what: str, arg: str, role: str) -> list | None:
    """The per-rank tensor list of gather/scatter: required (one tensor like ``a`` per rank) on the root,
    refused elsewhere."""
    if pg.rank() != root:
        if ts:
            raise ValueError(f"Argument ``{arg}`` must NOT be specified on non-{role} ranks.")
        return None
    if not ts:
        raise ValueError(f"Argument ``{arg}`` must be specified on {role} rank.")
    ts = check_list(ts, what, arg)
    _check_same(ts, a, what, pg.size())
    return ts


def _store_rows(ts: list, rows: np.ndarray):
    def finish():
        for t, row in zip(ts, rows):
            store(t, row)

    return finish


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """``tensor_list[i]`` receives rank i's ``tensor``."""
    a = check_tensor(tensor, "all_gather")
    pg = group_or_none(group, "all_gather")
    if pg is None:
        return None
    with validated(pg, "all_gather"):
        tensor_list = check_list(tensor_list, "all_gather", "tensor_list")
        _check_same(tensor_list, a, "all_gather", pg.size())
    agree(pg, "all_gather", a)
    out = np.empty((pg.size(), *a.shape), dtype=a.dtype)
    req = pg._comm.Iallgather(as_bytes(contiguous(a)), as_bytes(out))
    return finish_work(pg, "all_gather", [req], _store_rows(tensor_list, out), tensor_list, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Rank i's ``input_tensor`` fills the i-th chunk (along dim 0, or stacked) of ``output_tensor``."""
    a = check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    o = check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    pg = group_or_none(group, "all_gather_into_tensor")
    if pg is None:
        return None
    with validated(pg, "all_gather_into_tensor"):
        if o.size != a.size * pg.size() or o.dtype != a.dtype:
            raise ValueError(f"all_gather_into_tensor: output tensor of {o.dtype} {tuple(o.shape)} must have "
                             f"world_size ({pg.size()}) times the elements of the input ({a.dtype} "
                             f"{tuple(a.shape)})")
    agree(pg, "all_gather_into_tensor", a)
    buf = writable_buffer(output_tensor)
    req = pg._comm.Iallgather(as_bytes(contiguous(a)), as_bytes(buf))
    return finish_work(pg, "all_gather_into_tensor", [req], lambda: store(output_tensor, buf), [output_tensor],
                       async_op)


def gather(tensor, gather_list=None, dst: int | None = None, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Rank ``dst`` receives every rank's ``tensor`` in ``gather_list``."""
    a = check_tensor(tensor, "gather")
    pg = group_or_none(group, "gather")
    if pg is None:
        return None
    with validated(pg, "gather"):
        root = group_root(pg, dst, group_dst, "gather", "dst")
        gather_list = _root_list(pg, root, gather_list, a, "gather", "gather_list", "destination")
    is_root = gather_list is not None
    agree(pg, "gather", a, root=root)
    out = np.empty((pg.size(), *a.shape), dtype=a.dtype) if is_root else None
    req = pg._comm.Igather(as_bytes(contiguous(a)), as_bytes(out) if is_root else None, root)
    finish = _store_rows(gather_list, out) if is_root else None
    return finish_work(pg, "gather", [req], finish, gather_list or [], async_op)


def scatter(tensor, scatter_list=None, src: int | None = None, group=None, async_op: bool = False,
            group_src: int | None = None):
    """Rank i's ``tensor`` receives ``scatter_list[i]`` from rank ``src``."""
    a = check_tensor(tensor, "scatter")
    pg = group_or_none(group, "scatter")
    if pg is None:
        return None
    with validated(pg, "scatter"):
        root = group_root(pg, src, group_src, "scatter", "src")
        scatter_list = _root_list(pg, root, scatter_list, a, "scatter", "scatter_list", "source")
    send = None if scatter_list is None else as_bytes(np.stack([t._data for t in scatter_list]))
    agree(pg, "scatter", a, root=root)
    buf = writable_buffer(tensor)
    req = pg._comm.Iscatter(send, as_bytes(buf), root)
    return finish_work(pg, "scatter", [req], lambda: store(tensor, buf), [tensor], async_op)


def _reduce_scatter(what: str, output, send: np.ndarray, a_out: np.ndarray, op, pg, async_op: bool):
    with validated(pg, what):
        mop, op = reduce_op(op, send.dtype, what)
    agree(pg, what, a_out, op)
    send = reduction_buffer(send)
    buf = np.empty(a_out.shape, dtype=send.dtype)
    req = pg._comm.Ireduce_scatter_block(send, buf, mop)
    return finish_work(pg, what, [req], _averaged(output, buf, op, pg), [output], async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """``output`` on rank i receives the reduction over ranks of their ``input_list[i]``."""
    o = check_tensor(output, "reduce_scatter", "output")
    pg = group_or_none(group, "reduce_scatter")
    if pg is None:
        return None
    with validated(pg, "reduce_scatter"):
        input_list = check_list(input_list, "reduce_scatter", "input_list")
        _check_same(input_list, o, "reduce_scatter", pg.size())
    send = np.stack([t._data for t in input_list])
    return _reduce_scatter("reduce_scatter", output, send, o, op, pg, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """``output`` on rank i receives the reduction of the i-th chunk of every rank's ``input``."""
    o = check_tensor(output, "reduce_scatter_tensor", "output")
    a = check_tensor(input, "reduce_scatter_tensor", "input")
    pg = group_or_none(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    with validated(pg, "reduce_scatter_tensor"):
        if a.size != o.size * pg.size() or a.dtype != o.dtype:
            raise ValueError(f"reduce_scatter_tensor: input tensor of {a.dtype} {tuple(a.shape)} must have "
                             f"world_size ({pg.size()}) times the elements of the output ({o.dtype} "
                             f"{tuple(o.shape)})")
    return _reduce_scatter("reduce_scatter_tensor", output, a, o, op, pg, async_op)


def _alltoallv(what: str, pg, send: np.ndarray, recv: np.ndarray, scounts, rcounts, finish, outputs, async_op):
    item = send.dtype.itemsize
    sc = np.asarray(scounts, dtype=np.int64)
    rc = np.asarray(rcounts, dtype=np.int64)
    agree(pg, what, np.empty(0, send.dtype), counts=(sc, rc))
    sdis = np.concatenate([[0], np.cumsum(sc)[:-1]]) * item
    rdis = np.concatenate([[0], np.cumsum(rc)[:-1]]) * item
    B = mpi().BYTE
    req = pg._comm.Ialltoallv([as_bytes(send), (sc * item, sdis), B], [as_bytes(recv), (rc * item, rdis), B])
    return finish_work(pg, what, [req], finish, outputs, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which receives it in ``output_tensor_list[i]``."""
    pg = group_or_none(group, "all_to_all")
    if pg is None:
        return None
    n = pg.size()
    with validated(pg, "all_to_all"):
        outs = check_list(output_tensor_list, "all_to_all", "output_tensor_list")
        ins = check_list(input_tensor_list, "all_to_all", "input_tensor_list")
        if len(outs) != n or len(ins) != n:
            raise ValueError(f"all_to_all: the tensor lists must have one entry per rank ({n}), got "
                             f"{len(outs)} outputs and {len(ins)} inputs")
        dtypes = {t._data.dtype for t in outs + ins}
        if len(dtypes) != 1:
            raise RuntimeError(f"all_to_all: every tensor must have the same dtype, got "
                               f"{sorted(map(str, dtypes))}")
    send = np.concatenate([t._data.reshape(-1) for t in ins])
    recv = np.empty(sum(t._data.size for t in outs), dtype=send.dtype)
    bounds = np.cumsum([0] + [t._data.size for t in outs])

    def finish():
        for t, lo, hi in zip(outs, bounds[:-1], bounds[1:]):
            store(t, recv[lo:hi])

    return _alltoallv("all_to_all", pg, send, recv, [t._data.size for t in ins], [t._data.size for t in outs],
                      finish, outs, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op: bool = False):
    """``all_to_all`` on chunks of dim 0 of one tensor (equal chunks unless split sizes are given)."""
    o = check_tensor(output, "all_to_all_single", "output")
    a = check_tensor(input, "all_to_all_single", "input")
    pg = group_or_none(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg.size()

    def counts(arr, splits, name):
        row = int(np.prod(arr.shape[1:])) if arr.ndim else 1
        if not splits:
            if arr.ndim == 0 or arr.shape[0] % n:
                raise ValueError(f"all_to_all_single: {name} dim 0 ({arr.shape[0] if arr.ndim else 0}) must "
                                 f"divide evenly by the world size ({n})")
            return [arr.shape[0] // n * row] * n
        if len(splits) != n or sum(splits) != arr.shape[0]:
            raise ValueError(f"all_to_all_single: {name}_split_sizes {list(splits)} must have {n} entries "
                             f"summing to dim 0 ({arr.shape[0]})")
        return [int(s) * row for s in splits]

    with validated(pg, "all_to_all_single"):
        if o.dtype != a.dtype:
            raise RuntimeError(f"all_to_all_single: output ({o.dtype}) and input ({a.dtype}) dtypes differ")
        sc = counts(a, input_split_sizes, "input")
        rc = counts(o, output_split_sizes, "output")
    buf = writable_buffer(output)
    return _alltoallv("all_to_all_single", pg, contiguous(a), buf, sc, rc, lambda: store(output, buf),
                      [output], async_op)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank of the group reaches the barrier (or the timeout passes)."""
    pg = group_or_none(group, "barrier")
    if pg is None:
        return None
    req = pg._comm.Ibarrier()
    if async_op:
        return finish_work(pg, "barrier", [req], None, [], True)
    from .work import Work

    seconds = timeout.total_seconds() if timeout is not None else None
    Work(pg, "barrier", [req]).wait(seconds)
    return None
