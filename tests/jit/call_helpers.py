"""Models with submodule calls in the shapes that matter (nested, repeated, tuple-returning, reading
a submodule's parameters directly), the same in toolkit and torch, and a structural view of graphs."""

from __future__ import annotations

import torch

import toolkit
from toolkit.jit import Graph
from toolkit.jit.passes.inline_calls import CALLEE


def make_nested(lib):
    """``lib`` is ``toolkit`` or ``torch``: a module with a Sequential, a tuple-returning submodule,
    a submodule called in a Python loop, and a parameter of a submodule read by the parent."""
    nn = lib.nn

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            y = self.l(x)
            return y, y.relu()

    class Nested(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.pair = Pair()
            self.act = nn.Tanh()
            self.unused = nn.Linear(2, 2)

        def forward(self, x):
            h = self.seq(x)
            a, b = self.pair(h)
            for _ in range(2):
                a = self.act(a)
            return a + b * self.seq[0].weight.sum()

    return Nested()


def copy_weights(src: toolkit.nn.Module, dst: torch.nn.Module) -> None:
    with torch.no_grad():
        for (k, p), (k2, q) in zip(src.state_dict().items(), dst.state_dict().items()):
            assert k == k2
            q.copy_(torch.from_numpy(p.numpy().copy()))


def calls(g: Graph) -> list:
    """(module attribute path, method name) of each ``prim::CallMethod`` in ``g``, in order."""
    out = []
    for n in g.nodes():
        if n.kind == "prim::CallMethod":
            parts, v = [], n.inputs[0]
            while v.node is not None and v.node.kind == "prim::GetAttr":
                parts.append(v.node["name"])
                v = v.node.inputs[0]
            out.append((".".join(reversed(parts)), n["name"]))
    return out


def torch_calls(g) -> list:
    """The same for a torch graph."""
    out = []
    for n in g.nodes():
        if n.kind() == "prim::CallMethod":
            parts, v = [], n.inputsAt(0)
            while v.node().kind() == "prim::GetAttr":
                parts.append(v.node().s("name"))
                v = v.node().inputsAt(0)
            out.append((".".join(reversed(parts)), n.s("name")))
    return out


def op_kinds(g) -> list:
    """The ``aten::`` kinds of a toolkit or torch graph's top block, in order."""
    kinds = [n.kind() if callable(n.kind) else n.kind for n in g.nodes()]
    return [k for k in kinds if k.startswith("aten::")]


def structure(g: Graph) -> list:
    """Nodes as (kind, attributes, input positions, output types, scope): equal for graphs that differ
    only in value numbering."""
    ids: dict = {}
    for v in g.inputs:
        ids[v] = ("in", len(ids))
    rows = []

    def walk(block, depth):
        for n in block.nodes:
            for b in n.blocks:
                for v in b.inputs:
                    ids[v] = ("p", len(ids))
            attrs = tuple(sorted((k, str(v)) for k, v in n.attributes.items() if k != CALLEE))
            rows.append((depth, n.kind, attrs, tuple(ids.get(v, ("?", v.debug_name)) for v in n.inputs),
                         tuple(str(o.type) for o in n.outputs), n.scope))
            for o in n.outputs:
                ids[o] = ("v", len(ids))
            for b in n.blocks:
                walk(b, depth + 1)
                rows.append((depth, "->", tuple(ids[v] for v in b.outputs)))

    walk(g.block, 0)
    rows.append(("return", tuple(ids[v] for v in g.outputs)))
    return rows
