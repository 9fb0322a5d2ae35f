"""Remote references: ``RRef``, and the owner's table that keeps a value alive while any worker refers to it.

A value made by ``remote(to, f)`` lives on ``to``, its **owner**, in an owner entry; every other worker that holds an
``RRef`` to it holds a **user** RRef with its own fork id. The owner's entry keeps the set of live fork ids and frees
the value when the set empties. The protocol that makes the count safe without a global clock:

- ``remote()`` sends REMOTE with a new RRef id and the caller's fork id: the owner's IO thread registers both
  before it reads anything else from the caller.
- Sharing a user RRef with a third worker sends RREF_FORK (the new fork id) to the owner *before* the message that
  carries it, on the same ordered channel as this worker's own later RREF_DELETE: the owner always learns of the
  new user before it can see this worker let go.
- Sending an RRef to its owner lists the fork in the message header; the owner's IO thread registers it on receipt
  and releases it once the arguments are read (by then they hold the value locally).
- A deleted user RRef sends RREF_DELETE. A delete that overtakes its fork (two channels) leaves a tombstone that
  cancels the fork when it comes.

Example::

    rref = rpc.remote("worker1", toolkit.add, args=(toolkit.ones(2), 1))
    rref.to_here()                          # tensor([2., 2.]), fetched from worker1
    rref.rpc_sync().sum()                   # runs value.sum() on worker1
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...futures import Future
from .options import UNSET_RPC_TIMEOUT, WorkerInfo
from .state import current_agent
from .wire import Kind

if TYPE_CHECKING:
    from .agent import RpcAgent

__all__ = ["RRef", "RRefContext", "OwnerEntry"]


@dataclass
class OwnerEntry:
    """An owner's value (a future: ``remote`` may still be computing it) and the fork ids of its users."""

    value: Future
    forks: set = field(default_factory=set)


def _gid(g) -> str:
    return f"GloballyUniqueId(created_on={g[0]}, local_id={g[1]})"


class RRef:
    """A reference to a value on some worker, its owner; ``RRef(value)`` makes one owned here.

    A user RRef (on any other worker) reads the value with ``to_here()`` and runs its methods on the owner with
    ``rpc_sync()`` / ``rpc_async()`` / ``remote()`` proxies.
    """

    def __init__(self, value: Any = None, type_hint: type | None = None):
        agent = current_agent()
        fut: Future = Future()
        fut.set_result(value)
        self._init(agent, agent.info, agent.rrefs.new_id(), None, OwnerEntry(fut))

    def _init(self, agent, owner: WorkerInfo, rref_id, fork_id, entry: OwnerEntry | None,
              created: Future | None = None) -> None:
        self._agent, self._owner, self._id, self._fork_id = agent, owner, tuple(rref_id), fork_id
        self._entry, self._created = entry, created

    @classmethod
    def _make(cls, agent, owner: WorkerInfo, rref_id, fork_id=None, entry=None, created=None) -> RRef:
        rref = cls.__new__(cls)
        rref._init(agent, owner, rref_id, fork_id, entry, created)
        return rref

    # -- who owns it -------------------------------------------------------------------------------------
    def is_owner(self) -> bool:
        return self._entry is not None

    def owner(self) -> WorkerInfo:
        return self._owner

    def owner_name(self) -> str:
        return self._owner.name

    def confirmed_by_owner(self) -> bool:
        """Whether the owner knows of this reference (a ``remote`` call's RRef once the owner has answered)."""
        return self._entry is not None or self._created is None or self._created.done()

    # -- the value ---------------------------------------------------------------------------------------
    def local_value(self):
        """The value itself, on the owner; a RuntimeError on any other worker."""
        if self._entry is None:
            raise RuntimeError(f"For {self!r}, can't call localValue() on user {self._agent.info}. Call it on "
                               f"owner {self._owner}")
        return self._wait_local()

    def to_here(self, timeout: float = UNSET_RPC_TIMEOUT):
        """A copy of the value, fetched from the owner (blocking); the value itself on the owner."""
        if self._entry is not None:
            return self._wait_local()
        self._raise_creation_error()
        fut = self._agent.request(self._owner.id, Kind.RREF_FETCH, {"rref": list(self._id)}, None, timeout,
                                  f"to_here() of {self!r}")
        return fut.wait()

    def _wait_local(self):
        value = self._entry.value
        if value.done():
            return value.wait()
        with self._agent.pool.blocking():  # a remote() to this worker still running on its pool
            return value.wait()

    def _raise_creation_error(self) -> None:
        created = self._created
        if created is not None and created.done():
            created.value()

    # -- running its methods on the owner ----------------------------------------------------------------
    def rpc_sync(self, timeout: float = UNSET_RPC_TIMEOUT) -> _Proxy:
        """``rref.rpc_sync().method(*args)`` runs ``value.method(*args)`` on the owner and returns its result."""
        return _Proxy(self, "rpc_sync", timeout)

    def rpc_async(self, timeout: float = UNSET_RPC_TIMEOUT) -> _Proxy:
        """As ``rpc_sync()``, returning a Future."""
        return _Proxy(self, "rpc_async", timeout)

    def remote(self, timeout: float = UNSET_RPC_TIMEOUT) -> _Proxy:
        """As ``rpc_sync()``, returning an RRef (owned by this RRef's owner) to the result."""
        return _Proxy(self, "remote", timeout)

    # -- lifetime ----------------------------------------------------------------------------------------
    def __del__(self):
        fork_id = getattr(self, "_fork_id", None)
        if fork_id is not None:
            try:
                self._agent.send_oneway(self._owner.id, Kind.RREF_DELETE, {"rref": list(self._id),
                                                                          "fork": list(fork_id)})
            except Exception:  # noqa: BLE001 - the agent is gone (shutdown): nobody keeps a count any more
                pass

    def __reduce__(self):
        raise RuntimeError("An RRef can only be pickled by the RPC layer, as an argument or result of an RPC "
                           "(toolkit.distributed.rpc)")

    def __repr__(self) -> str:
        if self._entry is not None:
            return f"OwnerRRef({_gid(self._id)})"
        return f"UserRRef(RRefId = {_gid(self._id)}, ForkId = {_gid(self._fork_id)})"


