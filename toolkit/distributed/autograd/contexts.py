"""Distributed autograd contexts: what one worker knows of a backward pass that spans RPCs.

A context (``with dist_autograd.context() as context_id``) is current on the thread that opened it, and on
every pool thread serving an RPC sent from inside it: the RPC agent carries its id in each message's header.
Per worker, a context holds

- **sends**: the tensors requiring grad that an RPC message of this worker carried (its arguments, or the value
  it replied with), under the message's autograd id: backward later arrives here with their gradients;
- **received**: each tensor requiring grad that arrived in a message, a leaf of this worker's graph behind a
  ``RecvRpcBackward`` node, with the sender and autograd id to return its gradient to;
- **grads**: the gradients of this worker's own leaves (parameters), accumulated here rather than in ``.grad``;
- **peers**: the workers this context met, which release theirs when it closes.

Context ids are unique across the job: the creating worker's id in the top 16 bits, a counter below.
"""

from __future__ import annotations

import itertools
import threading

from ...autograd import Function

__all__ = ["DistAutogradContext", "RecvRpc", "current_id", "using", "get", "create", "release", "record_sent",
           "receiver"]

_LOCAL = threading.local()
_LOCK = threading.Lock()
_CONTEXTS: dict[int, DistAutogradContext] = {}
_COUNTER = itertools.count(1)
_AUTOGRAD_IDS = itertools.count(1)


class DistAutogradContext:
    """One worker's part of a distributed backward pass (see the module docstring)."""

    def __init__(self, context_id: int):
        self.id = context_id
        self.lock = threading.RLock()
        self.sends: dict[int, list] = {}
        self.received: dict = {}  # received leaf -> (sender, autograd id, position)
        self.grads: dict = {}
        self.peers: set[int] = set()

    def gradients(self) -> dict:
        """A copy of the gradients summed so far: ``{leaf: gradient}``."""
        with self.lock:
            return dict(self.grads)

    def accumulate(self, tensor, grad) -> None:
        with self.lock:
            have = self.grads.get(tensor)
            self.grads[tensor] = grad if have is None else have + grad


def current_id() -> int | None:
    """The id of the context current on this thread, or None."""
    return getattr(_LOCAL, "context_id", None)


class using:
    """Make ``context_id`` (or None) current on this thread for a ``with`` block; restores the previous one."""

    def __init__(self, context_id: int | None):
        self.context_id = context_id

    def __enter__(self):
        self.before = current_id()
        _LOCAL.context_id = self.context_id
        return self.context_id

    def __exit__(self, *exc) -> None:
        _LOCAL.context_id = self.before


def create(worker_id: int) -> DistAutogradContext:
    """A new context with a job-wide unique id, made by worker ``worker_id``."""
    context_id = (worker_id << 48) | next(_COUNTER)
    with _LOCK:
        ctx = _CONTEXTS[context_id] = DistAutogradContext(context_id)
    return ctx


def get(context_id: int, create_missing: bool = False) -> DistAutogradContext:
    """This worker's context ``context_id``; one is made for an id first met in a message (``create_missing``)."""
    with _LOCK:
        ctx = _CONTEXTS.get(context_id)
        if ctx is None and create_missing:
            ctx = _CONTEXTS[context_id] = DistAutogradContext(context_id)
    if ctx is None:
        raise RuntimeError(f"Could not find autograd context with id: {context_id}")
    return ctx


def release(context_id: int) -> DistAutogradContext | None:
    """Forget context ``context_id`` on this worker; the context, or None if it was not here."""
    with _LOCK:
        return _CONTEXTS.pop(context_id, None)


def record_sent(context_id: int, dest: int, tensors: list) -> int:
    """Note that a message to ``dest`` carries ``tensors`` (requiring grad); its autograd id, for the header."""
    ctx = get(context_id, create_missing=True)
    autograd_id = next(_AUTOGRAD_IDS)
    with ctx.lock:
        ctx.sends[autograd_id] = list(tensors)
        ctx.peers.add(dest)
    return autograd_id


def receiver(context_id: int, src: int, autograd_id: int | None):
    """For a message from ``src`` in context ``context_id``: ``adopt(tensor)``, which makes each tensor requiring
    grad it brought a leaf whose gradient goes back to ``src``, and returns what the receiver sees instead: the
    same values with a ``RecvRpcBackward`` grad_fn, as in PyTorch."""
    ctx = get(context_id, create_missing=True)
    with ctx.lock:
        ctx.peers.add(src)
    positions = itertools.count()

    def adopt(t):
        if autograd_id is None:
            return t
        with ctx.lock:
            ctx.received[t] = (src, autograd_id, next(positions))
        return RecvRpc.apply(t)

    return adopt


class RecvRpc(Function):
    """Where a tensor entered this worker by RPC: backward passes its gradient to the leaf the message made."""

    @staticmethod
    def forward(ctx, received):
        return received.detach()

    @staticmethod
    def backward(ctx, grad):
        return grad
