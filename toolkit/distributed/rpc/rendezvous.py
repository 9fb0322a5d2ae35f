"""Where the job meets: rank 0's address, this worker's rank and world size, and the directory of workers.

As PyTorch's ``env://``: rank 0 listens on ``MASTER_ADDR:MASTER_PORT`` (or the ``tcp://host:port`` of
``init_method``); every other worker sends it a JOIN with its name, rank and endpoint; once all ``world_size`` have
joined, rank 0 checks that names are unique and sends everyone the DIRECTORY (all names and endpoints) and the
job token, a random secret that every later message must carry. A failed check (two workers with one name) is
sent to every worker as a REJECT and raised everywhere.

``rank`` and ``world_size`` come from ``init_rpc``'s arguments, else ``RANK`` / ``WORLD_SIZE``, else Open MPI's
``OMPI_COMM_WORLD_RANK`` / ``OMPI_COMM_WORLD_SIZE`` (so ``python -m toolkit.distributed.run -n 3 script.py``
starts an RPC job without further settings: when every rank runs on this machine and MASTER_ADDR / MASTER_PORT
are unset, rank 0 listens on 127.0.0.1 at a port derived from Open MPI's job id).
"""

from __future__ import annotations

import os
import secrets
import socket
import zlib
from urllib.parse import urlparse

__all__ = ["master_address", "rank_and_world_size", "local_host", "Directory", "check_joins"]

MPI_PORT_BASE, MPI_PORT_SPAN = 30000, 20000


def master_address(init_method: str) -> tuple[str, int]:
    """``(host, port)`` of rank 0 from ``init_method`` (``env://`` reads MASTER_ADDR / MASTER_PORT)."""
    url = urlparse(init_method)
    if url.scheme == "env":
        if "MASTER_ADDR" not in os.environ and "MASTER_PORT" not in os.environ and _mpi_job_port() is not None:
            return "127.0.0.1", _mpi_job_port()
        values = []
        for var in ("MASTER_ADDR", "MASTER_PORT"):
            if var not in os.environ:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {var} expected, but not set")
            values.append(os.environ[var])
        host, port = values[0], values[1]
    elif url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"Error initializing torch.distributed using tcp:// rendezvous: {init_method!r} "
                             "must be tcp://host:port")
        host, port = url.hostname, url.port
    else:
        raise ValueError(f"toolkit.distributed.rpc: unsupported init_method {init_method!r}; use env:// or "
                         "tcp://host:port")
    try:
        return host, int(port)
    except ValueError:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: MASTER_PORT must be a "
                         f"port number, got {port!r}") from None


def _mpi_job_port() -> int | None:
    """A port for the job when Open MPI started every rank on this machine and no MASTER_* is set: one that all
    its ranks derive alike from the job id (``python -m toolkit.distributed.run -n 3 script.py``)."""
    job = os.environ.get("OMPI_MCA_ess_base_jobid") or os.environ.get("PMIX_NAMESPACE")
    size = os.environ.get("OMPI_COMM_WORLD_SIZE")
    if not job or not size or os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE") != size:
        return None
    return MPI_PORT_BASE + zlib.crc32(job.encode()) % MPI_PORT_SPAN


def _env_int(*names: str) -> int | None:
    for name in names:
        if os.environ.get(name, "") != "":
            return int(os.environ[name])
    return None


def rank_and_world_size(rank: int, world_size: int | None) -> tuple[int, int]:
    """The worker's rank and the job's size: the arguments, else RANK/WORLD_SIZE, else Open MPI's variables."""
    if rank is None or rank < 0:
        rank = _env_int("RANK", "OMPI_COMM_WORLD_RANK")
    if world_size is None:
        world_size = _env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE")
    if rank is None or world_size is None:
        raise ValueError("init_rpc: rank and world_size must be given, as arguments or through the RANK and "
                         "WORLD_SIZE environment variables (or an Open MPI launch)")
    if not 0 <= rank < world_size:
        raise ValueError(f"init_rpc: rank {rank} is out of range for world_size {world_size}")
    return int(rank), int(world_size)


def local_host(master_host: str) -> str:
    """This machine's address on the route to rank 0 (127.0.0.1 when rank 0 is local)."""
    ip = socket.gethostbyname(master_host)
    if ip.startswith("127."):
        return ip
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ip, 1))  # no packet is sent: this only picks the outgoing interface
        return s.getsockname()[0]


class Directory:
    """Every worker's rank, name and endpoint, and the job token."""

    def __init__(self, workers: list[tuple[int, str, str]], token: bytes):
        self.workers = sorted(workers)
        self.token = token

    @classmethod
    def from_joins(cls, joins: dict[int, dict]) -> Directory:
        return cls([(r, j["name"], j["endpoint"]) for r, j in joins.items()], secrets.token_bytes(16))

    def to_meta(self) -> dict:
        return {"workers": self.workers, "token": self.token.hex()}

    @classmethod
    def from_meta(cls, meta: dict) -> Directory:
        return cls([tuple(w) for w in meta["workers"]], bytes.fromhex(meta["token"]))


def check_joins(joins: dict[int, dict], world_size: int) -> str | None:
    """The error in a complete set of JOINs (a duplicate name or a disagreeing world size), or None."""
    seen: dict[str, int] = {}
    for rank in sorted(joins):
        join = joins[rank]
        if join["world_size"] != world_size:
            return (f"RPC worker {join['name']} (rank {rank}) was started with world_size {join['world_size']}, "
                    f"rank 0 with {world_size}")
        if join["name"] in seen:
            return (f"RPC worker name {join['name']} is not unique. Workers {seen[join['name']]} and {rank} share "
                    "the same name.")
        seen[join["name"]] = rank
    return None
