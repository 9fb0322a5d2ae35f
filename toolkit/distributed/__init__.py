"""``toolkit.distributed``: process groups and collectives on MPI, in ``torch.distributed``'s shapes.

Launch N processes with ``python -m toolkit.distributed.run -n N train.py`` (or ``mpirun -n N python
train.py``), then::

    import toolkit.distributed as dist
    dist.init_process_group("mpi")
    t = toolkit.ones(3)
    dist.all_reduce(t)                     # t == N everywhere
    work = dist.all_reduce(t, async_op=True)
    work.wait()

Every operation is a non-blocking MPI call, polled against the group's ``timeout`` and the other ranks' exit
notices: a rank that exits or raises makes the ranks waiting for it fail at once with a ``DistBackendError`` naming
it, whatever the timeout; a rank that hangs makes them fail when the timeout passes. An unhandled error ends the job
(``MPI_Abort``) once the other ranks have reported theirs, or after a few seconds. mpi4py is imported on the first
call, never by ``import toolkit``.
"""

from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .p2p import all_gather_object, broadcast_object_list, irecv, isend, recv, send
from .process_group import (
    Backend,
    DistBackendError,
    DistError,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    is_mpi_available,
    new_group,
)
from .work import Work


def is_available() -> bool:
    """toolkit.distributed is always importable; whether MPI itself loads is ``is_mpi_available()``."""
    return True


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False
