"""Dead code elimination: drop nodes whose results nobody uses, unless they have side effects.

Side effects are read from the registry (in-place and random ops) and from the
node kind (unknown ``prim::`` nodes such as ``prim::Print`` are kept).
"""

from __future__ import annotations

from ..ir import Block, Graph
from ._effects import has_side_effects
from .manager import register_pass


def _block(b: Block) -> bool:
    changed = False
    for n in reversed(list(b.nodes)):
        for inner in n.blocks:
            changed |= _block(inner)
        if any(o.uses for o in n.outputs) or has_side_effects(n):
            continue
        if any(o is v for o in n.outputs for blk in n.graph.all_blocks() for v in blk.outputs):
            continue
        n.destroy()
        changed = True
    return changed


def _returning_blocks(n):
    """Blocks around and including ``n``'s block: a value returned by any of them counts as used."""
    b = n.owning_block
    while b is not None:
        yield b
        b = b.owning_node.owning_block if b.owning_node is not None else None


@register_pass("dce")
def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove unused side-effect-free nodes, innermost blocks first, until nothing more goes."""
    while _block(graph.block):
        pass
    return graph
