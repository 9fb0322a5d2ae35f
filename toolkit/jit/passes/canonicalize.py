"""Canonicalization: equivalent graphs print identically.

Two steps, as TorchScript's ``Canonicalize``:

- order: within each block, nodes that do not depend on each other are put in a
  deterministic order (a topological order that picks, among the ready nodes,
  the one with the smallest key: kind, attributes, and the canonical positions
  of its inputs). Nodes with side effects keep their order relative to every
  other node, so nothing observable moves;
- numbering: unnamed values are renumbered 0, 1, 2, ... in printing order
  (graph inputs, then each node's outputs, then its blocks' parameters). With
  ``keep_names=False`` user names are dropped too, so graphs traced from
  functions with different variable names compare equal.

Subgraphs held in ``Subgraph`` attributes are canonicalized as graphs of their own.
"""

from __future__ import annotations

import heapq

from ..ir.graph import Block, Graph, Node
from ..ir.printer import format_constant
from ..kinds.effects import has_side_effects
from .manager import register_pass


def _attr_key(v) -> str:
    if isinstance(v, Graph):
        return "graph:" + v.to_string(source_locations=False)
    return f"{type(v).__name__}:{format_constant(v)}"


def _node_key(n: Node, pos: dict) -> tuple:
    attrs = tuple(sorted((k, _attr_key(v)) for k, v in n.attributes.items()))
    ins = tuple(pos.get(v, -1) for v in n.inputs)
    outs = tuple(str(o.type) for o in n.outputs)
    return (n.kind, ins, attrs, outs, len(n.blocks))


def _outer_inputs(n: Node):
    """Values ``n`` reads, including those its nested blocks read from enclosing blocks."""
    yield from n.inputs
    for b in n.blocks:
        for m in b.nodes:
            yield from _outer_inputs(m)
        yield from b.outputs


def _order_block(b: Block, pos: dict) -> None:
    """Reorder ``b``'s nodes canonically; ``pos`` gives each value already placed its canonical position."""
    for v in b.inputs:
        pos[v] = len(pos)
    nodes = list(b.nodes)
    producer = {}
    for i, n in enumerate(nodes):
        for o in n.outputs:
            producer[o] = i
    deps: list[set] = [set() for _ in nodes]
    last_effect, since = None, []
    for i, n in enumerate(nodes):
        for v in _outer_inputs(n):
            j = producer.get(v)
            if j is not None and j != i:
                deps[i].add(j)
        if last_effect is not None:
            deps[i].add(last_effect)  # everything after a side effect stays after it
        if has_side_effects(n):
            deps[i].update(since)  # and everything before it stays before it
            last_effect, since = i, []
        else:
            since.append(i)
    users: list[list] = [[] for _ in nodes]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    waiting = [len(d) for d in deps]
    ready: list = []

    def push(i: int) -> None:
        heapq.heappush(ready, (_node_key(nodes[i], pos), i))

    for i in range(len(nodes)):
        if waiting[i] == 0:
            push(i)
    order: list[Node] = []
    while ready:
        _, i = heapq.heappop(ready)
        n = nodes[i]
        order.append(n)
        for o in n.outputs:
            pos[o] = len(pos)
        for inner in n.blocks:
            _order_block(inner, pos)
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                push(u)
    b.nodes[:] = order


def _renumber(g: Graph, keep_names: bool) -> None:
    counter = 0

    def number(v) -> None:
        nonlocal counter
        if not keep_names:
            v.set_debug_name(None)
        v.unique = counter
        counter += 1

    def block(b: Block) -> None:
        for n in b.nodes:
            for o in n.outputs:
                number(o)
            for inner in n.blocks:
                for v in inner.inputs:
                    number(v)
                block(inner)

    for v in g.inputs:
        number(v)
    block(g.block)
    g._unique = counter


def canonicalize(graph: Graph, keep_names: bool = True) -> Graph:
    """Put independent nodes in a canonical order and renumber values in printing order (in place)."""
    for n in graph.all_nodes():
        sub = n.attributes.get("Subgraph")
        if isinstance(sub, Graph):
            canonicalize(sub, keep_names)
    _order_block(graph.block, {})
    _renumber(graph, keep_names)
    return graph


register_pass("canonicalize")(canonicalize)
