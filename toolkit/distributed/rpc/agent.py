"""The RPC agent: one per worker process. It joins the job, sends requests, serves them and keeps the promises.

Threads: the transport's IO thread reads every message, checks its token, and runs the kind's handler (short
work: complete a pending future, count an RRef fork); handlers that run user code (CALL, REMOTE) hand it to a pool
of ``num_worker_threads`` threads, so a callee may itself call back (nested RPCs) without blocking the IO.
Every request is a pending entry with a deadline; the IO thread fails it when the deadline passes, when its peer's
connection is lost, or when the agent shuts down, so no future waits forever on a dead worker.

New message kinds register a handler in ``RpcAgent.handlers`` (``Kind`` -> ``handler(message)``).
"""

from __future__ import annotations

import heapq
import hmac
import itertools
import math
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...futures import Future
from ..autograd import contexts as dist_context
from . import rendezvous
from .functions import describe_error, qualified_name, rebuild_error, resolve
from .options import UNSET_RPC_TIMEOUT, TensorPipeRpcBackendOptions, WorkerInfo
from .pool import CallPool, RpcFuture
from .rref import OwnerEntry, RRef, RRefContext
from .transport import Transport
from .wire import TOKEN_BYTES, Codec, Kind, Message, decode, encode, read_header

__all__ = ["RpcAgent"]

_RENDEZVOUS = (Kind.JOIN, Kind.DIRECTORY, Kind.REJECT)
_NO_TOKEN = bytes(TOKEN_BYTES)
LEAVE_WAIT_S = 10.0


@dataclass
class _Pending:
    future: Future
    dest: int
    what: str
    timeout: float
    deadline: float | None


@dataclass
class _SendContext:
    """What pickling a message for ``dest`` collected: forks to list in its header, forks announced elsewhere."""

    dest: int
    forks: list = field(default_factory=list)
    created: list = field(default_factory=list)
    requiring_grad: list = field(default_factory=list)  # tensors distributed autograd records as sent


