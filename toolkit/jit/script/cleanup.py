"""Tidying a freshly compiled graph: constants pooled at the top, unused nodes dropped (as TorchScript shows it)."""

from __future__ import annotations

from ..ir import Graph


def _key(n):
    v = n.attributes.get("value")
    if isinstance(v, (list, dict)) or (v is not None and not isinstance(v, (bool, int, float, str))
                                       and type(v).__name__ not in ("dtype", "device")):
        return None
    return (str(n.output().type), type(v).__name__, repr(v))


def pool_constants(graph: Graph) -> None:
    """Move scalar constants to the top of the graph, one node per distinct value."""
    seen: dict = {}
    top = graph.block
    hoisted = []
    for n in list(graph.all_nodes()):
        if n.kind != "prim::Constant":
            continue
        k = _key(n)
        if k is None:
            continue
        first = seen.get(k)
        if first is None:
            seen[k] = n
            n.owning_block.nodes.remove(n)
            n.owning_block = top
            hoisted.append(n)
            continue
        n.output().replace_all_uses_with(first.output())
        n.owning_block.nodes.remove(n)
        n.owning_block = None
        n.output().set_debug_name(None)
    top.nodes[:0] = hoisted
