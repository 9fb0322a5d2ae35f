"""Collectives as ``torch.distributed``: each one starts a non-blocking MPI operation and returns a ``Work``
with ``async_op=True``, or waits for it (against the group's timeout) and returns None.

Each is a ``check`` of its arguments against the group and a ``start`` of its MPI operation, run by
``_util.launch``. Tensors are CPU tensors; results land in the tensors passed in, as in PyTorch::

    t = toolkit.ones(3) * (dist.get_rank() + 1)
    work = dist.all_reduce(t, op=dist.ReduceOp.SUM, async_op=True)
    work.wait()          # t == 3 on both ranks of a 2-process job
"""

from __future__ import annotations

import numpy as np

from ._mpi import mpi
from ._util import (
    Checked,
    as_bytes,
    average,
    check_list,
    check_tensor,
    contiguous,
    group_root,
    launch,
    reduce_op,
    reduction_buffer,
    store,
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


def _reduction(a: np.ndarray, op, what: str, root: int = -1) -> Checked:
    """A reduction's checks: the MPI op for ``op`` on ``a``'s dtype."""
    mop, op = reduce_op(op, a.dtype, what)
    return Checked(a, op, root, mpi_op=mop)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the group in place; every rank gets the result."""
    a = check_tensor(tensor, "all_reduce")

    def start(pg, checked):
        buf = _in_place_buffer(tensor)
        finish = _averaged(tensor, buf, checked.op, pg)
        if async_op:
            return [pg._comm.Iallreduce(mpi().IN_PLACE, buf, checked.mpi_op)], finish, [tensor]
        # Every rank has just agreed on this very call (a dead or hung rank fails the agreement with the
        # timeout error), so the data moves by MPI's blocking all-reduce: Open MPI picks faster algorithms
        # for it than for Iallreduce (10M floats: ~27 ms against ~39 ms on 2 processes here).
        pg._comm.Allreduce(mpi().IN_PLACE, buf, checked.mpi_op)
        return [], finish, [tensor]

    return launch("all_reduce", group, async_op, lambda pg: _reduction(a, op, "all_reduce"), start)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False, group_src: int | None = None):
    """Copy ``tensor`` from rank ``src`` into ``tensor`` on every other rank."""
    a = check_tensor(tensor, "broadcast")

    def check(pg):
        return Checked(a, root=group_root(pg, src, group_src, "broadcast", "src"))

    def start(pg, checked):
        buf = writable_buffer(tensor)
        return [pg._comm.Ibcast(as_bytes(buf), checked.root)], lambda: store(tensor, buf), [tensor]

    return launch("broadcast", group, async_op, check, start)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` (other ranks' tensors are unchanged)."""
    a = check_tensor(tensor, "reduce")

    def check(pg):
        return _reduction(a, op, "reduce", group_root(pg, dst, group_dst, "reduce", "dst"))

    def start(pg, checked):
        if pg.rank() == checked.root:
            buf = _in_place_buffer(tensor)
            req = pg._comm.Ireduce(mpi().IN_PLACE, buf, checked.mpi_op, checked.root)
            return [req], _averaged(tensor, buf, checked.op, pg), [tensor]
        req = pg._comm.Ireduce(reduction_buffer(a), None, checked.mpi_op, checked.root)
        return [req], None, [tensor]

    return launch("reduce", group, async_op, check, start)


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


def _check_root_list(pg, root: int, ts, a: np.ndarray, what: str, arg: str, role: str) -> None:
    """The per-rank tensor list of gather/scatter: required (one tensor like ``a`` per rank) on the root,
    refused elsewhere."""
    if pg.rank() != root:
        if ts:
            raise ValueError(f"Argument ``{arg}`` must NOT be specified on non-{role} ranks.")
        return
    if not ts:
        raise ValueError(f"Argument ``{arg}`` must be specified on {role} rank.")
    _check_same(check_list(ts, what, arg), a, what, pg.size())


def _store_rows(ts: list, rows: np.ndarray):
    def finish():
        for t, row in zip(ts, rows):
            store(t, row)

    return finish


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """``tensor_list[i]`` receives rank i's ``tensor``."""
    a = check_tensor(tensor, "all_gather")

    def check(pg):
        _check_same(check_list(tensor_list, "all_gather", "tensor_list"), a, "all_gather", pg.size())
        return Checked(a)

    def start(pg, checked):
        outs = list(tensor_list)
        rows = np.empty((pg.size(), *a.shape), dtype=a.dtype)
        req = pg._comm.Iallgather(as_bytes(contiguous(a)), as_bytes(rows))
        return [req], _store_rows(outs, rows), outs

    return launch("all_gather", group, async_op, check, start)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Rank i's ``input_tensor`` fills the i-th chunk (along dim 0, or stacked) of ``output_tensor``."""
    a = check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    o = check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")

    def check(pg):
        if o.size != a.size * pg.size() or o.dtype != a.dtype:
            raise ValueError(f"all_gather_into_tensor: output tensor of {o.dtype} {tuple(o.shape)} must have "
                             f"world_size ({pg.size()}) times the elements of the input ({a.dtype} "
                             f"{tuple(a.shape)})")
        return Checked(a)

    def start(pg, checked):
        buf = writable_buffer(output_tensor)
        req = pg._comm.Iallgather(as_bytes(contiguous(a)), as_bytes(buf))
        return [req], lambda: store(output_tensor, buf), [output_tensor]

    return launch("all_gather_into_tensor", group, async_op, check, start)


def gather(tensor, gather_list=None, dst: int | None = None, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Rank ``dst`` receives every rank's ``tensor`` in ``gather_list``."""
    a = check_tensor(tensor, "gather")

    def check(pg):
        root = group_root(pg, dst, group_dst, "gather", "dst")
        _check_root_list(pg, root, gather_list, a, "gather", "gather_list", "destination")
        return Checked(a, root=root)

    def start(pg, checked):
        if pg.rank() != checked.root:
            return [pg._comm.Igather(as_bytes(contiguous(a)), None, checked.root)], None, []
        outs = list(gather_list)
        rows = np.empty((pg.size(), *a.shape), dtype=a.dtype)
        req = pg._comm.Igather(as_bytes(contiguous(a)), as_bytes(rows), checked.root)
        return [req], _store_rows(outs, rows), outs

    return launch("gather", group, async_op, check, start)


def scatter(tensor, scatter_list=None, src: int | None = None, group=None, async_op: bool = False,
            group_src: int | None = None):
    """Rank i's ``tensor`` receives ``scatter_list[i]`` from rank ``src``."""
    a = check_tensor(tensor, "scatter")

    def check(pg):
        root = group_root(pg, src, group_src, "scatter", "src")
        _check_root_list(pg, root, scatter_list, a, "scatter", "scatter_list", "source")
        return Checked(a, root=root)

    def start(pg, checked):
        send = as_bytes(np.stack([t._data for t in scatter_list])) if pg.rank() == checked.root else None
        buf = writable_buffer(tensor)
        return [pg._comm.Iscatter(send, as_bytes(buf), checked.root)], lambda: store(tensor, buf), [tensor]

    return launch("scatter", group, async_op, check, start)


def _reduce_scatter(what: str, output, o: np.ndarray, op, check_input, rows):
    """The ``check`` and ``start`` of reduce_scatter and reduce_scatter_tensor: ``check_input(pg)`` checks the
    input against the output's array ``o``, ``rows()`` gives the input as one row per rank."""

    def check(pg):
        check_input(pg)
        return _reduction(o, op, what)

    def start(pg, checked):
        send = reduction_buffer(rows())
        buf = np.empty(o.shape, dtype=send.dtype)
        req = pg._comm.Ireduce_scatter_block(send, buf, checked.mpi_op)
        return [req], _averaged(output, buf, checked.op, pg), [output]

    return check, start


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """``output`` on rank i receives the reduction over ranks of their ``input_list[i]``."""
    o = check_tensor(output, "reduce_scatter", "output")

    def check_input(pg):
        _check_same(check_list(input_list, "reduce_scatter", "input_list"), o, "reduce_scatter", pg.size())

    check, start = _reduce_scatter("reduce_scatter", output, o, op, check_input,
                                   lambda: np.stack([t._data for t in input_list]))
    return launch("reduce_scatter", group, async_op, check, start)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """``output`` on rank i receives the reduction of the i-th chunk of every rank's ``input``."""
    o = check_tensor(output, "reduce_scatter_tensor", "output")
    a = check_tensor(input, "reduce_scatter_tensor", "input")

    def check_input(pg):
        if a.size != o.size * pg.size() or a.dtype != o.dtype:
            raise ValueError(f"reduce_scatter_tensor: input tensor of {a.dtype} {tuple(a.shape)} must have "
                             f"world_size ({pg.size()}) times the elements of the output ({o.dtype} "
                             f"{tuple(o.shape)})")

    check, start = _reduce_scatter("reduce_scatter_tensor", output, o, op, check_input, lambda: a)
    return launch("reduce_scatter_tensor", group, async_op, check, start)


def _alltoallv_counts(dtype: np.dtype, scounts, rcounts) -> Checked:
    """What the ranks of an all-to-all agree on: the dtype, and the element counts sent to and expected from
    each rank."""
    counts = (np.asarray(scounts, dtype=np.int64), np.asarray(rcounts, dtype=np.int64))
    return Checked(np.empty(0, dtype), counts=counts)


def _alltoallv(pg, checked: Checked, send: np.ndarray, recv: np.ndarray):
    """Start the all-to-all of ``send`` into ``recv`` with the element counts the ranks agreed on."""
    item = send.dtype.itemsize
    sc, rc = checked.counts
    sdis = np.concatenate([[0], np.cumsum(sc)[:-1]]) * item
    rdis = np.concatenate([[0], np.cumsum(rc)[:-1]]) * item
    B = mpi().BYTE
    return pg._comm.Ialltoallv([as_bytes(send), (sc * item, sdis), B], [as_bytes(recv), (rc * item, rdis), B])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which receives it in ``output_tensor_list[i]``."""

    def check(pg):
        n = pg.size()
        outs = check_list(output_tensor_list, "all_to_all", "output_tensor_list")
        ins = check_list(input_tensor_list, "all_to_all", "input_tensor_list")
        if len(outs) != n or len(ins) != n:
            raise ValueError(f"all_to_all: the tensor lists must have one entry per rank ({n}), got "
                             f"{len(outs)} outputs and {len(ins)} inputs")
        dtypes = {t._data.dtype for t in outs + ins}
        if len(dtypes) != 1:
            raise RuntimeError(f"all_to_all: every tensor must have the same dtype, got "
                               f"{sorted(map(str, dtypes))}")
        return _alltoallv_counts(dtypes.pop(), [t._data.size for t in ins], [t._data.size for t in outs])

    def start(pg, checked):
        outs = list(output_tensor_list)
        send = np.concatenate([t._data.reshape(-1) for t in input_tensor_list])
        recv = np.empty(sum(t._data.size for t in outs), dtype=send.dtype)
        bounds = np.cumsum([0] + [t._data.size for t in outs])

        def finish():
            for t, lo, hi in zip(outs, bounds[:-1], bounds[1:]):
                store(t, recv[lo:hi])

        return [_alltoallv(pg, checked, send, recv)], finish, outs

    return launch("all_to_all", group, async_op, check, start)


def _split_counts(arr: np.ndarray, splits, name: str, n: int) -> list[int]:
    """The element counts of ``arr``'s chunks along dim 0, one per rank (equal unless ``splits`` gives them)."""
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


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op: bool = False):
    """``all_to_all`` on chunks of dim 0 of one tensor (equal chunks unless split sizes are given)."""
    o = check_tensor(output, "all_to_all_single", "output")
    a = check_tensor(input, "all_to_all_single", "input")

    def check(pg):
        if o.dtype != a.dtype:
            raise RuntimeError(f"all_to_all_single: output ({o.dtype}) and input ({a.dtype}) dtypes differ")
        n = pg.size()
        return _alltoallv_counts(a.dtype, _split_counts(a, input_split_sizes, "input", n),
                                 _split_counts(o, output_split_sizes, "output", n))

    def start(pg, checked):
        buf = writable_buffer(output)
        return [_alltoallv(pg, checked, contiguous(a), buf)], lambda: store(output, buf), [output]

    return launch("all_to_all_single", group, async_op, check, start)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank of the group reaches the barrier (or the timeout passes)."""
    return launch("barrier", group, async_op, None, lambda pg, _: ([pg._comm.Ibarrier()], None, []), timeout)
