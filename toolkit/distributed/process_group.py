"""Process groups on MPI, as ``torch.distributed``'s c10d: the default group, sub-groups and their state.

A ``ProcessGroup`` wraps one MPI communicator and remembers its members' global ranks and its timeout. A
group whose operation failed (a timeout, a rank that exited or raised: see ``_notices``) is aborted: every later
call on it fails at once, and the job is ended with ``MPI_Abort`` when the process exits, so ranks still blocked in
MPI do not hang forever::

    import toolkit.distributed as dist
    dist.init_process_group("mpi")            # under mpirun, or python -m toolkit.distributed.run
    print(dist.get_rank(), dist.get_world_size())
"""

from __future__ import annotations

import atexit
import datetime
import enum
import sys

from ._errors import DistBackendError, DistError
from ._mpi import is_available, mpi
from ._notices import NOTICES
from .work import wait_requests

__all__ = [
    "Backend", "DistBackendError", "DistError", "GroupMember", "ProcessGroup", "ReduceOp", "default_pg_timeout",
    "destroy_process_group", "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks",
    "get_rank", "get_world_size", "group", "init_process_group", "is_initialized", "new_group",
]

default_pg_timeout = datetime.timedelta(minutes=30)


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """Reduction operations for ``all_reduce``, ``reduce`` and ``reduce_scatter`` (``ReduceOp.SUM`` ...)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class Backend(str):
    """Backend names; toolkit runs every group on MPI."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return super().__new__(cls, name.lower())


def _seconds(timeout) -> float:
    if timeout is None:
        timeout = default_pg_timeout
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)):
        return float(timeout)
    raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")


class ProcessGroup:
    """One MPI communicator with its members' global ranks and the timeout its operations wait for."""

    def __init__(self, comm, ranks: list[int], timeout: float, name: str) -> None:
        self._comm = comm
        self._ranks = list(ranks)
        self._timeout = timeout
        self._name = name
        self._aborted: str | None = None

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return Backend.MPI

    @property
    def group_name(self) -> str:
        return self._name

    def _check_alive(self) -> None:
        if self._aborted is not None:
            raise DistBackendError(f"process group {self._name!r} was aborted after an earlier failure: "
                                   f"{self._aborted}")

    def _abort(self, reason: str) -> None:
        """Mark the group unusable; at exit the whole MPI job is aborted instead of finalized."""
        if self._aborted is None:
            self._aborted = reason
            _STATE.abort_at_exit = True

    def __repr__(self) -> str:
        return f"<ProcessGroup {self._name!r} backend=mpi ranks={self._ranks}>"


class _State:
    def __init__(self) -> None:
        self.world: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.abort_at_exit = False
        self.counter = 0


_STATE = _State()
_NON_GROUP_MEMBER = -100


class _GroupMember:
    """``GroupMember.WORLD`` (the default group) and ``GroupMember.NON_GROUP_MEMBER``."""

    NON_GROUP_MEMBER = _NON_GROUP_MEMBER

    @property
    def WORLD(self) -> ProcessGroup | None:  # noqa: N802
        return _STATE.world


GroupMember = _GroupMember()
group = GroupMember


def _abort_job_at_exit() -> None:
    """At exit: tell the other ranks (unless the job is aborted anyway), then abort it if a group failed."""
    if not _STATE.abort_at_exit:
        NOTICES.at_exit()
    if _STATE.abort_at_exit:
        sys.stdout.flush()
        sys.stderr.flush()
        mpi().COMM_WORLD.Abort(1)


def is_initialized() -> bool:
    """Whether the default process group exists."""
    return _STATE.world is not None


def is_mpi_available() -> bool:
    return is_available()


def _world() -> ProcessGroup:
    if _STATE.world is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _STATE.world


