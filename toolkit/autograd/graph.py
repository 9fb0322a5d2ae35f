"""``toolkit.autograd.graph``: the graph's node type and gradient edges, as PyTorch exposes them.

``gradient_edge`` is the edge itself, where the engine, the recorder and the
tensor hooks find the node a tensor's gradient flows into; ``get_gradient_edge``
is its public face.
"""

from __future__ import annotations

from typing import NamedTuple

from ..tensor import Tensor
from .node import AccumulateGrad, Node
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


__all__ = ["Node", "GradientEdge", "get_gradient_edge"]
