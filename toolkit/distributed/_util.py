"""Helpers shared by the collectives: tensor buffers, ranks, reduction ops, the cross-rank agreement check, and
``launch``, which runs a collective."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..tensor import Tensor
from ._mpi import mpi
from .process_group import ProcessGroup, RedOpType, resolve_group
from .work import Work, wait_requests

_KINDS = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter",
          "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier"]
_HEADER = 12
_MAX_DIMS = 7
_BY_NUM = {np.dtype(t).num: np.dtype(t) for t in
           (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64)}


def group_or_none(group, what: str, stacklevel: int = 3) -> ProcessGroup | None:
    """The group of a call, checked alive; None (with PyTorch's warning, pointing ``stacklevel`` frames up at
    the user's call) when this rank is not a member."""
    pg = resolve_group(group)
    if pg is None:
        warnings.warn(f"Running {what} on global rank {mpi().COMM_WORLD.Get_rank()} which does not belong to "
                      "the given group.", stacklevel=stacklevel)
        return None
    pg._check_alive()
    return pg


def check_tensor(t, what: str, arg: str = "tensor") -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: Invalid function argument. Expected parameter `{arg}` of type torch.Tensor "
                        f"but got {type(t)} instead.")
    if t.device.type != "cpu":
        raise RuntimeError(f"{what}: the MPI backend takes CPU tensors, got a tensor on {t.device}")
    return t._data


def check_list(ts, what: str, arg: str) -> list:
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"{what}: Invalid function argument. Expected parameter `{arg}` of type "
                        f"List[torch.Tensor] but got {type(ts)} instead.")
    for t in ts:
        check_tensor(t, what, arg)
    return list(ts)


def contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def writable_buffer(t: Tensor) -> np.ndarray:
    """A C-contiguous array MPI may write into: the tensor's own memory when it allows, else a copy."""
    a = t._data
    if a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.ascontiguousarray(a)


def store(t: Tensor, buf: np.ndarray) -> None:
    """Put ``buf`` into ``t`` (unless it already is ``t``'s memory) and bump the version counter."""
    a = t._data
    if buf is not a:
        if not a.flags.writeable:
            raise RuntimeError("toolkit.distributed: cannot write the result into a read-only tensor")
        np.copyto(a, buf.reshape(a.shape), casting="unsafe")
    t._storage.version += 1


def as_bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