def resolve_group(group_arg) -> ProcessGroup | None:
    """The group a call acts on; None when this rank is not a member."""
    world = _world()
    if group_arg is None or group_arg is GroupMember.WORLD:
        return world
    if group_arg == _NON_GROUP_MEMBER:
        return None
    if not isinstance(group_arg, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group_arg).__name__}")
    return group_arg


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Create the default group over every process MPI started (``mpirun -n N``; a lone process is rank 0 of 1).

    MPI does the rendezvous, so ``init_method`` and ``store`` are accepted and not needed; ``world_size`` and
    ``rank``, when given, must agree with MPI's.
    """
    if _STATE.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend) if backend is not None else Backend.MPI
    if name != Backend.MPI:
        raise RuntimeError(f"toolkit.distributed runs on MPI: backend {backend!r} is not available, "
                           f"use backend='mpi' (or leave it out) and launch with python -m toolkit.distributed.run "
                           f"or mpirun")
    seconds = _seconds(timeout)
    MPI = mpi()
    comm = MPI.COMM_WORLD.Dup()
    NOTICES.start()  # collective too: before the checks below, which may fail on one rank only
    if not getattr(_abort_job_at_exit, "_registered", False):
        atexit.register(_abort_job_at_exit)
        _abort_job_at_exit._registered = True
    if world_size not in (-1, None) and world_size != comm.Get_size():
        raise ValueError(f"init_process_group: world_size={world_size} but MPI started {comm.Get_size()} "
                         f"processes (launch with -n {world_size})")
    if rank not in (-1, None) and rank != comm.Get_rank():
        raise ValueError(f"init_process_group: rank={rank} but MPI gave this process rank {comm.Get_rank()}")
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    _STATE.world = ProcessGroup(comm, list(range(comm.Get_size())), seconds, group_name or "0")
    _STATE.groups = [_STATE.world]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization: bool = False,
              group_desc=None, device_id=None, sort_ranks: bool = True):
    """A group over ``ranks`` (global ranks; all of them when None). Every process must call it, members or not;
    non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    if backend is not None and Backend(backend) != Backend.MPI:
        raise RuntimeError(f"toolkit.distributed runs on MPI: backend {backend!r} is not available")
    n = world.size()
    ranks = list(range(n)) if ranks is None else [int(r) for r in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    if len(ranks) > n:
        raise ValueError("the new group's world size should be less or equal to the world size set by "
                         "init_process_group")
    for r in ranks:
        if r < 0 or r >= n:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be distinct, got {ranks}")
    world._check_alive()
    # MPI_Comm_create blocks until every rank calls it: meet first in a barrier that is polled like any operation,
    # so a rank that never comes fails this one with a clear error instead of a hang.
    wait_requests(world, [world._comm.Ibarrier()], "new_group")
    comm = world._comm.Create(world._comm.Get_group().Incl(ranks))
    _STATE.counter += 1
    if comm == mpi().COMM_NULL:
        return _NON_GROUP_MEMBER
    comm.Set_errhandler(mpi().ERRORS_RETURN)
    pg = ProcessGroup(comm, ranks, _seconds(timeout) if timeout is not None else world._timeout,
                      group_desc or str(_STATE.counter))
    _STATE.groups.append(pg)
    return pg


def destroy_process_group(group=None) -> None:
    """Free a group's communicator; without an argument, every group and the default one."""
    if group is None or group is _STATE.world:
        if _STATE.world is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        for pg in _STATE.groups:
            if pg._aborted is None:
                pg._comm.Free()
        _STATE.world = None
        _STATE.groups = []
        return
    if group == _NON_GROUP_MEMBER:
        return
    if group in _STATE.groups:
        _STATE.groups.remove(group)
        if group._aborted is None:
            group._comm.Free()


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (-1 when not a member)."""
    pg = resolve_group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    """How many processes ``group`` has (-1 when this process is not a member)."""
    pg = resolve_group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> Backend:
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(Backend.MPI)


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return list(pg._ranks)


def get_global_rank(group, group_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)
