"""Text form of graphs, in TorchScript's format (the one the seed's slides show).

::

    graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu),
          %y : Float(3, strides=[1], requires_grad=0, device=cpu)):
      %2 : int = prim::Constant[value=2]() # foo.py:4
      %3 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %2) # foo.py:4
      return (%3)

Subgraphs held in a node's ``Subgraph`` attribute (fusion groups) print after
the graph as ``with prim::FusionGroup_0 = graph(...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...tensor import Tensor

if TYPE_CHECKING:  # graph.py imports this module to print itself
    from .graph import Block, Graph, Node, Value


def format_constant(v) -> str:
    """How a constant's value prints inside ``[value=...]`` (as TorchScript does: bools as 0/1, ``1.``)."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        r = repr(v)
        return r[:-1] if r.endswith(".0") else r
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, Tensor):
        if v.ndim == 0:
            return "{" + format_constant(v.item()) + "}"
        return "<Tensor>"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_constant(e) for e in v) + "]"
    return str(v)


def _is_graph(v, n: Node) -> bool:
    """Whether ``v``, an attribute of ``n``, is a graph (a subgraph, a callee): of the class of ``n``'s graph,
    asked through the node since graph.py imports this module."""
    return isinstance(v, type(n.graph))


def _values(vs) -> str:
    return ", ".join(f"%{v.debug_name}" for v in vs)


def _typed(vs) -> str:
    return ", ".join(f"%{v.debug_name} : {v.type}" for v in vs)


class _Printer:
    def __init__(self, source_locations: bool):
        self.source_locations = source_locations
        self.subgraphs: list[tuple[str, Graph]] = []
        self.lines: list[str] = []

    def kind_of(self, n: Node) -> str:
        g = n.attributes.get("Subgraph")
        if _is_graph(g, n):
            name = f"{n.kind}_{len(self.subgraphs)}"
            self.subgraphs.append((name, g))
            return name
        return n.kind

    def attrs(self, n: Node) -> str:
        items = [(k, v) for k, v in n.attributes.items() if not _is_graph(v, n)]
        if not items:
            return ""
        return "[" + ", ".join(f"{k}={format_constant(v)}" for k, v in items) + "]"

    def node(self, n: Node, indent: int) -> None:
        pad = " " * indent
        lhs = _typed(n.outputs)
        line = f"{pad}{lhs} = {self.kind_of(n)}{self.attrs(n)}({_values(n.inputs)})"
        if n.scope:
            line += f", scope: {n.scope}"
        if self.source_locations and n.source:
            line += f" # {n.source[0]}:{n.source[1]}"
        self.lines.append(line)
        for i, b in enumerate(n.blocks):
            self.lines.append(f"{pad}  block{i}({_typed(b.inputs)}):")
            self.block(b, indent + 4)
            self.lines.append(f"{pad}    -> ({_values(b.outputs)})")

    def block(self, b: Block, indent: int) -> None:
        for n in b.nodes:
            self.node(n, indent)

    def graph(self, g: Graph, header: str) -> None:
        sep = ",\n" + " " * (len(header) + 1)
        ins = sep.join(f"%{v.debug_name} : {v.type}" for v in g.inputs)
        self.lines.append(f"{header}({ins}):")
        self.block(g.block, 2)
        self.lines.append(f"  return ({_values(g.outputs)})")


def graph_to_string(g: Graph, source_locations: bool = True) -> str:
    p = _Printer(source_locations)
    p.graph(g, "graph")
    done = 0
    while done < len(p.subgraphs):
        name, sub = p.subgraphs[done]
        done += 1
        p.lines.append("")
        p.graph(sub, f"with {name} = graph")
    return "\n".join(p.lines) + "\n"


def node_to_string(n: Node, source_locations: bool = True) -> str:
    p = _Printer(source_locations)
    p.node(n, 0)
    return "\n".join(p.lines)


def value_to_string(v: Value) -> str:
    return f"%{v.debug_name} : {v.type}"
