"""``toolkit.autograd.graph``: the graph's node type, gradient edges and saved-tensor hooks, as PyTorch exposes them.

``gradient_edge`` is the edge itself, where the engine, the recorder and the
tensor hooks find the node a tensor's gradient flows into; ``get_gradient_edge``
is its public face. The saved-tensor hooks live in ``saved_hooks`` (they act
where a node saves a tensor) and ``register_multi_grad_hook`` in its own module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..tensor import Tensor
from .mutation_on_saved import allow_mutation_on_saved_tensors
from .node import AccumulateGrad, Node
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from .views import regenerate_view_history


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made once and reused so hooks and edges agree."""
    ex = t._extras()
    acc = ex.get("grad_accumulator")
    if acc is None:
        acc = ex["grad_accumulator"] = AccumulateGrad(t)
    return acc


def gradient_edge(t: Tensor) -> tuple:
    """``(node, input_nr)`` through which a gradient w.r.t. ``t`` flows, or ``(None, 0)``."""
    fn = t.grad_fn
    if fn is not None:
        if t._view_chain is not None and getattr(fn, "_view_version", None) not in (None, t._storage.version):
            regenerate_view_history(t)
            fn = t.grad_fn
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


class GradientEdge(NamedTuple):
    """The ``(node, output_nr)`` a gradient w.r.t. a tensor flows into."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge of ``tensor`` in the graph (its ``grad_fn``, or its leaf's AccumulateGrad)."""
    node, nr = gradient_edge(tensor)
    if node is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return GradientEdge(node, nr)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor), as after an in-place change autograd did not see.

    Saved tensors then refuse to unpack, as for any in-place change; inference
    tensors have no version counter and are left alone.
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not (t._extra and t._extra.get("inference")):
            t._storage.version += 1


# Imported last: it reaches the engine, which itself imports ``gradient_edge`` from here.
from .multi_grad_hook import register_multi_grad_hook  # noqa: E402

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "allow_mutation_on_saved_tensors",
]
