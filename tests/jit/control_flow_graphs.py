"""Graphs with ``prim::If`` and ``prim::Loop`` for the ``.code``, code-parser and archive tests.

``from_torch`` rebuilds a ``torch.jit.script`` function's graph with toolkit's IR (same node kinds,
blocks, names and types), so tests compare what toolkit prints and runs with what TorchScript does.
The hand-built graphs cover what scripting torch cannot give us here: ``while`` and breaking loops
on tensor conditions, several carried values, and ``if`` branches returning different values.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from toolkit.jit import Graph
from toolkit.jit.ir import kinds as K
from toolkit.jit.ir import types as T
from toolkit.ops import registry as R

_TYPES = {"Tensor": T.TENSOR, "int": T.INT, "bool": T.BOOL, "float": T.FLOAT, "NoneType": T.NONE, "str": T.STR,
          "int[]": T.ListType(T.INT), "List[int]": T.ListType(T.INT)}
MAX_TRIP = 2 ** 63 - 1


def branchy(x: Tensor, n: int, c: bool) -> Tensor:
    """Every control-flow shape TorchScript prints: if/else, for loops (one nested in an if, one with an if
    inside and two carried values) and a while loop."""
    if c:
        y = x * 2
    else:
        y = x - 1
    for i in range(n):
        y = y + i
    a = x
    b = y
    for j in range(3):  # noqa: B007 (the name shows in the printed loop)
        a = a * b
        b = b + 1
        if c:
            a = a + 1
    if n > 2:
        z = a
        for k in range(n):  # noqa: B007
            z = z * 0.5
    else:
        z = b
    k = 0
    while k < n:
        k = k + 1
        z = z + k
    return y + a + b + z


def script(fn):
    """``torch.jit.script(fn)`` without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(fn)


def op(g: Graph, name: str, *inputs, name_as: str | None = None):
    """``aten::name`` at the insertion point, its missing defaulted arguments as constants."""
    o = R.get(name)
    ins = list(inputs)
    for a in o.args[len(ins):]:
        ins.append(g.insert_constant(a.default))
    out = g.insert(o.qualified_name, ins, op=o).output()
    if name_as:
        out.set_debug_name(name_as)
    return out


def loop(g: Graph, trip, cond, carried, counter: str | None = "i"):
    """A ``prim::Loop`` carrying ``carried`` (body still empty); returns (node, body block)."""
    n = g.insert("prim::Loop", [trip, cond, *carried], 0)
    for v in carried:
        n.add_output(v.type)
    b = n.add_block()
    b.add_input(counter, T.INT)
    for v in carried:
        b.add_input(None, v.type)
    return n, b


def if_node(g: Graph, cond, n_outputs: int = 1):
    n = g.insert("prim::If", [cond], n_outputs)
    return n, n.add_block(), n.add_block()


def from_torch(fn) -> Graph:
    """toolkit's IR for a scripted torch function's graph, or a torch graph (constants, registry ops, the JIT's own
    kinds such as ``aten::len`` and ``prim::Print``, If and Loop)."""
    graph = fn if isinstance(fn, torch._C.Graph) else fn.graph
    g = Graph()
    env: dict[int, object] = {}

    def typ(v):
        return _TYPES[str(v.type())]

    def name(v):
        return None if v.debugName().isdigit() else v.debugName()

    def block(tb):
        for tn in tb.nodes():
            k = tn.kind()
            if k == "prim::Constant":
                out = tn.output()
                env[out.unique()] = g.insert_constant(out.toIValue(), typ(out))
                env[out.unique()].set_debug_name(name(out))
                continue
            ins = [env[v.unique()] for v in tn.inputs()]
            if k in ("prim::If", "prim::Loop"):
                n = g.insert(k, ins, 0)
                for o in tn.outputs():
                    n.add_output(typ(o))
                for tblk in tn.blocks():
                    b = n.add_block()
                    for v in tblk.inputs():
                        env[v.unique()] = b.add_input(name(v), typ(v))
                    with g.inserting_at_end(b):
                        block(tblk)
                    for v in tblk.outputs():
                        b.register_output(env[v.unique()])
            elif K.lookup(k) is not None:
                n = g.insert(k, ins, len(list(tn.outputs())))
            else:
                n = op(g, k.split("::")[1], *ins).node
            for o, mine in zip(tn.outputs(), n.outputs):
                mine.type = typ(o)
                mine.set_debug_name(name(o))
                env[o.unique()] = mine

    for v in graph.inputs():
        env[v.unique()] = g.add_input(name(v), typ(v))
    block(graph.block())
    for v in graph.outputs():
        g.register_output(env[v.unique()])
    g.verify()
    return g


