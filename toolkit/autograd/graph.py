"""``toolkit.autograd.graph``: the graph's node type and gradient edges, as PyTorch exposes them."""

from __future__ import annotations

from typing import NamedTuple

from ..tensor import Tensor
from .node import Node
from .recording import gradient_edge


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
