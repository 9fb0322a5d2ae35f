"""Tidying a freshly compiled graph: constants pooled at the top, unused nodes dropped (as TorchScript shows it)."""

from __future__ import annotations

from ...ir import kinds as K
from ...ir.graph import Graph


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
    replaced: dict = {}  # duplicate's output -> the pooled one (block outputs are redirected in one walk at the end)
    for n in list(graph.all_nodes()):
        if n.kind != K.CONSTANT:
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
        for u in list(n.output().uses):
            u.user.replace_input(u.offset, first.output())
        replaced[n.output()] = first.output()
        n.owning_block.nodes.remove(n)
        n.owning_block = None
        n.output().set_debug_name(None)
    top.nodes[:0] = hoisted
    if replaced:
        for b in graph.all_blocks():
            if any(v in replaced for v in b.outputs):
                b.outputs = [replaced.get(v, v) for v in b.outputs]
