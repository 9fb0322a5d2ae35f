"""Point-to-point messages (send/recv/isend/irecv) and the pickled-object collectives."""

from __future__ import annotations

import pickle

import numpy as np

from ._mpi import mpi
from ._util import as_bytes, check_tensor, contiguous, group_or_none, group_root, store, writable_buffer
from .work import Work, wait_requests

__all__ = ["all_gather_object", "broadcast_object_list", "irecv", "isend", "recv", "send"]


def _peer(pg, rank, group_rank, what: str, arg: str) -> int:
    if rank is None and group_rank is None:
        raise ValueError(f"{what}: {arg} or group_{arg} must be given")
    peer = group_root(pg, rank, group_rank, what, arg)
    if peer == pg.rank():
        kind = "destination" if arg == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: should not be the same as the rank of the current process.")
    return peer


def isend(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    a = check_tensor(tensor, "isend")
    pg = group_or_none(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "isend", "dst")
    buf = contiguous(a)
    req = pg._comm.Isend(as_bytes(buf), peer, tag)
    w = Work(pg, f"send to rank {pg._ranks[peer]}", [req], outputs=[tensor], peers=[pg._ranks[peer]])
    w._keep = buf
    return w


def _size_mismatch(a: np.ndarray, sender: int, got: int | None) -> RuntimeError:
    """The error of a message whose size is not the receiving tensor's (``got`` bytes; None when MPI did not say)."""
    want = f"{a.size} elements ({a.dtype}{list(a.shape)}, {a.nbytes} bytes)"
    if got is None:
        has = f"is larger than {a.nbytes} bytes"
    elif got % a.itemsize:
        has = f"has {got} bytes, not a whole number of {a.dtype} elements"
    else:
        has = f"has {got // a.itemsize} ({got} bytes)"
    return RuntimeError(f"recv: expected {want} from rank {sender} but the message {has}: the sent and the "
                        f"receiving tensor must have the same number of elements and dtype")


def irecv(tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None); returns a Work."""
    a = check_tensor(tensor, "irecv")
    pg = group_or_none(group, "irecv")
    if pg is None:
        return None
    MPI = mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "irecv", "src")
    buf = writable_buffer(tensor)
    status = MPI.Status()
    req = pg._comm.Irecv(as_bytes(buf), peer, tag)
    who = "any rank" if peer == MPI.ANY_SOURCE else f"rank {pg._ranks[peer]}"

    def test() -> bool:
        # A longer message than the tensor is still received whole by MPI (so its sender completes), then reported
        # as truncated; Open MPI's status then holds the message's real size.
        try:
            return req.Test(status)
        except MPI.Exception as e:
            if e.Get_error_class() != MPI.ERR_TRUNCATE:
                raise
            got = status.Get_count(MPI.BYTE)
            raise _size_mismatch(a, pg._ranks[status.Get_source()], got if got > a.nbytes else None) from None

    def finish():
        sender = pg._ranks[status.Get_source()]
        got = status.Get_count(MPI.BYTE)
        if got != a.nbytes:
            raise _size_mismatch(a, sender, got)
        store(tensor, buf)
        return sender

    me = pg._ranks[pg.rank()]
    peers, need_all = ([r for r in pg._ranks if r != me], False) if peer == MPI.ANY_SOURCE else ([pg._ranks[peer]], True)
    return Work(pg, f"recv from {who}", [req], finish, [tensor], test=test, peers=peers, need_all=need_all)


def send(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it has gone."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from ``src`` (any rank when None); returns the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w._source_rank


def allgather_bytes(pg, data: bytes, what: str) -> list[bytes]:
    """Every rank's ``data`` (byte strings of any lengths), in rank order; the sizes travel first.

    The transport under the object collectives, and under DistributedDataParallel's check that every rank
    holds the same parameters.
    """
    n = pg.size()
    size = np.array([len(data)], dtype=np.int64)
    sizes = np.empty(n, dtype=np.int64)
    wait_requests(pg, [pg._comm.Iallgather(size, sizes)], what)
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    send = np.frombuffer(data, dtype=np.uint8)
    wait_requests(pg, [pg._comm.Iallgatherv(send, [out, (sizes, displs), mpi().BYTE])], what)
    return [out[d:d + s].tobytes() for d, s in zip(displs, sizes)]


def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list[i]`` becomes rank i's picklable ``obj``."""
    pg = group_or_none(group, "all_gather_object")
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, the group has "
                         f"{pg.size()} ranks")
    for i, b in enumerate(allgather_bytes(pg, pickle.dumps(obj), "all_gather_object")):
        object_list[i] = pickle.loads(b)


def broadcast_object_list(object_list: list, src: int | None = None, group=None, device=None,
                          group_src: int | None = None) -> None:
    """Every rank's ``object_list`` becomes rank ``src``'s (picklable objects, same list length)."""
    pg = group_or_none(group, "broadcast_object_list")
    if pg is None:
        return
    root = group_root(pg, src, group_src, "broadcast_object_list", "src")
    size = np.array([0], dtype=np.int64)
    data = pickle.dumps(list(object_list)) if pg.rank() == root else b""
    size[0] = len(data)
    wait_requests(pg, [pg._comm.Ibcast(size, root)], "broadcast_object_list")
    buf = np.frombuffer(data, dtype=np.uint8).copy() if pg.rank() == root else np.empty(size[0], np.uint8)
    wait_requests(pg, [pg._comm.Ibcast(buf, root)], "broadcast_object_list")
    if pg.rank() != root:
        received = pickle.loads(buf.tobytes())
        object_list[:] = received[:len(object_list)]
