"""Remove dropout that is not training: ``aten::dropout(%x, %p, False)`` is ``%x`` itself.

A frozen module's ``self.training`` is the constant False, so each of its dropout
layers returns its input unchanged; the node goes and its uses read the input.
Which ops do this is read from the registry: an op that is not elementwise and
declares an identity (``("input", "train", False, None)`` for the dropout family)
returns the kept argument itself, not a copy, whenever the named argument is a
constant with that value. Elementwise identities (``x * 1``) make a new tensor
and are the peephole pass's, which checks types and aliasing first.

Example::

    toolkit.jit.run_passes(frozen.graph, ["remove_dropout"])
"""

from __future__ import annotations

from ...ops import registry as R
from ..ir import kinds as K
from ..ir.graph import Block, Graph, Node, Value
from .manager import register_pass


def _constant_is(v: Value, want) -> bool:
    n = v.node
    if n is None or n.kind != K.CONSTANT:
        return False
    got = n.attributes.get("value")
    return type(got) is type(want) and got == want


def _returned_argument(n: Node) -> Value | None:
    """The input the node returns unchanged, when one of its declared identities holds on constants."""
    op = n.op
    if op is None or op.kind == R.ELEMENTWISE or n.blocks or len(n.outputs) != 1:
        return None
    names = op.arg_names
    for keep, const, identity, cond in op.identities:
        i, k = names.index(const), names.index(keep)
        if i >= len(n.inputs) or k >= len(n.inputs) or not _constant_is(n.inputs[i], identity):
            continue
        if cond is not None:
            j = names.index(cond[0])
            if j >= len(n.inputs) or not _constant_is(n.inputs[j], cond[1]):
                continue
        return n.inputs[k]
    return None


def _block(b: Block) -> bool:
    changed = False
    for n in list(b.nodes):
        for inner in n.blocks:
            changed |= _block(inner)
        x = _returned_argument(n)
        if x is None:
            continue
        n.output().replace_all_uses_with(x)
        n.destroy()
        changed = True
    return changed


@register_pass("remove_dropout")
def remove_dropout(graph: Graph) -> Graph:
    """Replace each dropout whose ``train`` is a constant False by its input."""
    _block(graph.block)
    return graph
