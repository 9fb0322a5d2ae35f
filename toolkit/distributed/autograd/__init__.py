"""``toolkit.distributed.autograd``: backward passes through RPCs, as ``torch.distributed.autograd``.

Inside ``with dist_autograd.context() as context_id``, every RPC that carries tensors requiring grad (as
arguments, or as the value it returns) is recorded on both ends; ``dist_autograd.backward(context_id, [loss])``
then sends gradients back along those RPCs to the workers the values came from, and each worker sums its own
leaves' gradients in its part of the context, where ``get_gradients(context_id)`` reads them (``.grad`` is never
written, as in PyTorch). ``toolkit.distributed.optim.DistributedOptimizer`` steps parameters with them::

    with dist_autograd.context() as context_id:
        hidden = rpc.rpc_sync("worker1", forward1, args=(x,))     # runs on worker1, records the RPC
        loss = rpc.rpc_sync("worker2", forward2, args=(hidden,)).sum()
        dist_autograd.backward(context_id, [loss])              # gradients flow back to worker2 and worker1
        dist_optim.step(context_id)

How the pass runs across workers: :mod:`.engine`; what each worker keeps: :mod:`.contexts`. Leaving the
``with`` block releases the context on this worker and on every worker it reached.
"""

from __future__ import annotations

from . import contexts as _context
from .engine import backward

__all__ = ["backward", "context", "get_gradients"]


class context:
    """A distributed autograd context for a ``with`` block; ``as`` gives its id. Needs ``rpc.init_rpc`` first."""

    def __enter__(self) -> int:
        from ..rpc.state import current_agent  # noqa: PLC0415 - the RPC layer sits above this package

        self._ctx = _context.create(current_agent().info.id)
        self._using = _context.using(self._ctx.id)
        return self._using.__enter__()

    def __exit__(self, *exc) -> None:
        self._using.__exit__(*exc)
        _release_everywhere(self._ctx.id)


def get_gradients(context_id: int) -> dict:
    """This worker's leaves' gradients accumulated in context ``context_id``: ``{tensor: gradient}``."""
    return _context.get(context_id).gradients()


def _release_everywhere(context_id: int) -> None:
    """Release the context here and, through RPC, on every worker it reached (each passes it on)."""
    ctx = _context.release(context_id)
    if ctx is None:
        return
    from .. import rpc  # noqa: PLC0415 - the RPC layer sits above this package
    from ..rpc.state import agent_or_none  # noqa: PLC0415

    agent = agent_or_none()
    if agent is None:
        return
    futures = []
    for peer in sorted(ctx.peers - {agent.info.id}):
        try:
            futures.append(rpc.rpc_async(peer, _release_everywhere, args=(context_id,)))
        except RuntimeError:  # the peer is gone: nothing left to release there
            continue
    for f in futures:
        try:
            f.wait()
        except RuntimeError:
            pass
