"""Fusion: maximal chains of elementwise nodes become ``prim::FusionGroup`` nodes holding a subgraph.

What is fusible is read from the registry through the code generator
(:func:`toolkit.jit.codegen.elementwise.fusibility`): elementwise ops with a
scalar formula, complete tensor types, constant non-tensor arguments. Groups
grow backwards from a consumer (an elementwise node, or a ``sum``/``mean`` of
every element, which the kernel then accumulates without storing what it
reduces), as TorchScript's graph fuser does: a producer
joins when it computes the group's shape and every use of its output outside
the group comes after the group's position, so the group can stand where its
last node stood. Constants the members read are copied into the subgraph;
tensors become its inputs; values used after the group become its outputs.
A constant ``aten::chunk`` into equal parts whose ``prim::ListUnpack`` feeds
only the group joins it too (TorchScript's ConstantChunk), and so do the nodes
computing the chunked tensor: the kernel iterates over one part and computes
them once per part at the part's offset, so an LSTM cell's bias adds and gate
math are one kernel reading the pre-chunk tensors in place.

Example::

    >>> fuse(specialized_graph)
    >>> print(specialized_graph)   # ... = prim::FusionGroup_0(%x) ... with prim::FusionGroup_0 = graph(...)
"""

from __future__ import annotations

from ..codegen.elementwise import chunk_spec, constant_of, fusibility, is_chunk, reduction_fusibility
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from .manager import register_pass

MIN_GROUP_SIZE = 2  # a single op gains nothing from a generated kernel


def _shape(n: Node) -> tuple:
    return tuple(n.outputs[0].type.sizes)


def _top_level(n: Node, block: Block) -> Node | None:
    """The node of ``block`` that holds ``n`` (``n`` itself, or the control-flow node around it)."""
    while n is not None and n.owning_block is not block:
        owner = n.owning_block.owning_node if n.owning_block is not None else None
        n = owner
    return n


def _only_inside(n: Node, members: set, graph: Graph) -> bool:
    """Every use of ``n``'s outputs is by a member, and none is a block's output."""
    for o in n.outputs:
        if any(u.user not in members for u in o.uses):
            return False
        if any(any(x is o for x in b.outputs) for b in graph.all_blocks()):
            return False
    return True


def _uses_after(p: Node, members: set, block: Block, position: dict, consumer: Node) -> bool:
    """Every use of ``p`` outside ``members`` comes after the group's position (it becomes a group output)."""
    for o in p.outputs:
        for u in o.uses:
            if u.user in members:
                continue
            top = _top_level(u.user, block)
            if top is None or position[top] <= position[consumer]:
                return False
    return True


def _grow(graph: Graph, block: Block, consumer: Node, taken: set, position: dict, shape: tuple) -> list[Node]:
    """The group growing backwards from ``consumer``.

    Members computing ``shape`` may have outputs used after the group. An
    ``aten::chunk`` + ``prim::ListUnpack`` whose parts have ``shape`` joins when
    its parts are used only inside the group; the nodes computing the chunked
    tensor (the pre-chunk shape) then join when used only inside the group too,
    and the kernel computes them once per part, reading inputs at the part's offset.
    """
    members = {consumer}
    pre: set = set()  # members before a chunk: they compute the pre-chunk shape
    spec = None  # (pre-chunk shape, dim, chunks) shared by every chunk in the group
    changed = True
    while changed:
        changed = False
        producers = sorted({v.node for m in members for v in m.inputs
                            if v.node is not None and v.node not in members and v.node.owning_block is block},
                           key=lambda p: -position[p])
        for p in producers:
            if p in taken or p.kind == K.CONSTANT:
                continue
            if p.kind == K.LIST_UNPACK:
                c = p.inputs[0].node if len(p.inputs) == 1 else None
                s = chunk_spec(c) if c is not None and c.owning_block is block and c not in taken else None
                if s is None or (spec is not None and s != spec) or any(tuple(o.type.sizes) != shape
                                                                        for o in p.outputs):
                    continue
                if not _only_inside(p, members, graph):
                    continue
                spec = s
                members.update((p, c))
                changed = True
                break
            feeds_pre = any(u.user in pre or is_chunk(u.user) for o in p.outputs for u in o.uses
                            if u.user in members)
            if fusibility(p) is not None:
                continue
            if feeds_pre:
                if spec is None or _shape(p) != spec[0] or not _only_inside(p, members, graph):
                    continue
                pre.add(p)
            elif _shape(p) != shape or not _uses_after(p, members, block, position, consumer):
                continue
            members.add(p)
            changed = True
            break
    return sorted(members, key=lambda m: position[m])


