"""``toolkit.distributed.rpc``: remote calls and remote references between processes, as ``torch.distributed.rpc``.

Start one process per worker (``python -m toolkit.distributed.run -n 3 script.py``, or any launcher that sets
RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT), then::

    import toolkit
    import toolkit.distributed.rpc as rpc

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=3)
    if rank == 0:
        rpc.rpc_sync("worker1", toolkit.add, args=(toolkit.ones(2), 3))      # tensor([4., 4.])
        fut = rpc.rpc_async("worker2", toolkit.mul, args=(toolkit.ones(2), 2))
        rref = rpc.remote("worker1", toolkit.ones, args=(3,))               # the tensor stays on worker1
        rref.rpc_sync().sum()                                                # runs on worker1
        fut.wait(), rref.to_here()
    rpc.shutdown()                                                           # waits for every worker

How it is built, and why:

- **Transport: ZeroMQ** (pyzmq, ``pip install toolkit[rpc]``). Each worker binds one ROUTER socket that receives
  every request and reply sent to it, and opens one DEALER socket per peer to send; ZeroMQ gives ordered,
  framed, reconnecting channels and multi-part messages whose frames can point at a tensor's memory. MPI (what
  ``toolkit.distributed``'s collectives use) was not chosen: a rank that dies there aborts the whole job, while RPC
  must turn a dead worker into errors on the futures that wait for it and keep the others running.
- **Threads** (``agent``): one IO thread per worker owns the sockets, reads every message and completes futures;
  a pool of ``num_worker_threads`` runs incoming calls, so a callee may call back into its caller (nested RPCs)
  without deadlock. ``Future.then`` callbacks of RPC futures run on the IO thread and should not block.
- **Rendezvous** (``rendezvous``): PyTorch's ``env://`` (MASTER_ADDR / MASTER_PORT) or ``tcp://host:port``. Rank 0
  listens there, gathers every worker's name and endpoint, checks that names are unique (PyTorch's error
  otherwise), and sends everyone the directory. ``rank`` / ``world_size`` come from ``init_rpc``, else RANK /
  WORLD_SIZE, else Open MPI's OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE.
- **Wire format** (``wire``): a message is ZeroMQ frames: the job token, a JSON header, a pickled payload, then one
  raw frame per tensor (dtype, shape and strides in the header; a tensor's bytes are never pickled and leave from
  its own memory). The callable travels by qualified name (module and qualname, imported on the callee:
  module-level functions, builtins, toolkit ops), never as pickled code. Arguments, results and errors are
  pickled. **Trust:** unpickling runs code, so a worker unpickles only messages carrying the job token, a random
  secret that rank 0 creates at rendezvous and sends with the directory; anyone who can reach rank 0's port
  during rendezvous can join the job (as with PyTorch's env:// store), so run jobs on networks you trust.
- **Errors and timeouts**: an error raised by the callee is raised by the caller with the same type where it can
  be rebuilt (else ``RuntimeError``), its message ``On WorkerInfo(id=1, name=worker1):`` followed by the callee's
  repr of the error and its traceback. Every call has a deadline (``timeout=`` per call; -1 for the options'
  ``rpc_timeout``, PyTorch's 60 s by default; 0 for none); a call past it fails with PyTorch's "RPC ran for more
  than set timeout" naming the function and the worker. A worker whose connection closes (its process died, or it
  stopped answering ZeroMQ's heartbeats) fails every call waiting on it at once, naming it.
- **RRefs** (``rref``): ``remote`` leaves the value on the callee, its owner, which counts the workers holding a
  user RRef to it (RRefs inside RPC arguments and results count too) and frees the value when the last is
  deleted. ``_rref_context_get_debug_info()`` reads a worker's counts.
- **Message kinds** (``wire.Kind``) each have one handler on the agent (``RpcAgent.handlers``).
- **Distributed autograd** (``toolkit.distributed.autograd``): a message sent inside a context carries the
  context's id in its header (and, with tensors requiring grad, an autograd id recorded on both ends); the
  callee runs the function inside the same context, and tensors requiring grad arrive behind a
  ``RecvRpcBackward`` node. ``toolkit.distributed.optim.DistributedOptimizer`` steps parameters held as RRefs.
- **Profiling**: under ``toolkit.autograd.profiler.profile`` each call is an event named as PyTorch names it
  (``rpc_async#aten::add(worker0 -> worker1)``), from its send until its reply.

Not here yet: ``@rpc.functions.async_execution``, CUDA tensors (send host tensors), TorchScript functions.
"""

from .api import (
    _rref_context_get_debug_info,
    get_rpc_timeout,
    get_worker_info,
    init_rpc,
    is_available,
    remote,
    rpc_async,
    rpc_sync,
    shutdown,
)
from .options import (
    BackendType,
    RpcBackendOptions,
    TensorPipeRpcBackendOptions,
    WorkerInfo,
)
from .rref import RRef

__all__ = ["BackendType", "RRef", "RpcBackendOptions", "TensorPipeRpcBackendOptions", "WorkerInfo", "get_rpc_timeout",
           "get_worker_info", "init_rpc", "is_available", "remote", "rpc_async", "rpc_sync", "shutdown"]
