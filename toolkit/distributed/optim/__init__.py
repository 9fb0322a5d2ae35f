"""``toolkit.distributed.optim``: ``DistributedOptimizer``, stepping parameters on the workers that own them.

``DistributedOptimizer(optim.SGD, param_rrefs, lr=0.05)`` groups the parameter RRefs by owner and makes one
local optimizer on each owner (by RPC); ``step(context_id)`` has every owner set its parameters' ``.grad`` to the
gradients distributed autograd summed in that context (``dist_autograd.get_gradients``) and step, all owners at
once, as PyTorch's does::

    with dist_autograd.context() as context_id:
        loss = model(x).sum()
        dist_autograd.backward(context_id, [loss])
        dist_optim.step(context_id)
"""

from __future__ import annotations

import threading

from ...futures import collect_all, wait_all
from ..autograd import get_gradients

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    """The optimizer on one owner, over the parameters it holds (made there by RPC)."""

    def __init__(self, optimizer_class, local_params_rref: list, *args, **kwargs):
        self._lock = threading.Lock()
        self.params = [rref.local_value() for rref in local_params_rref]
        self.optim = optimizer_class(self.params, *args, **kwargs)

    def step(self, context_id: int) -> None:
        grads = get_gradients(context_id)
        with self._lock:  # steps of concurrent contexts apply one at a time
            for p in self.params:
                p.grad = grads.get(p)
            self.optim.step()


def _new_local_optimizer(optimizer_class, local_params_rref: list, *args, **kwargs) -> _LocalOptimizer:
    return _LocalOptimizer(optimizer_class, local_params_rref, *args, **kwargs)


def _local_step(local_optim_rref, context_id: int) -> None:
    local_optim_rref.local_value().step(context_id)


class DistributedOptimizer:
    """An optimizer of ``optimizer_class`` over parameters held anywhere in the job, given as RRefs."""

    def __init__(self, optimizer_class, params_rref: list, *args, **kwargs):
        from .. import rpc  # noqa: PLC0415 - the RPC layer sits above this package

        by_owner: dict = {}
        for rref in params_rref:
            by_owner.setdefault(rref.owner().id, []).append(rref)
        self.remote_optimizers = [
            rpc.remote(owner, _new_local_optimizer, args=(optimizer_class, rrefs, *args), kwargs=kwargs)
            for owner, rrefs in by_owner.items()]

    def step(self, context_id: int) -> None:
        """Step every owner's parameters with their gradients in distributed autograd context ``context_id``."""
        from .. import rpc  # noqa: PLC0415 - the RPC layer sits above this package

        futures = [rpc.rpc_async(opt.owner(), _local_step, args=(opt, context_id)) for opt in self.remote_optimizers]
        collect_all(futures).wait()  # every owner steps; then the first error is raised
        wait_all(futures)
