"""Readable Python-like code for a graph, in the style of TorchScript's serialized ``forward``::

    def forward(self,
        x: Tensor) -> Tensor:
      _0 = torch.mul(x, 2)
      return torch.add(_0, y, 1)

One statement per op node; constants, lists and attribute reads are inlined
where they are used. Later, archives store this text and parse it back.
"""

from __future__ import annotations

from . import types as T
from .ir import Block, Graph, Node, Value
from .printer import format_constant


def _py_type(t: T.JitType) -> str:
    if isinstance(t, T.TensorType):
        return "Tensor"
    if isinstance(t, T.ListType):
        return f"List[{_py_type(t.elem)}]"
    if isinstance(t, T.TupleType):
        return "Tuple[" + ", ".join(_py_type(e) for e in t.elems) + "]"
    if isinstance(t, T.DictType):
        return f"Dict[{_py_type(t.key)}, {_py_type(t.value)}]"
    if isinstance(t, T.OptionalType):
        return f"Optional[{_py_type(t.elem)}]"
    return str(t)


def _literal(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return format_constant(v)
    if isinstance(v, str):
        return repr(v)
    if v is None:
        return "None"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_literal(e) for e in v) + "]"
    return str(v)


class _CodeWriter:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.names: dict[Value, str] = {}
        self.inline: dict[Value, str] = {}
        self.used: set[str] = set()
        self.tmp = 0
        self.constants: list = []

    def name(self, v: Value) -> str:
        if v in self.inline:
            return self.inline[v]
        n = self.names.get(v)
        if n is None:
            if v.has_debug_name():
                base = v.debug_name.replace(".", "_")
                n = base if base not in self.used else None
            if n is None:
                while f"_{self.tmp}" in self.used:
                    self.tmp += 1
                n = f"_{self.tmp}"
            self.used.add(n)
            self.names[v] = n
        return n

    def expr_of_constant(self, n: Node) -> str:
        from ..tensor import Tensor

        v = n.attributes.get("value")
        if isinstance(v, Tensor):
            self.constants.append(v)
            return f"CONSTANTS.c{len(self.constants) - 1}"
        t = n.output().type
        if isinstance(t, T.OtherType) and t.name == "ScalarType":
            return f"torch.{str(v).split('.')[-1]}"
        if isinstance(t, T.OtherType) and t.name == "Device":
            return f'torch.device("{v}")'
        return _literal(v)

    def call(self, n: Node) -> str:
        op = n.op
        fn = f"torch.{op.namespace + '.' if op.namespace else ''}{op.name}"
        parts = []
        for v, a in zip(n.inputs, op.args):
            s = self.name(v)
            parts.append(f"{a.name}={s}" if a.kwarg_only else s)
        return f"{fn}({', '.join(parts)})"

    def node(self, n: Node, lines: list, indent: str) -> None:
        k = n.kind
        if k == "prim::Constant":
            self.inline[n.output()] = self.expr_of_constant(n)
            return
        if k == "prim::ListConstruct":
            self.inline[n.output()] = "[" + ", ".join(self.name(v) for v in n.inputs) + "]"
            return
        if k == "prim::GetAttr":
            base = self.name(n.inputs[0])
            attr = n["name"]
            self.inline[n.output()] = f"{base}.{attr}" if attr.isidentifier() else f'getattr({base}, "{attr}")'
            return
        if k == "prim::TupleConstruct":
            elems = [self.name(v) for v in n.inputs]
            rhs = "(" + ", ".join(elems) + ("," if len(elems) == 1 else "") + ")"
        elif k == "prim::DictConstruct":
            ins = [self.name(v) for v in n.inputs]
            rhs = "{" + ", ".join(f"{a}: {b}" for a, b in zip(ins[0::2], ins[1::2])) + "}"
        elif k in ("prim::ListUnpack", "prim::TupleUnpack"):
            rhs = self.name(n.inputs[0])
        elif k == "prim::If":
            outs = [self.name(o) for o in n.outputs]
            lines.append(f"{indent}if {self.name(n.inputs[0])}:")
            for b in n.blocks:
                self.block(b, lines, indent + "  ", outs)
                if b is n.blocks[0]:
                    lines.append(f"{indent}else:")
            return
        elif k == "prim::Loop":
            b = n.blocks[0]
            outs = [self.name(o) for o in n.outputs]
            for o, v in zip(outs, n.inputs[2:]):
                lines.append(f"{indent}{o} = {self.name(v)}")
            for bi, o in zip(b.inputs[1:], outs):
                self.names[bi] = o
            lines.append(f"{indent}for {self.name(b.inputs[0])} in range({self.name(n.inputs[0])}):")
            self.block(b, lines, indent + "  ", [f"_cond{len(lines)}"] + outs)
            return
        elif n.op is not None:
            rhs = self.call(n)
        else:
            rhs = f"{n.kind}(" + ", ".join(self.name(v) for v in n.inputs) + ")"
        lhs = ", ".join(self.name(o) for o in n.outputs)
        lines.append(f"{indent}{lhs} = {rhs}" if lhs else f"{indent}{rhs}")

    def block(self, b: Block, lines: list, indent: str, targets: list) -> None:
        start = len(lines)
        for n in b.nodes:
            self.node(n, lines, indent)
        for t, v in zip(targets, b.outputs):
            src = self.name(v)
            if src != t:
                lines.append(f"{indent}{t} = {src}")
        if len(lines) == start:
            lines.append(f"{indent}pass")


def graph_to_code(graph: Graph, name: str = "forward") -> str:
    """The graph as a ``def``; the first input is ``self`` when it is a module."""
    w = _CodeWriter(graph)
    params = []
    for v in graph.inputs:
        n = w.name(v)
        params.append(n if isinstance(v.type, T.ModuleType) else f"{n}: {_py_type(v.type)}")
    lines: list[str] = []
    for node in graph.block.nodes:
        w.node(node, lines, "  ")
    outs = [w.name(v) for v in graph.outputs]
    ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    rtype = _py_type(graph.outputs[0].type) if len(graph.outputs) == 1 else "Tuple"
    lines.append(f"  return {ret}")
    head = f"def {name}(" + ",\n    ".join(params) + f") -> {rtype}:"
    return head + "\n" + "\n".join(lines) + "\n"
