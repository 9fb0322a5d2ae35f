"""Copying nodes into a graph at its insertion point, reading inputs through a value map.

Unrolling copies a loop body once per iteration and inlining copies a subgraph
into its parent: both are "clone these nodes here, with these values standing in
for those", nested blocks and ``Subgraph`` attributes included.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ir.graph import Block, Graph, Node, Value


def _lookup(env: dict, v: Value) -> Value:
    return env.get(v, v)


def clone_node(g: Graph, n: Node, env: dict) -> Node:
    """Insert a copy of ``n`` at ``g``'s insertion point; ``env`` maps old values to new and gains the copies."""
    m = g.create(n.kind, [_lookup(env, v) for v in n.inputs], 0, n.op)
    for o in n.outputs:
        c = m.add_output(o.type)
        c.set_debug_name(o._name)
        env[o] = c
    m.attributes = {k: (v.copy() if isinstance(v, Graph) else v) for k, v in n.attributes.items()}
    m.source, m.scope = n.source, n.scope
    g.insert_node(m)
    for b in n.blocks:
        nb = m.add_block()
        for v in b.inputs:
            env[v] = nb.add_input(v._name, v.type)
        with g.inserting_at_end(nb):
            clone_block_body(g, b, env)
        for v in b.outputs:
            nb.register_output(_lookup(env, v))
    return m


def clone_block_body(g: Graph, b: Block | Iterable[Node], env: dict) -> None:
    """Clone every node of ``b`` (a block, or a list of nodes) at ``g``'s insertion point, in order."""
    for n in list(b.nodes if isinstance(b, Block) else b):
        clone_node(g, n, env)