def _call_method(rref: RRef, name: str, args: tuple, kwargs: dict):
    """Runs on the owner for the RRef proxies: ``value.name(*args, **kwargs)``."""
    return getattr(rref.local_value(), name)(*args, **kwargs)


class _Proxy:
    def __init__(self, rref: RRef, how: str, timeout: float):
        self._rref, self._how, self._timeout = rref, how, timeout

    def __getattr__(self, name: str):
        rref, how, timeout = self._rref, self._how, self._timeout

        def method(*args, **kwargs):
            call_args = (rref, name, args, kwargs)
            if how == "remote":
                return rref._agent.remote(rref.owner(), _call_method, call_args, {}, timeout)
            fut = rref._agent.rpc(rref.owner(), _call_method, call_args, {}, timeout)
            return fut if how == "rpc_async" else fut.wait()

        return method


class RRefContext:
    """This worker's side of the RRef protocol: its owner entries, fork ids, and the RRefs' wire form."""

    def __init__(self, agent: RpcAgent):
        self._agent = agent
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._owners: dict[tuple, OwnerEntry] = {}
        self._tombstones: set[tuple] = set()

    def new_id(self) -> tuple[int, int]:
        return (self._agent.info.id, next(self._ids))

    # -- the owner's table -------------------------------------------------------------------------------
    def add_fork(self, rref_id, fork_id, entry: OwnerEntry | None = None) -> OwnerEntry:
        """Count a user of ``rref_id`` (creating the entry, or putting ``entry`` back, when it is missing)."""
        rref_id, fork_id = tuple(rref_id), tuple(fork_id)
        with self._lock:
            found = self._owners.get(rref_id)
            if found is None:
                found = self._owners[rref_id] = entry if entry is not None else OwnerEntry(Future())
            if (rref_id, fork_id) in self._tombstones:
                self._tombstones.discard((rref_id, fork_id))
            else:
                found.forks.add(fork_id)
            if not found.forks:
                del self._owners[rref_id]
            return found

    def remove_fork(self, rref_id, fork_id) -> None:
        """A user let go: forget its fork, and the value with the last one."""
        rref_id, fork_id = tuple(rref_id), tuple(fork_id)
        with self._lock:
            entry = self._owners.get(rref_id)
            if entry is None or fork_id not in entry.forks:
                self._tombstones.add((rref_id, fork_id))
                return
            entry.forks.discard(fork_id)
            if not entry.forks:
                del self._owners[rref_id]

    def entry(self, rref_id) -> OwnerEntry | None:
        with self._lock:
            return self._owners.get(tuple(rref_id))

    def debug_info(self) -> dict[str, str]:
        """Counts of this worker's owner entries and of their live users (strings, as PyTorch's)."""
        with self._lock:
            return {"num_owner_rrefs": str(len(self._owners)),
                    "num_forks": str(sum(len(e.forks) for e in self._owners.values()))}

    # -- the wire form -----------------------------------------------------------------------------------
    def to_wire(self, rref: RRef, ctx) -> list:
        """The wire form of ``rref`` sent to ``ctx.dest``, registering the receiver's fork first."""
        owner, me = rref.owner().id, self._agent.info.id
        fork_id = self.new_id()
        if owner == me:
            self.add_fork(rref._id, fork_id, rref._entry)
        elif owner == ctx.dest:
            ctx.forks.append([list(rref._id), list(fork_id)])
        else:
            self._agent.send_oneway(owner, Kind.RREF_FORK, {"rref": list(rref._id), "fork": list(fork_id)})
            ctx.created.append((owner, rref._id, fork_id))
        return [owner, rref.owner().name, list(rref._id), list(fork_id)]

    def from_wire(self, desc: list) -> RRef:
        owner, owner_name, rref_id, fork_id = desc
        agent = self._agent
        if owner == agent.info.id:
            entry = self.entry(rref_id)
            if entry is None:
                raise RuntimeError(f"Owner RRef {_gid(rref_id)} not found on {agent.info}")
            self.remove_fork(rref_id, fork_id)  # the arguments now hold the value itself
            return RRef._make(agent, agent.info, rref_id, entry=entry)
        return RRef._make(agent, WorkerInfo(owner_name, owner), rref_id, tuple(fork_id))
