"""Common subexpression elimination: a pure node equal to an earlier one (same kind, op, inputs and
attributes) is replaced by it.

Only pure nodes merge (not in place, not random: registry kinds). A node writing
memory is a barrier: nothing before it is reused after it, and values whose
memory some node writes are never merged.
"""

from __future__ import annotations

from ...tensor import Tensor
from ..ir import kinds as K
from ..ir.graph import Block, Graph, Node
from ..kinds.effects import AliasSets, has_side_effects, is_mutating, is_pure
from .manager import register_pass


def _attr_key(v):
    if isinstance(v, Tensor):
        return ("tensor", id(v))
    if isinstance(v, list):
        return ("list", tuple(_attr_key(e) for e in v))
    if isinstance(v, tuple):
        return ("tuple", tuple(_attr_key(e) for e in v))
    if isinstance(v, float) and v != v:
        return ("nan",)
    return (type(v).__name__, v)


def _key(n: Node):
    try:
        attrs = tuple(sorted((k, _attr_key(v)) for k, v in n.attributes.items()))
        hash(attrs)
    except TypeError:
        return None
    return (n.kind, id(n.op), tuple(id(v) for v in n.inputs), attrs, tuple(str(o.type) for o in n.outputs))


def _block(b: Block, seen: dict, aliases: AliasSets, written: frozenset = frozenset()) -> bool:
    changed = False
    for n in list(b.nodes):
        for inner in n.blocks:
            changed |= _block(inner, dict(seen), aliases, written)
        if is_mutating(n) or (n.blocks and has_side_effects(n)):
            seen.clear()
            continue
        if not is_pure(n) or any(aliases.is_mutated(o) for o in n.outputs):
            continue
        if n.kind == K.GET_ATTR and n["name"] in written:  # assigned by prim::SetAttr: read afresh
            continue
        k = _key(n)
        if k is None:
            continue
        prev = seen.get(k)
        if prev is None:
            seen[k] = n
            continue
        for old, new in zip(n.outputs, prev.outputs):
            old.replace_all_uses_with(new)
        n.destroy()
        changed = True
    return changed


@register_pass("cse")
def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Merge repeated pure computations; run ``dce`` afterwards for what becomes unused."""
    written = frozenset(n["name"] for n in graph.all_nodes() if n.kind == K.SET_ATTR)
    _block(graph.block, {}, AliasSets(graph), written)
    return graph