def group_root(pg: ProcessGroup, rank, group_rank, what: str, arg: str) -> int:
    """A root given as a global rank (``src``/``dst``) or a group rank (``group_src``/``group_dst``)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {arg} and group_{arg}")
    if rank is None and group_rank is None:
        if pg.size() == 1 or pg._ranks == list(range(pg.size())):
            rank = 0
        else:
            raise ValueError(f"{what}: either {arg} or group_{arg} must be given")
    if group_rank is None:
        if rank not in pg._ranks:
            if pg is resolve_group(None):
                raise RuntimeError(f"{what}: invalid root rank: {rank} (the group has ranks 0..{pg.size() - 1})")
            raise ValueError(f"Global rank {rank} is not part of group {pg}")
        return pg._ranks.index(rank)
    if not 0 <= group_rank < pg.size():
        raise RuntimeError(f"{what}: invalid root rank: {group_rank} (the group has ranks 0..{pg.size() - 1})")
    return group_rank


def reduce_op(op, dtype: np.dtype, what: str):
    """The MPI op for ``op`` on ``dtype`` (bool uses the logical ops); AVG is a SUM divided afterwards."""
    MPI = mpi()
    try:
        op = RedOpType(op.op if hasattr(op, "op") else op)
    except (ValueError, TypeError):
        raise ValueError(f"{what}: unknown reduce op {op!r}") from None
    if op == RedOpType.PREMUL_SUM:
        raise ValueError(f"{what}: ReduceOp.PREMUL_SUM is not supported by the MPI backend")
    if dtype == np.bool_:
        table = {RedOpType.SUM: MPI.LOR, RedOpType.MAX: MPI.LOR, RedOpType.BOR: MPI.LOR,
                 RedOpType.PRODUCT: MPI.LAND, RedOpType.MIN: MPI.LAND, RedOpType.BAND: MPI.LAND,
                 RedOpType.BXOR: MPI.LXOR, RedOpType.AVG: MPI.LOR}
        return table[op], op
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind == "f":
        raise RuntimeError(f"{what}: ReduceOp.{op.name} is not defined for floating point tensors ({dtype})")
    table = {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD, RedOpType.MIN: MPI.MIN,
             RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND, RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}
    return table[op], op


def reduction_buffer(a: np.ndarray) -> np.ndarray:
    """A contiguous array in a dtype MPI can reduce (half precision is reduced in float32)."""
    if a.dtype == np.float16:
        return a.astype(np.float32)
    return np.array(a, order="C") if not a.flags.c_contiguous else a


def average(buf: np.ndarray, op, n: int) -> None:
    if op == RedOpType.AVG and buf.dtype != np.bool_:
        if buf.dtype.kind == "f":
            buf /= n
        else:
            np.copyto(buf, np.trunc(buf / n), casting="unsafe")


class Checked(NamedTuple):
    """What the argument checks of a collective settled: the tensor whose shape and dtype every rank must
    share (``a``), the reduce op, the root (a group rank) and all_to_all's element counts, which ``agree``
    compares across the ranks; and ``mpi_op``, the MPI op a reduction runs with."""

    a: np.ndarray | None
    op: RedOpType | None = None
    root: int = -1
    counts: tuple[np.ndarray, np.ndarray] | None = None
    mpi_op: Any = None


#: What ``start`` of a collective returns: its MPI requests, the finishing step run once they are done (or
#: None), and the output tensors of its ``Work``.
Started = tuple[list, Callable[[], Any] | None, list]


def launch(what: str, group, async_op: bool, check: Callable[[ProcessGroup], Checked] | None,
           start: Callable[[ProcessGroup, Checked | None], Started], timeout=None) -> Work | None:
    """Run one collective the way every collective runs, and return its ``Work`` (``async_op``) or wait for it.

    The group is looked up (a rank outside it gets PyTorch's warning and None); ``check(pg)`` runs the argument
    checks that need the group, so that a failure there reaches the other ranks too (``validated``); the ranks
    then ``agree`` on what ``check`` settled; ``start(pg, checked)`` starts the MPI operation. Without
    ``async_op`` the call waits for it (``timeout``, else the group's) and returns None. A collective with
    nothing to check (``check=None``) starts at once, with no agreement.

    Example (``barrier``, the shortest use; ``broadcast`` shows ``check`` and ``start`` in full)::

        launch("barrier", group, async_op, None, lambda pg, _: ([pg._comm.Ibarrier()], None, []), timeout)
    """
    pg = group_or_none(group, what, stacklevel=4)
    if pg is None:
        return None
    checked = None
    if check is not None:
        with validated(pg, what):
            checked = check(pg)
        agree(pg, what, checked.a, checked.op, checked.root, checked.counts)
    requests, finish, outputs = start(pg, checked)
    work = Work(pg, what, requests, finish, outputs)
    if async_op:
        return work
    work.wait(timeout)
    return None


def _describe(a: np.ndarray) -> str:
    kind, dt, op, root, nd = (int(x) for x in a[:5])
    name = _KINDS[kind] if 0 <= kind < len(_KINDS) else f"op#{kind}"
    if name == "barrier":
        return "barrier()"
    if dt == -2:
        return f"{name} with invalid arguments"
    dims = [int(x) for x in a[5:5 + min(nd, _MAX_DIMS)]]
    shape = "[" + ", ".join(map(str, dims)) + (", ..." if nd > _MAX_DIMS else "") + "]"
    s = f"{name}({_BY_NUM.get(dt, '?')}{shape}"
    if op >= 0:
        s += f", op={RedOpType(op).name}"
    if root >= 0:
        s += f", root={root}"
    return s + ")"


@contextlib.contextmanager
def validated(pg: ProcessGroup, what: str):
    """Argument checks of a collective: when they fail on this rank, the other ranks (already waiting in
    ``agree``) are told, so they fail with a clear error too instead of waiting for a call that never comes."""
    try:
        yield
    except (ValueError, RuntimeError, TypeError) as e:
        if not pg._aborted:
            try:
                agree(pg, what, None, invalid=True)
            except RuntimeError:
                pass
        raise e from None


def agree(pg: ProcessGroup, what: str, a: np.ndarray | None, op=None, root: int = -1, counts=None,
          invalid: bool = False) -> None:
    """Check that every rank of ``pg`` called the same collective with the same shape and dtype.

    One small all-gather of a descriptor per rank (kind, dtype, op, root, shape; for all_to_all the element
    counts sent to and expected from each peer) runs first, so a mismatch gives every rank the same clear
    error instead of undefined MPI behaviour. It is polled against the timeout like everything else.
    """
    n = pg.size()
    d = np.full(_HEADER + 2 * n, -1, dtype=np.int64)
    d[0] = _KINDS.index(what)
    if a is not None:
        d[1] = a.dtype.num
        shape = a.shape
        d[4] = len(shape)
        d[5:5 + min(len(shape), _MAX_DIMS)] = shape[:_MAX_DIMS]
        if len(shape) > _MAX_DIMS:
            d[5 + _MAX_DIMS - 1] = hash(tuple(shape[_MAX_DIMS - 1:])) & 0x7FFFFFFFFFFF
    if op is not None:
        d[2] = int(op.op if hasattr(op, "op") else op)
    d[3] = root
    if invalid:
        d[1] = -2
    if counts is not None:
        d[_HEADER:_HEADER + n] = counts[0]
        d[_HEADER + n:] = counts[1]
    allv = np.empty((n, d.size), dtype=np.int64)
    req = pg._comm.Iallgather(d, allv)
    wait_requests(pg, [req], what)
    if counts is not None:
        heads = allv[:, :4]
        sent, expected = allv[:, _HEADER:_HEADER + n], allv[:, _HEADER + n:]
        if (heads == heads[0]).all() and (sent == expected.T).all():
            return
        if (heads == heads[0]).all() and (heads[:, 1] != -2).all():
            bad = [(i, j) for i in range(n) for j in range(n) if sent[i, j] != expected[j, i]]
            i, j = bad[0]
            raise RuntimeError(f"{what}: rank {pg._ranks[i]} sends {sent[i, j]} elements to rank {pg._ranks[j]}, "
                               f"which expects {expected[j, i]}: the output and input sizes must match across "
                               f"ranks")
    elif (allv == allv[0]).all():
        return
    calls = ", ".join(f"rank {pg._ranks[i]} called {_describe(allv[i])}" for i in range(n))
    raise RuntimeError(f"{what}: the ranks of the group disagree on the operation, shape or dtype ({calls}); "
                       f"every rank must make the same call with the same tensor shapes and dtypes")
