"""The RPC layer's settings and names: ``BackendType``, ``TensorPipeRpcBackendOptions``, ``WorkerInfo``, constants.

``TensorPipeRpcBackendOptions`` keeps PyTorch's name and signature so that scripts run unchanged; here it
configures the ZeroMQ agent (``num_worker_threads``: threads that run incoming calls; ``rpc_timeout``: the default
per-call timeout in seconds, 0 for none; ``init_method``: ``"env://"`` or ``"tcp://host:port"``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["BackendType", "RpcBackendOptions", "TensorPipeRpcBackendOptions", "WorkerInfo",
           "DEFAULT_RPC_TIMEOUT_SEC", "DEFAULT_INIT_METHOD", "DEFAULT_NUM_WORKER_THREADS", "UNSET_RPC_TIMEOUT",
           "DEFAULT_SHUTDOWN_TIMEOUT"]

DEFAULT_RPC_TIMEOUT_SEC = 60.0
DEFAULT_INIT_METHOD = "env://"
DEFAULT_NUM_WORKER_THREADS = 16
UNSET_RPC_TIMEOUT = -1.0
DEFAULT_SHUTDOWN_TIMEOUT = 0


class BackendType(enum.Enum):
    """The RPC backends; one, under PyTorch's name, whose transport here is ZeroMQ."""

    TENSORPIPE = 1


class RpcBackendOptions:
    """Options common to every backend: the default timeout (seconds) and the rendezvous address."""

    def __init__(self, rpc_timeout: float = DEFAULT_RPC_TIMEOUT_SEC, init_method: str = DEFAULT_INIT_METHOD):
        self.rpc_timeout = float(rpc_timeout)
        self.init_method = init_method

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rpc_timeout={self.rpc_timeout}, init_method={self.init_method!r})"


class TensorPipeRpcBackendOptions(RpcBackendOptions):
    """The options of ``init_rpc``, as ``torch.distributed.rpc.TensorPipeRpcBackendOptions``.

    ``device_maps`` and ``devices`` (CUDA tensors sent device to device) are accepted only empty: tensors travel
    from host memory.
    """

    def __init__(self, *, num_worker_threads: int = DEFAULT_NUM_WORKER_THREADS,
                 rpc_timeout: float = DEFAULT_RPC_TIMEOUT_SEC, init_method: str = DEFAULT_INIT_METHOD,
                 device_maps: dict | None = None, devices: list | None = None,
                 _transports: list | None = None, _channels: list | None = None):
        super().__init__(rpc_timeout, init_method)
        if num_worker_threads < 1:
            raise ValueError(f"num_worker_threads must be at least 1, got {num_worker_threads}")
        if device_maps or devices:
            raise NotImplementedError("toolkit.distributed.rpc sends tensors from host memory: device_maps and "
                                      "devices are not supported; move tensors to the CPU before sending them")
        self.num_worker_threads = int(num_worker_threads)
        self.device_maps: dict = {}
        self.devices: list = []


@dataclass(frozen=True)
class WorkerInfo:
    """A worker's rank (``id``) and ``name``, as ``get_worker_info`` returns them; usable wherever a ``to`` is."""

    name: str
    id: int

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, name={self.name})"

    __str__ = __repr__