def two_carried_with_nested_if() -> Graph:
    """a, b = x, y; for j in range(3): if c: a, b = b * a, a else: a, b = a, b + a  (a swap in one branch)."""
    g = Graph()
    x, y, c = g.add_input("x"), g.add_input("y"), g.add_input("c", T.BOOL)
    true = g.insert_constant(True)
    n, body = loop(g, g.insert_constant(3), true, [x, y], counter="j")
    n.outputs[0].set_debug_name("a")
    n.outputs[1].set_debug_name("b")
    a, b = body.inputs[1:]
    with g.inserting_at_end(body):
        br, b0, b1 = if_node(g, c, 2)
        with g.inserting_at_end(b0):
            b0.register_output(op(g, "mul", b, a))
            b0.register_output(a)
        with g.inserting_at_end(b1):
            b1.register_output(a)
            b1.register_output(op(g, "add", b, a))
        body.register_output(true)
        body.register_output(br.outputs[0])
        body.register_output(br.outputs[1])
    g.register_output(op(g, "sub", n.outputs[0], n.outputs[1]))
    g.verify()
    return g


def loop_inside_if() -> Graph:
    """if c: z = x; for k in range(n): z = z * 0.5 (a loop in a branch) else: z = None -> Optional[Tensor]."""
    g = Graph()
    x, n_, c = g.add_input("x"), g.add_input("n", T.INT), g.add_input("c", T.BOOL)
    br, b0, b1 = if_node(g, c)
    br.output().type = T.OptionalType(T.TENSOR)
    br.output().set_debug_name("z")
    with g.inserting_at_end(b0):
        true = g.insert_constant(True)
        lp, body = loop(g, n_, true, [x], counter="k")
        with g.inserting_at_end(body):
            body.register_output(true)
            body.register_output(op(g, "mul", body.inputs[1], g.insert_constant(0.5)))
        b0.register_output(lp.output())
    with g.inserting_at_end(b1):
        b1.register_output(g.insert_constant(None))
    g.register_output(br.output())
    g.verify()
    return g


def while_loop() -> Graph:
    """k, s = x, x; while k < limit: k = k + 1; s = s + k  (INT64_MAX trip count, unused counter)."""
    g = Graph()
    x, lim = g.add_input("x"), g.add_input("limit")
    n, body = loop(g, g.insert_constant(MAX_TRIP), op(g, "lt", x, lim), [x, x], counter=None)
    n.outputs[0].set_debug_name("k")
    n.outputs[1].set_debug_name("s")
    k, s = body.inputs[1:]
    with g.inserting_at_end(body):
        k2 = op(g, "add", k, g.insert_constant(1.0))
        s2 = op(g, "add", s, k2)
        body.register_output(op(g, "lt", k2, lim))
        body.register_output(k2)
        body.register_output(s2)
    g.register_output(n.outputs[1])
    g.verify()
    return g


def breaking_loop() -> Graph:
    """for i in range(n) while s < limit: s = s * 2 + i  (a trip count and a condition: a for that breaks)."""
    g = Graph()
    x, n_, lim = g.add_input("x"), g.add_input("n", T.INT), g.add_input("limit")
    lp, body = loop(g, n_, g.insert_constant(True), [x])
    lp.output().set_debug_name("s")
    with g.inserting_at_end(body):
        s2 = op(g, "add", op(g, "mul", body.inputs[1], g.insert_constant(2)), body.inputs[0])
        body.register_output(op(g, "lt", s2, lim))
        body.register_output(s2)
    g.register_output(lp.output())
    g.verify()
    return g


def if_without_outputs() -> Graph:
    """An if with no outputs: an empty else prints no ``else:``; the other if's else has a statement."""
    g = Graph()
    x, c = g.add_input("x"), g.add_input("c", T.BOOL)
    _, b0, b1 = if_node(g, c, 0)
    with g.inserting_at_end(b1):
        g.insert_constant(2)
    _, d0, d1 = if_node(g, c, 0)
    with g.inserting_at_end(d1):
        op(g, "neg", x)
    g.register_output(x)
    g.verify()
    return g
