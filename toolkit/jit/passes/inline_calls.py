"""Inlining calls: each ``prim::CallMethod`` is replaced by its callee's graph, recursively.

A traced module's ``.graph`` calls its submodules (``prim::CallMethod[name="forward"](%conv1, %x)``,
the callee's graph held by the node under ``"callee"``); inlining them all gives
``.inlined_graph``, the flat graph that runs. As TorchScript's ``Inline`` pass:
the callee's ``self`` becomes the call's module value, its arguments the call's
inputs. Two clean-ups keep the result identical to the flat trace: a tuple the
callee built only to return is taken apart where the caller unpacks it, and a
submodule read (``prim::GetAttr``) that only served the call is dropped.

::

    toolkit.jit.run_passes(traced.graph.copy(), ["inline_calls"])
"""

from __future__ import annotations

from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ._clone import clone_block_body
from .manager import register_pass

CALLEE = "callee"
"""The attribute of a ``prim::CallMethod`` node that holds the called method's graph."""


def _calls(g: Graph) -> list[Node]:
    return [n for n in g.all_nodes() if n.kind == K.CALL_METHOD]


def inline_call(g: Graph, node: Node) -> list[Value]:
    """Replace one ``prim::CallMethod`` by its callee's nodes; returns the values that replaced its outputs."""
    callee = node.attributes.get(CALLEE)
    if not isinstance(callee, Graph):
        raise RuntimeError(f"prim::CallMethod[name={node.attributes.get('name')!r}]: the node has no callee "
                           "graph to inline")
    if len(callee.inputs) != len(node.inputs) or len(callee.outputs) != len(node.outputs):
        raise RuntimeError(f"prim::CallMethod[name={node.attributes.get('name')!r}]: its callee takes "
                           f"{len(callee.inputs)} inputs and returns {len(callee.outputs)} values, but the node has "
                           f"{len(node.inputs)} inputs and {len(node.outputs)} outputs")
    env: dict = dict(zip(callee.inputs, node.inputs))
    with g.inserting_before(node):
        clone_block_body(g, callee.block, env)
    created = {v for k, v in env.items() if k not in callee.inputs}
    results = [env.get(v, v) for v in callee.outputs]
    module = node.inputs[0]
    for out, v in zip(node.outputs, results):
        if v in created and out._name is not None:
            name = out._name
            out.set_debug_name(None)
            v.set_debug_name(name)
        out.replace_all_uses_with(v)
        if v in created:
            _take_apart(v)
    node.destroy()
    drop_unused_module_attrs(g, [module])
    return results


def _take_apart(v: Value) -> None:
    """``prim::TupleUnpack`` of a ``prim::TupleConstruct``: the unpacked values are the constructed ones."""
    n = v.node
    if n is None or n.kind != K.TUPLE_CONSTRUCT or not v.uses:
        return
    if not all(u.user.kind == K.TUPLE_UNPACK and len(u.user.outputs) == len(n.inputs) for u in v.uses):
        return
    for u in list(v.uses):
        for o, e in zip(u.user.outputs, n.inputs):
            o.replace_all_uses_with(e)
        u.user.destroy()
    n.destroy()


def drop_unused_module_attrs(g: Graph, values=None) -> None:
    """Remove ``prim::GetAttr`` reads of submodules that nothing uses (only ``values`` and their bases when given)."""
    todo = list(values) if values is not None else [o for n in g.all_nodes() for o in n.outputs]
    while todo:
        v = todo.pop()
        n = v.node
        if (n is None or n.kind != K.GET_ATTR or n.owning_block is None or v.uses
                or not isinstance(v.type, T.ModuleType) or any(o is v for b in g.all_blocks() for o in b.outputs)):
            continue
        base = n.inputs[0]
        n.destroy()
        todo.append(base)


@register_pass("inline_calls")
def inline_calls(graph: Graph) -> Graph:
    """Inline every ``prim::CallMethod`` (callees' own calls included) until none is left."""
    while True:
        calls = _calls(graph)
        if not calls:
            return graph
        for n in calls:
            inline_call(graph, n)
