"""The distributed backward pass: local backward passes chained across workers by RPC.

``backward(context_id, roots)`` backpropagates from ``roots`` on this worker with the local autograd engine
(``toolkit.autograd.grad`` over the leaves the roots reach, so no ``.grad`` is touched). A leaf that arrived in
an RPC message sends its gradient back to the message's sender, which continues from the tensors that message
carried (``_continue_from_send``), in turn returning gradients to the workers those came from. The gradients of
every other leaf (the parameters each worker holds) are summed in that worker's context, where
``get_gradients`` and ``DistributedOptimizer`` read them. A tensor used both locally and in an RPC gets each
path's share in its own pass, and the shares add up: that is PyTorch's "FAST mode" algorithm, which trades
recomputing shared parts of the graph for not having to know the whole distributed graph in advance.
"""

from __future__ import annotations

from collections import defaultdict

from ... import autograd
from ...autograd.engine import reachable_nodes
from ...autograd.node import AccumulateGrad
from ...futures import wait_all
from ...ops import api
from ...tensor import Tensor
from . import contexts as _context

__all__ = ["backward", "run_pass"]


def backward(context_id: int, roots: list, retain_graph: bool = False) -> None:
    """Backpropagate from the scalar ``roots`` through every worker their values came from (see the module)."""
    ctx = _context.get(context_id)
    roots = list(roots)
    for i, r in enumerate(roots):
        if not isinstance(r, Tensor):
            raise TypeError(f"dist_autograd.backward: roots[{i}] must be a Tensor, not {type(r).__name__}")
        if not r.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if r.numel() != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs (roots[{i}] has shape "
                               f"{list(r.shape)})")
    with _context.using(context_id):
        run_pass(ctx, roots, [api.ones_like(r) for r in roots])


def _leaves(roots: list) -> list:
    """The leaves (AccumulateGrad variables) the roots' graphs reach, each once."""
    return [n.variable for n in reachable_nodes([r.grad_fn for r in roots if r.grad_fn is not None])
            if isinstance(n, AccumulateGrad)]


def run_pass(ctx, roots: list, grads: list) -> None:
    """One worker's pass: ``grads`` from ``roots`` to its leaves; received leaves' gradients go to their senders."""
    found: dict[int, tuple] = {}

    def add(leaf, g):
        have = found.get(id(leaf))
        found[id(leaf)] = (leaf, g if have is None else have[1] + g)

    inner = [(r, g) for r, g in zip(roots, grads) if g is not None and r.requires_grad]
    for r, g in inner:
        if r.grad_fn is None:
            add(r, g)
    through = [(r, g) for r, g in inner if r.grad_fn is not None]
    if through:
        leaves = _leaves([r for r, _ in through])
        if leaves:
            got = autograd.grad([r for r, _ in through], leaves, [g for _, g in through], retain_graph=True,
                                allow_unused=True)
            for leaf, g in zip(leaves, got):
                if g is not None:
                    add(leaf, g)
    back: dict[tuple, dict] = defaultdict(dict)
    for leaf, g in found.values():
        came = ctx.received.get(leaf)
        if came is None:
            ctx.accumulate(leaf, g)
        else:
            src, autograd_id, position = came
            back[(src, autograd_id)][position] = g
    if back:
        from .. import rpc  # noqa: PLC0415 - the RPC layer sits above this module

        wait_all([rpc.rpc_async(src, _continue_from_send,
                                args=(ctx.id, autograd_id, [by_position.get(i) for i in range(max(by_position) + 1)]))
                  for (src, autograd_id), by_position in back.items()])


def _continue_from_send(context_id: int, autograd_id: int, grads: list) -> None:
    """On the sender of a message: continue the backward pass from the tensors it carried."""
    ctx = _context.get(context_id)
    with ctx.lock:
        sent = ctx.sends.get(autograd_id)
    if sent is None:
        raise RuntimeError(f"distributed autograd context {context_id} has no message {autograd_id} to "
                           "backpropagate through (was it released?)")
    with _context.using(context_id):
        run_pass(ctx, sent[:len(grads)], grads)
