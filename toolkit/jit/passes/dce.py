"""Dead code elimination: drop nodes whose results nobody uses, unless they have side effects.

Side effects are read from the registry (in-place and random ops) and from the
node kind (unknown ``prim::`` nodes such as ``prim::Print`` are kept).

``trace_dce`` is the tracer's policy, PyTorch's at the end of ``torch.jit.trace``:
a random op whose result is unused goes too, and a write is kept only when it
reaches memory that outlives the call or is read later (a graph input, a module's
parameter or buffer, a returned value, or a value a kept node reads afterwards)::

    def f(x):
        x.add_(1)          # kept: writes an input
        y = x.clone()
        y.add_(1)          # dropped with the clone: nothing reads y
        torch.rand(3)      # dropped: its numbers are never used
        return x * 2
"""

from __future__ import annotations

from ..ir import kinds as K
from ..ir.graph import Block, Graph, Node
from ..kinds.effects import AliasSets, has_side_effects, is_mutating
from .manager import register_pass


def _block(b: Block, returned: set) -> bool:
    """``returned``: every value some block returns (a block's outputs are not uses), gathered once per sweep."""
    changed = False
    for n in reversed(list(b.nodes)):
        for inner in n.blocks:
            changed |= _block(inner, returned)
        if any(o.uses for o in n.outputs) or has_side_effects(n):
            continue
        if any(o in returned for o in n.outputs):
            continue
        n.destroy()
        changed = True
    return changed


@register_pass("dce")
def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove unused side-effect-free nodes, innermost blocks first, until nothing more goes."""
    while _block(graph.block, _returned(graph)):
        pass
    return graph


def _returned(graph: Graph) -> set:
    return {v for blk in graph.all_blocks() for v in blk.outputs}


def remove_dead_traced_nodes(graph: Graph, keep=()) -> set:
    """Drop the top-level nodes a trace does not need (see the module's docstring); returns the removed nodes.

    One walk from the return backwards, as PyTorch's: a node is live when a live node
    (or the return) reads one of its outputs, or when it writes memory that is live at
    that point. Nodes with blocks keep the plain ``dce`` rule, and their blocks are cleaned by it.
    Values in ``keep`` count as returned (the tracer's submodule call results).
    """
    aliases = AliasSets(graph)
    returned = set(graph.outputs) | set(keep)
    live_roots = {aliases.root(v) for v in graph.inputs} | {aliases.root(v) for v in returned}
    live_roots |= {aliases.root(o) for n in graph.all_nodes() if n.kind == K.GET_ATTR for o in n.outputs}
    live: set = set()
    for n in reversed(list(graph.block.nodes)):
        if _is_live(n, aliases, live_roots, live, returned):
            live.add(n)
            live_roots.update(aliases.root(v) for v in n.inputs)
    dead = [n for n in reversed(list(graph.block.nodes)) if n not in live]
    for n in dead:
        n.destroy()
    for n in graph.block.nodes:
        for b in n.blocks:
            while _block(b, _returned(graph)):
                pass
    return set(dead)


def _is_live(n: Node, aliases: AliasSets, live_roots: set, live: set, returned: set) -> bool:
    if any(o in returned or any(_top(u.user) in live for u in o.uses) for o in n.outputs):
        return True
    if n.blocks:
        return has_side_effects(n)
    if n.op is not None or is_mutating(n):  # a registry op or a list write: only its writes can matter
        return any(r in live_roots for r in aliases.written_roots(n))
    return has_side_effects(n)  # prim::Print, prim::CallMethod and other kinds with effects of their own


def _top(n: Node) -> Node:
    while n.owning_block is not None and n.owning_block.owning_node is not None:
        n = n.owning_block.owning_node
    return n


@register_pass("trace_dce")
def eliminate_dead_trace_code(graph: Graph) -> Graph:
    """PyTorch's end-of-trace dead code elimination: unused random draws and writes to dead values go too."""
    remove_dead_traced_nodes(graph)
    return graph