def _materialize(graph: Graph, block: Block, members: list[Node]) -> Node:
    """Replace ``members`` (in program order) by one FusionGroup node at the last member's place."""
    member_set = set(members)
    sub = Graph()
    env: dict[Value, Value] = {}
    outer_inputs: list[Value] = []
    for m in members:
        for v in m.inputs:
            if v in env or (v.node in member_set):
                continue
            is_const, value = constant_of(v)
            if is_const and (value is None or isinstance(value, (bool, int, float, str))):
                c = sub.insert(K.CONSTANT)
                if v.node.attributes.get("value") is not None:
                    c["value"] = v.node.attributes["value"]
                c.output().type = v.type
                env[v] = c.output()
            else:
                env[v] = sub.add_input(v._name, v.type)
                outer_inputs.append(v)
        c = sub.create(m.kind, [env[v] for v in m.inputs], 0, m.op)
        for o in m.outputs:
            env[o] = c.add_output(o.type)
            env[o].set_debug_name(o._name)
        c.source, c.scope = m.source, m.scope
        sub.insert_node(c)
    last = members[-1]
    outputs = []
    for m in members:
        for o in m.outputs:
            used_outside = any(u.user not in member_set for u in o.uses) or any(
                any(x is o for x in b.outputs) for b in graph.all_blocks())
            if used_outside:
                outputs.append(o)
                sub.register_output(env[o])
    with graph.inserting_after(last):
        group = graph.create(K.FUSION_GROUP, outer_inputs, 0)
        group["Subgraph"] = sub
        group.source, group.scope = last.source, last.scope
        graph.insert_node(group)
    for o in outputs:
        new = group.add_output(o.type)
        name = o._name
        o.replace_all_uses_with(new)
        o.set_debug_name(None)
        new.set_debug_name(name)
    for m in reversed(members):
        m.destroy()
    return group


def _fuse_block(graph: Graph, block: Block, min_size: int) -> int:
    made = 0
    for n in block.nodes:
        for b in n.blocks:
            made += _fuse_block(graph, b, min_size)
    position = {n: i for i, n in enumerate(block.nodes)}
    taken: set = set()
    groups = []
    for n in reversed(block.nodes):
        if n in taken or n.kind == K.FUSION_GROUP:
            continue
        if fusibility(n) is None:
            shape = _shape(n)
        elif reduction_fusibility(n) is None:
            shape = tuple(n.inputs[0].type.sizes)  # a trailing sum/mean: the group computes its input
        else:
            continue
        members = _grow(graph, block, n, taken, position, shape)
        taken.update(members)
        if len(members) >= min_size:
            groups.append(members)
    for members in groups:
        _materialize(graph, block, members)
        made += 1
    return made


@register_pass("fuse")
def fuse(graph: Graph, min_size: int = MIN_GROUP_SIZE) -> Graph:
    """Group fusible elementwise nodes into ``prim::FusionGroup`` nodes (types must be specialized first)."""
    _fuse_block(graph, graph.block, min_size)
    return graph


def fusion_groups(graph: Graph) -> list[Node]:
    """Every FusionGroup node of ``graph``, in program order."""
    return [n for n in graph.all_nodes() if n.kind == K.FUSION_GROUP]


def group_output_types_known(node: Node) -> bool:
    return all(isinstance(o.type, T.TensorType) and o.type.is_complete() for o in node.outputs)
