"""The public functions: ``init_rpc``, ``rpc_sync``, ``rpc_async``, ``remote``, ``shutdown``, ``get_worker_info``.

Signatures, defaults and errors follow ``torch.distributed.rpc``; the one agent of this process lives here.
"""

from __future__ import annotations

import threading
from typing import Any

from ...futures import Future
from ...profiler import _recorder
from .functions import qualified_name
from .options import (
    DEFAULT_SHUTDOWN_TIMEOUT,
    UNSET_RPC_TIMEOUT,
    BackendType,
    RpcBackendOptions,
    TensorPipeRpcBackendOptions,
    WorkerInfo,
)
from .rendezvous import rank_and_world_size
from .rref import RRef
from .state import agent_or_none, current_agent, set_current_agent

__all__ = ["init_rpc", "rpc_sync", "rpc_async", "remote", "shutdown", "get_worker_info", "get_rpc_timeout",
           "is_available"]

_init_lock = threading.Lock()


def is_available() -> bool:
    """Whether the RPC layer can start: it needs pyzmq (``pip install toolkit[rpc]``)."""
    try:
        import zmq  # noqa: F401
    except ImportError:
        return False
    return True


def init_rpc(name: str, backend: BackendType | None = None, rank: int = -1, world_size: int | None = None,
             rpc_backend_options: RpcBackendOptions | None = None) -> None:
    """Join the RPC job as worker ``name``; returns once every worker has joined.

    ``rank`` and ``world_size`` default to RANK / WORLD_SIZE (or Open MPI's variables); rank 0 listens on
    ``init_method`` (``env://``: MASTER_ADDR / MASTER_PORT).

    Example::

        rpc.init_rpc("worker0", rank=0, world_size=2)
        rpc.rpc_sync("worker1", toolkit.add, args=(toolkit.ones(2), 3))   # tensor([4., 4.])
        rpc.shutdown()
    """
    from .agent import RpcAgent  # imports pyzmq: loaded by init_rpc, never by `import toolkit`

    if backend is not None and not isinstance(backend, BackendType):
        raise TypeError(f"Argument backend must be a member of BackendType, got {backend!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"Worker name must be a non-empty string, got {name!r}")
    if rpc_backend_options is None:
        rpc_backend_options = TensorPipeRpcBackendOptions()
    elif not isinstance(rpc_backend_options, TensorPipeRpcBackendOptions):
        rpc_backend_options = TensorPipeRpcBackendOptions(rpc_timeout=rpc_backend_options.rpc_timeout,
                                                          init_method=rpc_backend_options.init_method)
    if not is_available():
        raise RuntimeError("toolkit.distributed.rpc needs pyzmq: pip install 'pyzmq>=25' (or toolkit[rpc])")
    rank, world_size = rank_and_world_size(rank, world_size)
    with _init_lock:
        if agent_or_none() is not None:
            raise RuntimeError("RPC is already initialized")
        agent = RpcAgent(name, rank, world_size, rpc_backend_options)
        # Current before the join completes: workers that joined first may call this one at once.
        set_current_agent(agent)
        try:
            agent.join()
        except BaseException:
            set_current_agent(None)
            raise


def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    """The WorkerInfo of ``worker_name``, or of this worker."""
    agent = current_agent()
    return agent.info if worker_name is None else agent.worker_info(worker_name)


def get_rpc_timeout() -> float:
    """The default timeout of this worker's RPCs, in seconds (``rpc_timeout`` of its options)."""
    return current_agent().options.rpc_timeout


def rpc_async(to, func, args: tuple | None = None, kwargs: dict | None = None,
              timeout: float = UNSET_RPC_TIMEOUT) -> Future:
    """Run ``func(*args, **kwargs)`` on worker ``to``; a Future of its value (or of its error, raised by wait()).

    ``timeout`` in seconds: -1 for ``rpc_timeout``, 0 for none.
    """
    agent = current_agent()
    fut = agent.rpc(to, func, args, kwargs, timeout)
    return _profiled(fut, "rpc_async", agent, to, func) if _recorder.ACTIVE else fut


def rpc_sync(to, func, args: tuple | None = None, kwargs: dict | None = None,
             timeout: float = UNSET_RPC_TIMEOUT) -> Any:
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its value (its error is raised here)."""
    agent = current_agent()
    fut = agent.rpc(to, func, args, kwargs, timeout)
    return (_profiled(fut, "rpc_sync", agent, to, func) if _recorder.ACTIVE else fut).wait()


def remote(to, func, args: tuple | None = None, kwargs: dict | None = None,
           timeout: float = UNSET_RPC_TIMEOUT) -> RRef:
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return at once an RRef to the value it will keep there."""
    agent = current_agent()
    rref = agent.remote(to, func, args, kwargs, timeout)
    if _recorder.ACTIVE and rref._created is not None:
        _profiled(rref._created, "rpc_remote", agent, to, func)
    return rref


def _profiled(fut: Future, kind: str, agent, to, func) -> Future:
    """Record the call in every running profiler as ``kind#function(caller -> callee)``, PyTorch's event name,
    from now until ``fut`` completes."""
    ops = getattr(func, "__wrapped_ops__", None)  # a toolkit op: its aten name, as PyTorch's builtins show
    if ops:
        fn = ops[0].qualified_name
    else:
        module, qualname = qualified_name(func)
        fn = qualname if module == "builtins" else f"{module}.{qualname}"
    name = f"{kind}#{fn}({agent.info.name} -> {agent.worker_info(to).name})"
    opened = [(r, r.push(name, top=False)) for r in _recorder.ACTIVE]

    def close(_):
        for r, i in opened:
            r.close(i)

    fut.add_done_callback(close)
    return fut


def shutdown(graceful: bool = True, timeout: float = DEFAULT_SHUTDOWN_TIMEOUT) -> None:
    """Leave the job. ``graceful``: first wait for this worker's outstanding RPCs and for every other worker to
    reach shutdown (a barrier through rank 0), so nobody's calls are cut off; ``timeout`` 0 waits as long as that
    takes."""
    agent = current_agent()
    try:
        if graceful:
            agent.wait_all_workers(timeout)
    finally:
        agent.close()
        set_current_agent(None)


def _rref_context_get_debug_info() -> dict[str, str]:
    """This worker's owner RRefs and their live users: ``{"num_owner_rrefs": ..., "num_forks": ...}``."""
    return current_agent().rrefs.debug_info()