class RpcAgent:
    """This worker's end of the job: ``request`` sends and returns a Future, the handlers serve."""

    def __init__(self, name: str, rank: int, world_size: int, options: TensorPipeRpcBackendOptions):
        self.info = WorkerInfo(name, rank)
        self.world_size = world_size
        self.options = options
        self.rrefs = RRefContext(self)
        self.codec = Codec()
        self.codec.register(RRef, "R", self.rrefs.to_wire, self.rrefs.from_wire)
        self.handlers: dict[Kind, Callable[[Message], None]] = {
            Kind.JOIN: self._on_join, Kind.DIRECTORY: self._on_directory, Kind.REJECT: self._on_reject,
            Kind.CALL: self._on_call, Kind.REMOTE: self._on_remote,
            Kind.RESULT: self._on_reply, Kind.ERROR: self._on_reply,
            Kind.RREF_FETCH: self._on_fetch,
            Kind.RREF_FORK: lambda m: self.rrefs.add_fork(m.meta["rref"], m.meta["fork"]),
            Kind.RREF_DELETE: lambda m: self.rrefs.remove_fork(m.meta["rref"], m.meta["fork"]),
            Kind.BARRIER_ARRIVE: self._on_arrive, Kind.BARRIER_PROCEED: self._on_proceed,
            Kind.BARRIER_LEAVE: self._on_leave,
        }
        self._token = _NO_TOKEN
        self._workers: dict[int, WorkerInfo] = {}
        self._by_name: dict[str, WorkerInfo] = {}
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._deadlines: list[tuple[float, int]] = []
        self._lost: dict[int, str] = {}
        self._joins: dict[int, dict] = {}
        self._joined: Future = Future()
        self._arrived: set[int] = set()
        self._proceed: Future = Future()
        self._left: set[int] = set()
        self._barrier_error: BaseException | None = None
        self._closed = False
        self.pool = CallPool(options.num_worker_threads, f"rpc-{name}")
        self._transport = Transport(self._on_frames, self._on_peer_lost, self._tick)

    # -- joining -----------------------------------------------------------------------------------------
    def join(self) -> None:
        """Rendezvous through rank 0; returns once every worker's name and endpoint is known."""
        host, port = rendezvous.master_address(self.options.init_method)
        me = self.info
        if me.id == 0:
            endpoint = self._transport.bind(socket.gethostbyname(host), port)
        else:
            endpoint = self._transport.bind(rendezvous.local_host(host))
        self._transport.start()
        join = {"name": me.name, "rank": me.id, "endpoint": endpoint, "world_size": self.world_size}
        if me.id == 0:
            self._on_join(Message(Kind.JOIN, meta=join))
        else:
            self._transport.connect(0, f"tcp://{host}:{port}")
            self._send(0, Message(Kind.JOIN, src=me.id, meta=join), _NO_TOKEN)
        try:
            self._wait(self._joined, self.options.rpc_timeout,
                       f"init_rpc: {me} timed out waiting for the other workers to join through rank 0 at "
                       f"{host}:{port}")
        except BaseException:
            self.close()
            raise

    def _on_join(self, msg: Message) -> None:
        if self.info.id != 0 or self._joined.done():
            return
        join = msg.meta
        with self._lock:
            if join["rank"] in self._joins:
                error = f"RPC worker rank {join['rank']} joined twice (names {self._joins[join['rank']]['name']} " \
                        f"and {join['name']})"
                self._finish_rendezvous(None, error, [join])
                return
            self._joins[join["rank"]] = join
            if len(self._joins) < self.world_size:
                return
        error = rendezvous.check_joins(self._joins, self.world_size)
        directory = None if error else rendezvous.Directory.from_joins(self._joins)
        self._finish_rendezvous(directory, error, [])

    def _finish_rendezvous(self, directory, error, extra: list) -> None:
        for join in [*self._joins.values(), *extra]:
            if join["rank"] == 0:
                continue
            self._transport.connect(join["rank"], join["endpoint"])
            kind = Kind.REJECT if error else Kind.DIRECTORY
            meta = {"error": error} if error else directory.to_meta()
            self._send(join["rank"], Message(kind, src=0, meta=meta), _NO_TOKEN)
        if error:
            self._complete(self._joined, error=RuntimeError(error))
        else:
            self._adopt(directory)

    def _on_directory(self, msg: Message) -> None:
        if not self._joined.done():
            self._adopt(rendezvous.Directory.from_meta(msg.meta))

    def _on_reject(self, msg: Message) -> None:
        self._complete(self._joined, error=RuntimeError(msg.meta["error"]))

    def _adopt(self, directory: rendezvous.Directory) -> None:
        self._token = directory.token
        for rank, name, endpoint in directory.workers:
            info = WorkerInfo(name, rank)
            self._workers[rank], self._by_name[name] = info, info
            self._transport.connect(rank, endpoint)
        self._complete(self._joined, True)

    # -- the directory -----------------------------------------------------------------------------------
    def worker_info(self, to) -> WorkerInfo:
        """The WorkerInfo of a name, a rank or a WorkerInfo."""
        if isinstance(to, WorkerInfo):
            return to
        found = self._by_name.get(to) if isinstance(to, str) else self._workers.get(to) if isinstance(to, int) \
            else None
        if found is None:
            if isinstance(to, str | int):
                raise RuntimeError(f"name:{self.info.name},rank:{self.info.id} could not find destination "
                                   f"{'name' if isinstance(to, str) else 'id'} {to}")
            raise ValueError(f"Cannot get WorkerInfo from name {to}")
        return found

    def all_workers(self) -> list[WorkerInfo]:
        return [self._workers[r] for r in sorted(self._workers)]

    # -- calls -------------------------------------------------------------------------------------------
    def rpc(self, to, func, args, kwargs, timeout: float) -> RpcFuture:
        """``func(*args, **kwargs)`` run on ``to``: the Future of its value."""
        return self._call(self.worker_info(to), func, args, kwargs, timeout, Kind.CALL, {})

    def remote(self, to, func, args, kwargs, timeout: float) -> RRef:
        """``func(*args, **kwargs)`` run on ``to``, which keeps the value: an RRef to it, at once."""
        dest = self.worker_info(to)
        if dest.id == self.info.id:
            qualified_name(func)  # the same functions as to any other worker
            entry = OwnerEntry(Future())
            self.run_local(entry.value, func, args or (), kwargs or {})
            return RRef._make(self, self.info, self.rrefs.new_id(), entry=entry)
        rref_id, fork_id = self.rrefs.new_id(), self.rrefs.new_id()
        created = self._call(dest, func, args, kwargs, timeout, Kind.REMOTE,
                             {"rref": list(rref_id), "fork": list(fork_id)})
        return RRef._make(self, dest, rref_id, fork_id, created=created)

    def _call(self, dest: WorkerInfo, func, args, kwargs, timeout: float, kind: Kind, meta: dict) -> RpcFuture:
        module, qualname = qualified_name(func)
        what = f"{'remote' if kind == Kind.REMOTE else 'rpc'} call of {module}.{qualname}"
        payload = (tuple(args) if args is not None else (), dict(kwargs) if kwargs is not None else {})
        return self.request(dest.id, kind, {"fn": [module, qualname], **meta}, payload, timeout, what)

    # -- requests ----------------------------------------------------------------------------------------
    def request(self, dest: int, kind: Kind, meta: dict, obj, timeout: float, what: str) -> Future:
        """Send ``obj`` (pickled, tensors out of band) to ``dest``; the Future gets the reply's value or error."""
        if self._closed:
            raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.")
        if timeout is None or timeout == UNSET_RPC_TIMEOUT:
            timeout = self.options.rpc_timeout
        fut: Future = RpcFuture(self.pool, self._transport.is_io_thread)
        msg = Message(kind, next(self._ids), self.info.id, meta)
        self._encode_into(msg, obj, dest)
        deadline = time.monotonic() + timeout if timeout > 0 else None
        with self._lock:
            lost = self._lost.get(dest)
            if lost is None:
                self._pending[msg.id] = _Pending(fut, dest, what, timeout, deadline)
                if deadline is not None:
                    heapq.heappush(self._deadlines, (deadline, msg.id))
        if lost is not None:
            fut.set_exception(RuntimeError(f"{what} on {self._workers[dest]} failed: {lost}"))
            return fut
        self._send(dest, msg)
        return fut

    def send_oneway(self, dest: int, kind: Kind, meta: dict, obj=None) -> None:
        """Send a message that expects no reply (RRef bookkeeping)."""
        if self._closed:
            return
        msg = Message(kind, 0, self.info.id, meta)
        if obj is not None:
            self._encode_into(msg, obj, dest)
        self._send(dest, msg)

    def _encode_into(self, msg: Message, obj, dest: int) -> None:
        ctx = _SendContext(dest)
        try:
            msg.payload, msg.tensors = self.codec.dumps(obj, ctx)
        except BaseException:
            for owner, rref_id, fork_id in ctx.created:  # nobody will receive these forks: let them go
                self.send_oneway(owner, Kind.RREF_DELETE, {"rref": list(rref_id), "fork": list(fork_id)})
            raise
        if ctx.forks:
            msg.meta["forks"] = ctx.forks
        context_id = dist_context.current_id()
        if context_id is not None:  # inside a distributed autograd context: the receiver joins it
            msg.meta["ctx"] = context_id
            if ctx.requiring_grad:
                msg.meta["ag"] = dist_context.record_sent(context_id, dest, ctx.requiring_grad)

    def _send(self, dest: int, msg: Message, token: bytes | None = None) -> None:
        self._transport.send(dest, encode(msg, self._token if token is None else token))

    def _reply(self, request: Message, value=None, error: BaseException | None = None) -> None:
        reply = Message(Kind.RESULT, request.id, self.info.id)
        if error is None:
            try:
                with dist_context.using(request.meta.get("ctx")):  # a value requiring grad goes back recorded
                    self._encode_into(reply, value, request.src)
            except Exception as e:  # noqa: BLE001 - a result that cannot be sent is the caller's error
                error = e
        if error is not None:
            reply = Message(Kind.ERROR, request.id, self.info.id, {"error": describe_error(error, str(self.info))})
        self._send(request.src, reply)

    # -- the IO thread -----------------------------------------------------------------------------------
    def _on_frames(self, frames: list) -> None:
        try:
            header = read_header(frames)
            kind = Kind(header["kind"])
        except (IndexError, ValueError, KeyError, TypeError):
            return  # not a message of this protocol
        token = frames[0].bytes if hasattr(frames[0], "bytes") else bytes(frames[0])
        if kind in _RENDEZVOUS:
            if self._joined.done():
                return
        elif self._token == _NO_TOKEN or not hmac.compare_digest(token, self._token):
            return  # not from this job: never unpickled
        msg = decode(header, frames)
        for rref_id, fork_id in msg.meta.get("forks", ()):
            self.rrefs.add_fork(rref_id, fork_id)
        self.handlers[kind](msg)

    def _on_reply(self, msg: Message) -> None:
        with self._lock:
            pending = self._pending.pop(msg.id, None)
            self._lock.notify_all()
        if pending is None:
            return  # timed out or failed already
        if msg.kind == Kind.ERROR:
            self._complete(pending.future, error=rebuild_error(msg.meta["error"]))
            return
        try:
            value = self._load(msg)
        except Exception as e:  # noqa: BLE001 - e.g. a result type the caller cannot import
            self._complete(pending.future, error=e)
            return
        self._complete(pending.future, value)

    def _load(self, msg: Message):
        """A message's value; tensors requiring grad that came inside a distributed autograd context join it."""
        context_id = msg.meta.get("ctx")
        adopt = None if context_id is None else dist_context.receiver(context_id, msg.src, msg.meta.get("ag"))
        return self.codec.loads(msg.payload, msg.tensors, adopt)

    def _on_call(self, msg: Message) -> None:
        self.pool.submit(self._serve, msg, None)

    def _on_remote(self, msg: Message) -> None:
        entry = self.rrefs.add_fork(msg.meta["rref"], msg.meta["fork"])
        self.pool.submit(self._serve, msg, entry.value)

    def _serve(self, msg: Message, into: Future | None) -> None:
        """Run a CALL or REMOTE on a pool thread; a REMOTE keeps the value in its owner entry (``into``)."""
        try:
            func = resolve(*msg.meta["fn"])
            args, kwargs = self._load(msg)
            with dist_context.using(msg.meta.get("ctx")):  # the caller's distributed autograd context
                value = func(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - every error goes back to the caller
            self._reply(msg, error=e)
            if into is not None:
                self._complete(into, error=e)
            return
        if into is None:
            self._reply(msg, value)
        else:  # answer the REMOTE first: a waiting to_here() then finds its RRef confirmed
            self._reply(msg, None)
            self._complete(into, value)

    def run_local(self, into: Future, func, args, kwargs) -> None:
        """Run ``func`` on the pool, keeping its value (or error) in ``into``: ``remote()`` to this worker."""
        def run():
            try:
                value = func(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001 - kept for to_here() / local_value() to raise
                self._complete(into, error=e)
                return
            self._complete(into, value)

        self.pool.submit(run)

    def _on_fetch(self, msg: Message) -> None:
        entry = self.rrefs.entry(msg.meta["rref"])
        if entry is None:
            self._reply(msg, error=RuntimeError(f"RRef GloballyUniqueId(created_on={msg.meta['rref'][0]}, "
                                                f"local_id={msg.meta['rref'][1]}) is not known on its owner "
                                                f"{self.info} (was it deleted?)"))
            return

        def answer(value_future: Future) -> None:
            try:
                self._reply(msg, value_future.value())
            except BaseException as e:  # noqa: BLE001 - the remote call's error, for to_here() to raise
                self._reply(msg, error=e)

        entry.value.add_done_callback(answer)

    def _tick(self) -> float:
        """Fail the requests whose deadline passed; return how long the IO thread may sleep."""
        now = time.monotonic()
        expired = []
        with self._lock:
            while self._deadlines and self._deadlines[0][0] <= now:
                _, msg_id = heapq.heappop(self._deadlines)
                pending = self._pending.pop(msg_id, None)
                if pending is not None:
                    expired.append(pending)
            if expired:
                self._lock.notify_all()
            wait = self._deadlines[0][0] - now if self._deadlines else 1.0
        for p in expired:
            ms = int(round(p.timeout * 1000))
            self._complete(p.future, error=RuntimeError(
                f"RPC ran for more than set timeout ({ms} ms) and will now be marked with an error: {p.what} on "
                f"{self._workers.get(p.dest, p.dest)}"))
        return min(max(wait, 0.0), 1.0)

    def _on_peer_lost(self, rank: int) -> None:
        """A peer's connection closed: fail everything that waits on it, now and later."""
        if self._closed:
            return
        info = self._workers.get(rank, rank)
        reason = f"the connection to {info} was lost (its process exited or stopped responding)"
        with self._lock:
            self._lost[rank] = reason
            failed = [p for p in self._pending.values() if p.dest == rank]
            for msg_id in [i for i, p in self._pending.items() if p.dest == rank]:
                del self._pending[msg_id]
            self._lock.notify_all()
        for p in failed:
            self._complete(p.future, error=RuntimeError(f"{p.what} on {info} failed: {reason}"))
        if (rank == 0 or (self.info.id == 0 and rank not in self._arrived)) and not self._proceed.done():
            self._barrier_error = RuntimeError(f"shutdown: {reason}")

    # -- shutdown ----------------------------------------------------------------------------------------
    def _on_arrive(self, msg: Message) -> None:
        with self._lock:
            self._arrived.add(msg.src)
            everyone = len(self._arrived) == self.world_size
        if everyone:
            for rank in self._workers:
                self._send(rank, Message(Kind.BARRIER_PROCEED, 0, self.info.id))

    def _on_proceed(self, msg: Message) -> None:
        if self.info.id != 0:
            self._send(0, Message(Kind.BARRIER_LEAVE, 0, self.info.id))
        self._complete(self._proceed, True)

    def _on_leave(self, msg: Message) -> None:
        with self._lock:
            self._left.add(msg.src)
            self._lock.notify_all()

    def wait_all_workers(self, timeout: float) -> None:
        """Wait for this worker's outstanding requests, then for every worker to be there (a barrier on rank 0)."""
        deadline = time.monotonic() + timeout if timeout > 0 else math.inf
        with self._lock:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"shutdown: {len(self._pending)} RPCs from {self.info} did not finish "
                                       f"within {timeout} seconds")
                self._lock.wait(min(left, 0.1))
        self._send(0, Message(Kind.BARRIER_ARRIVE, 0, self.info.id))
        proceeded = self._event_of(self._proceed)
        while not proceeded.is_set():
            if self._barrier_error is not None:
                raise self._barrier_error
            if time.monotonic() > deadline:
                raise RuntimeError(f"shutdown: {self.info} timed out after {timeout} seconds waiting for the "
                                   "other workers")
            proceeded.wait(0.05)
        if self.info.id == 0:
            # Rank 0 stays until every worker has its PROCEED (it answers LEAVE), so that no worker mistakes
            # rank 0 closing its sockets for rank 0 dying before the barrier.
            others = set(self._workers) - {0}
            leave_by = min(deadline, time.monotonic() + LEAVE_WAIT_S)
            with self._lock:
                while not others <= self._left | set(self._lost) and time.monotonic() < leave_by:
                    self._lock.wait(0.05)

    def close(self) -> None:
        """Stop serving: fail what is still pending, close the sockets, stop the threads."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
            self._lock.notify_all()
        for p in pending:
            self._complete(p.future, error=RuntimeError(f"{p.what} on {self._workers.get(p.dest, p.dest)} "
                                                        "failed: the RPC agent was shut down"))
        self._transport.close()
        self.pool.shutdown()

    # -- futures -----------------------------------------------------------------------------------------
    @staticmethod
    def _complete(fut: Future, value=None, error: BaseException | None = None) -> None:
        if fut.done():
            return
        try:
            if error is not None:
                fut.set_exception(error)
            else:
                fut.set_result(value)
        except RuntimeError:
            pass  # completed by another thread in between (a reply racing its timeout)

    @staticmethod
    def _event_of(fut: Future) -> threading.Event:
        """An event set when ``fut`` completes (one callback, however often it is waited on)."""
        done = threading.Event()
        fut.add_done_callback(lambda _: done.set())
        return done

    def _wait(self, fut: Future, timeout: float, message: str):
        if not self._event_of(fut).wait(timeout if timeout > 0 else None):
            raise RuntimeError(message)
        return fut.wait()
