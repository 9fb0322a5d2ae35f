"""``toolkit.jit.fork`` and ``toolkit.jit.wait`` in script code: a ``prim::fork`` node holding the call as a subgraph.

The forked call is compiled as any call is (functions and module methods inline),
first into a block of the ``prim::fork`` node so that it may read every value in
scope; the block is then lifted into the node's ``Subgraph``, the values it read
from outside becoming the node's inputs (constants are copied in instead). As
TorchScript prints it::

    %fut : Future[Tensor] = prim::fork_0(%x)
    %y : Tensor = aten::wait(%fut)
    with prim::fork_0 = graph(%x : Tensor):
      ...
"""

from __future__ import annotations

from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Block, Graph, Node, Value, _copy_block_into, values_defined, values_read
from ...passes import run_passes
from .cleanup import pool_constants
from .control import destroy_block_nodes


def emit_fork(c, args: list, kwargs: dict, node) -> Value:
    """Compile ``fork(fn, *args, **kwargs)``: the call of ``fn`` becomes the subgraph of a ``prim::fork`` node."""
    if not args:
        raise c.error("fork() takes the function or module to run as its first argument", node)
    callee, rest = args[0], list(args[1:])
    if isinstance(callee, Value):
        raise c.error(f"fork(): a value of type {callee.type} is not callable", node)
    fork_node = c.insert(K.FORK, [], 1, node=node)
    body = fork_node.add_block()
    g = c.graph
    saved = g._insert
    g._insert = (body, None)
    try:
        out = c.as_value(callee.call(c, rest, kwargs, node), node)
    finally:
        g._insert = saved
    body.register_output(out)
    fork_node["Subgraph"] = lift_block(fork_node, body)
    fork_node.output().type = T.FutureType(out.type)
    return fork_node.output()


def emit_wait(c, args: list, kwargs: dict, node) -> Value:
    """Compile ``wait(future)``: an ``aten::wait`` node typed with the future's element type."""
    if len(args) != 1 or kwargs:
        raise c.error("wait() takes exactly one argument, the Future returned by fork()", node)
    fut = c.as_value(args[0], node)
    if not isinstance(fut.type, T.FutureType):
        raise c.error(f"wait() expects a Future returned by fork(), got a value of type {fut.type}", node)
    n = c.insert(K.WAIT, [fut], 1, node=node)
    n.output().type = fut.type.elem
    return n.output()


def lift_block(owner: Node, body: Block) -> Graph:
    """Move ``body`` (a block of ``owner``, no parameters) into a new graph; the outside values it reads become the
    graph's inputs and ``owner``'s inputs, in the order first read. The block is removed from ``owner``."""
    inner: set = set()
    for m in body.nodes:
        values_defined(m, inner)
    free: list[Value] = []
    seen: set = set()
    for v in [v for m in body.nodes for v in values_read(m)] + list(body.outputs):
        if v not in inner and v not in seen:
            seen.add(v)
            free.append(v)
    sub = Graph()
    env: dict = {}
    for v in free:
        if v.node is not None and v.node.kind == K.CONSTANT:
            n = sub.insert(K.CONSTANT)
            n.attributes = dict(v.node.attributes)
            n.output().type = v.type
            n.source = v.node.source
            env[v] = n.output()
        else:
            env[v] = sub.add_input(v._name, v.type)
            owner.add_input(v)
    _copy_block_into(body, sub.block, env, sub)
    for o in body.outputs:
        sub.register_output(env[o])
    destroy_block_nodes(body)
    body.outputs = []
    owner.blocks.remove(body)
    run_passes(sub, ["dce"])
    pool_constants(sub)
    return sub
