"""Peephole simplifications: algebraic identities (``x * 1``, ``x + 0``, ``x - 0``, ``x / 1``), inverse view
pairs (``t(t(x))``, a transpose undone by the same transpose), views that change nothing and copies or
casts that change nothing.

Every rule checks the registry (the op's kind) and the exact types: a node is
replaced by its input only when its output has the input's dtype, shape and
device, so promotion and broadcasting are never lost. Rules that replace a copy
by its input also need that no node writes either value's memory and that the
graph does not return the copy. ``x + 0`` turns ``-0.0`` into ``0.0``; the
rewrite returns ``x`` unchanged (as TorchScript's peephole pass does).
"""

from __future__ import annotations

from ...ops import registry as R
from ...tensor import Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ..kinds.effects import AliasSets
from .manager import register_pass


def _constant(v: Value):
    n = v.node
    if n is None or n.kind != K.CONSTANT:
        raise LookupError
    return n.attributes.get("value")


def _all_equal(c, identity) -> bool:
    if isinstance(c, Tensor):
        return c.numel() > 0 and bool((c == identity).all())
    return isinstance(c, (int, float)) and c == identity


def _same_type(a: T.JitType, b: T.JitType) -> bool:
    """Both complete tensor types with equal dtype, shape and device."""
    return (isinstance(a, T.TensorType) and isinstance(b, T.TensorType) and a.is_complete() and b.is_complete()
            and a.dtype is b.dtype and a.sizes == b.sizes and a.device == b.device)


def _copy_free(n: Node, x: Value, aliases: AliasSets) -> bool:
    out = n.output()
    return not (aliases.is_mutated(out) or aliases.is_mutated(x) or aliases.reaches_output(out))


def _identity(n: Node, aliases: AliasSets) -> Value | None:
    if n.op.kind != R.ELEMENTWISE:
        return None
    names = n.op.arg_names
    for keep, const, identity, cond in n.op.identities:  # declared with the op in the registry
        keep, const = names.index(keep), names.index(const)
        if cond is not None:
            name, want = cond
            i = names.index(name)
            try:
                if _constant(n.inputs[i]) != want:
                    continue
            except LookupError:
                continue
        try:
            c = _constant(n.inputs[const])
        except LookupError:
            continue
        x = n.inputs[keep]
        if _all_equal(c, identity) and _same_type(x.type, n.output().type) and _copy_free(n, x, aliases):
            return x
    return None


def _wrap(d, rank: int):
    return d + rank if isinstance(d, int) and d < 0 else d


def _inverse_view(n: Node) -> Value | None:
    """``t(t(x))`` and ``transpose(transpose(x, a, b), a, b)`` (or ``b, a``) are ``x`` (ops declared ``self_inverse``)."""
    inner = n.inputs[0].node
    if inner is None or inner.op is not n.op or not n.op.self_inverse:
        return None
    x = inner.inputs[0]
    if len(n.inputs) == 1:
        return x
    if x.type.__class__ is not T.TensorType or x.type.sizes is None:
        return None
    rank = len(x.type.sizes)
    try:
        a = {_wrap(_constant(v), rank) for v in inner.inputs[1:]}
        b = {_wrap(_constant(v), rank) for v in n.inputs[1:]}
    except LookupError:
        return None
    return x if a == b else None


def _noop_view(n: Node) -> Value | None:
    """A view whose output has its input's sizes and strides (``view(x, x.shape)``, ``expand`` to the same shape)."""
    if n.op.kind != R.VIEW or len(n.outputs) != 1 or "storage_offset" in n.op.arg_names:
        return None
    if len(n.op.tensor_args) != 1 or n.op.tensor_args[0] != 0:
        return None
    x, out = n.inputs[0], n.output()
    if not _same_type(x.type, out.type) or x.type.strides is None or x.type.strides != out.type.strides:
        return None
    return x if _static_args(n) else None


def _static_args(n: Node) -> bool:
    """Whether the node's non-tensor arguments are fixed for every run of this graph (constants, or the
    graph's own inputs, which a plan's signature fixes), so its output type, profiled once, holds on every run;
    ``x[:, :k]`` with ``k`` computed from data is a no-op only on the runs that happened to see it so."""
    inputs = set(n.graph.inputs)
    for v, a in zip(n.inputs, n.op.args):
        if a.is_tensor:
            continue
        if v.node is not None and v.node.kind != K.CONSTANT or v.node is None and v not in inputs:
            return False
    return True


def _noop_copy(n: Node, aliases: AliasSets) -> Value | None:
    """A cast or copy to the dtype, shape and device its input already has, when nothing can tell the copy apart."""
    if n.op.kind != R.CONVERSION or len(n.outputs) != 1 or len(n.op.tensor_args) != 1:
        return None
    x = n.inputs[n.op.tensor_args[0]]
    if _same_type(x.type, n.output().type) and _copy_free(n, x, aliases) and _static_args(n):
        return x
    return None


def _simplify(n: Node, aliases: AliasSets) -> Value | None:
    if n.op is None or n.blocks or len(n.outputs) != 1:
        return None
    return _identity(n, aliases) or _inverse_view(n) or _noop_view(n) or _noop_copy(n, aliases)


@register_pass("peephole")
def peephole(graph: Graph) -> Graph:
    """Apply the rewrites until none applies; the replaced nodes are removed (their inputs are left to ``dce``)."""
    changed = True
    while changed:
        changed = False
        aliases = AliasSets(graph)
        for n in list(graph.all_nodes()):
            if n.owning_block is None:
                continue
            x = _simplify(n, aliases)
            if x is None:
                continue
            n.output().replace_all_uses_with(x)
            n.destroy()
            changed = True
            break
    return graph
