"""Loop unrolling: a ``prim::Loop`` that runs a constant number of times becomes that many copies of its body.

Eligible loops have a constant ``int`` max trip count and a constant-true
condition both on entry and as the body's returned condition (a ``for i in
range(N)`` loop). Each copy reads the previous copy's carried values, the
counter becomes a constant, and the loop's outputs become the last copy's
carried values. Inner loops are unrolled first, so nests of constant loops
flatten completely. Loops whose unrolled size would pass ``max_nodes`` stay.
"""

from __future__ import annotations

from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ._clone import clone_block_body
from .manager import register_pass

MAX_UNROLLED_NODES = 2048


def _constant(v: Value):
    """``(True, value)`` for a ``prim::Constant`` output, else ``(False, None)``."""
    n = v.node
    if n is None or n.kind != K.CONSTANT or n.blocks:
        return False, None
    return True, n.attributes.get("value")


def constant_trip_count(loop: Node) -> int | None:
    """The number of iterations when the loop is a constant-count, always-true-condition loop, else None."""
    ok, trip = _constant(loop.inputs[0])
    if not ok or isinstance(trip, bool) or not isinstance(trip, int):
        return None
    for cond in (loop.inputs[1], loop.blocks[0].outputs[0]):
        ok, c = _constant(cond)
        if not ok or c is not True:
            return None
    return max(trip, 0)


def _block_size(b) -> int:
    """Nodes in a block, nested blocks' nodes included."""
    return sum(1 + sum(_block_size(inner) for inner in n.blocks) for n in b.nodes)


def unroll_loop(g: Graph, loop: Node) -> bool:
    """Replace one eligible loop by copies of its body; returns whether it did."""
    trip = constant_trip_count(loop)
    if trip is None:
        return False
    body = loop.blocks[0]
    carried = list(loop.inputs[2:])
    counter = body.inputs[0]
    created: set = set()
    with g.inserting_before(loop):
        for i in range(trip):
            env: dict = dict(zip(body.inputs[1:], carried))
            if counter.uses or any(o is counter for o in body.outputs):
                env[counter] = g.insert_constant(i, T.INT)
            clone_block_body(g, body, env)
            created.update(env.values())
            carried = [env.get(v, v) for v in body.outputs[1:]]
    for out, v in zip(loop.outputs, carried):
        if out._name is not None and v._name is None and v in created:
            name = out._name
            out.set_debug_name(None)
            v.set_debug_name(name)
        out.replace_all_uses_with(v)
    loop.destroy()
    return True


def _loops_innermost_first(b, out: list) -> list:
    for n in b.nodes:
        for inner in n.blocks:
            _loops_innermost_first(inner, out)
        if n.kind == K.LOOP:
            out.append(n)
    return out


@register_pass("unroll_loops")
def unroll_loops(graph: Graph, max_nodes: int = MAX_UNROLLED_NODES) -> Graph:
    """Unroll every constant-trip-count loop whose copies add at most ``max_nodes`` nodes."""
    for loop in _loops_innermost_first(graph.block, []):
        if loop.owning_block is None:
            continue
        trip = constant_trip_count(loop)
        if trip is None or trip * _block_size(loop.blocks[0]) > max_nodes:
            continue
        unroll_loop(graph, loop)
    return graph
