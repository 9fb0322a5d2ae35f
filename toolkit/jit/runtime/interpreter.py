"""Runs a graph node by node with the registry's ops, through the normal dispatch path.

Autograd records as in eager mode (each ``aten::`` node is one ``dispatch.execute``
call), each value is dropped after its last use, and an error raised by a node
gets "while executing <node> at file:line" appended so it points at the user's code.
How each node kind runs (its handler) is ``kinds.steps``, shared with compiled plans.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from ..ir import kinds as K
from ..ir.graph import Graph, Node, Value, values_read
from ..kinds.steps import OBSERVE, PLANS, annotate, step_for


class Interpreter:
    """Executes one graph; the plan (what to free after each node) is made once."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self._plan = _plan(graph)
        self._block_plans: dict = {}

    def run(self, inputs, on_node: Callable | None = None, observe: Callable | None = None) -> list:
        """The graph's outputs for these inputs.

        ``on_node(node, values)`` sees every top-level node's results;
        ``observe(values, objects)`` sees every value as it is bound, nested blocks
        included (a loop's block inputs at each iteration): the profiling run's view.
        """
        g = self.graph
        if len(inputs) != len(g.inputs):
            raise RuntimeError(f"the graph takes {len(g.inputs)} inputs, but {len(inputs)} were given")
        env: dict = dict(zip(g.inputs, inputs))
        env[PLANS] = self._block_plans
        if observe is not None:
            env[OBSERVE] = observe
            observe(g.inputs, list(inputs))
        node = None
        try:
            for node, step, dead in self._plan:
                step(node, env)
                if on_node is not None:
                    on_node(node, [env[o] for o in node.outputs])
                if observe is not None:
                    observe(node.outputs, [env[o] for o in node.outputs])
                for v in dead:
                    del env[v]
        except Exception as e:
            raise annotate(e, node) from None
        return [env[v] for v in g.outputs]


def _plan(graph: Graph) -> list:
    """Pairs (node, values that die after it) for the top block.

    Only values defined in the top block are freed here; a value defined inside a
    nested block lives in the environment until the run ends.
    """
    nodes = graph.block.nodes
    top = set(graph.inputs)
    for n in nodes:
        top.update(n.outputs)
    last: dict[Value, int] = {}
    for i, n in enumerate(nodes):
        for v in values_read(n):
            if v in top:
                last[v] = i
        for o in n.outputs:
            last.setdefault(o, i)
    keep = set(graph.outputs)
    dead: list[list] = [[] for _ in nodes]
    for v, i in last.items():
        if v not in keep:
            dead[i].append(v)
    return [(n, step_for(n), tuple(d)) for n, d in zip(nodes, dead)]


_CALLEES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _call_method(n: Node, env: dict) -> None:
    """A submodule call (``prim::CallMethod``): run its callee graph with the module as ``self``."""
    callee = n.attributes.get("callee")
    if not isinstance(callee, Graph):
        raise RuntimeError(f"the interpreter cannot run prim::CallMethod[name={n.attributes.get('name')!r}]: "
                           "the node has no callee graph")
    it = _CALLEES.get(n)
    if it is None or it.graph is not callee:
        it = _CALLEES[n] = Interpreter(callee)
    for v, x in zip(n.outputs, it.run([env[v] for v in n.inputs])):
        env[v] = x


K.set_handler(K.CALL_METHOD, _call_method)
