"""Inlining subgraph nodes: a node holding a graph in its ``Subgraph`` attribute (``prim::FusionGroup``)
is replaced by that graph's nodes, wired to the node's inputs and outputs.

The IR has no call node yet, so this is the inlining it needs: it undoes
fusion groups (to run a graph on a path without the fused kernels, or to regroup
it differently), the way TorchScript's ``InlineAutodiffSubgraphs`` and
``UnfuseGraph`` do. Groups nested inside groups, or inside blocks, are inlined too.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ir import types as T
from ..ir.graph import Graph, Node
from ._clone import clone_block_body
from .manager import register_pass


def _subgraph_nodes(g: Graph, kinds) -> list[Node]:
    return [n for n in g.all_nodes()
            if isinstance(n.attributes.get("Subgraph"), Graph) and (kinds is None or n.kind in kinds)]


def inline_subgraph(g: Graph, node: Node) -> list:
    """Replace one subgraph node by its subgraph's nodes; returns the values that replaced its outputs."""
    sub = node["Subgraph"]
    if len(sub.inputs) != len(node.inputs) or len(sub.outputs) != len(node.outputs):
        raise RuntimeError(f"{node.kind}: its subgraph takes {len(sub.inputs)} inputs and returns "
                           f"{len(sub.outputs)} values, but the node has {len(node.inputs)} inputs and "
                           f"{len(node.outputs)} outputs")
    env: dict = dict(zip(sub.inputs, node.inputs))
    created: set = set()
    with g.inserting_before(node):
        clone_block_body(g, sub.block, env)
    created.update(v for k, v in env.items() if k not in sub.inputs)
    results = [env.get(v, v) for v in sub.outputs]
    for out, v in zip(node.outputs, results):
        if v in created and out._name is not None:
            name = out._name
            out.set_debug_name(None)
            v.set_debug_name(name)
        if v in created and out.type != T.TENSOR:
            v.type = out.type  # the group's outputs carry the types seen in the parent graph
        out.replace_all_uses_with(v)
    node.destroy()
    return results


@register_pass("inline_subgraphs")
def inline_subgraphs(graph: Graph, kinds: Iterable[str] | None = None) -> Graph:
    """Inline every subgraph node (only those of ``kinds`` when given) until none is left."""
    kinds = None if kinds is None else frozenset(kinds)
    while True:
        nodes = _subgraph_nodes(graph, kinds)
        if not nodes:
            return graph
        for n in nodes:
            inline_subgraph(graph, n)
