"""What passes, code generation and the runtime ask about nodes: side effects, purity and aliasing, all read
from the op registry's kinds and, for the JIT's own kinds, from the registry of kinds (``ir.kinds``).

Passes never test op names for these questions: an op is in place when its kind
is ``INPLACE`` or its schema writes an argument (``Tensor(a!)``), random when its
kind is ``RANDOM`` or it takes a ``Generator``; a JIT kind writes the arguments its
schema annotates ``(a!)`` (``prim::SetAttr``, ``aten::append``) and aliases those
annotated ``(a)`` (``prim::ListConstruct``, ``prim::unchecked_cast``).
"""

from __future__ import annotations

from ...ops import registry as R
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value

_KINDS = K.KINDS


def is_mutating(n: Node) -> bool:
    """Whether the node writes one of its inputs."""
    op = n.op
    if op is None:
        k = _KINDS.get(n.kind)
        return k is not None and k.mutating
    if op.kind == R.INPLACE:
        return True
    return any(a.alias.endswith("!") for a in op.args) and not _updates_nothing_in_eval(n)


def _updates_nothing_in_eval(n: Node) -> bool:
    """An op whose written arguments are optional state it updates only while training (``batch_norm``'s
    ``Tensor(a!)? running_mean``), called with ``training`` a constant False, writes nothing.

    A frozen module's ``self.training`` is such a constant, so its running statistics are read-only there and
    fold into constants (PyTorch's alias analysis of frozen graphs makes the same exception). Read from the
    schema: a ``bool training`` argument, and every written argument an optional tensor."""
    op = n.op
    names = op.arg_names
    if "training" not in names or op.args[names.index("training")].type != "bool":
        return False
    if not all(a.optional for a in op.args if a.alias.endswith("!")):
        return False
    i = names.index("training")
    if i >= len(n.inputs):
        return op.args[i].default is False
    v = n.inputs[i]
    return v.node is not None and v.node.kind == K.CONSTANT and v.node.attributes.get("value") is False


def is_random(n: Node) -> bool:
    op = n.op
    return op is not None and (op.kind == R.RANDOM or any(a.type.startswith("Generator") for a in op.args))


def has_side_effects(n: Node) -> bool:
    """Whether removing or moving the node could change what the program does, even if its results are unused."""
    if n.op is not None:
        return is_mutating(n) or is_random(n)
    k = _KINDS.get(n.kind)
    if k is None:
        return True  # a kind the registry does not know
    if k.effects == K.OF_BLOCKS:
        return any(has_side_effects(m) for b in n.blocks for m in b.nodes)
    return k.has_side_effects


def is_pure(n: Node) -> bool:
    """Same inputs give the same results and nothing else happens: safe to merge, fold or drop."""
    if n.blocks:
        return False
    if n.op is not None:
        return not is_mutating(n) and not is_random(n)
    k = _KINDS.get(n.kind)
    return k is not None and k.pure


def is_foldable_function(n: Node) -> bool:
    """A kind without an op that runs as a plain function of its inputs' values and writes nothing (scripted
    code's ``aten::__not__``, ``aten::ne.int``, ``aten::len``...): constant propagation may run it on constants."""
    if n.op is not None:
        return False
    k = _KINDS.get(n.kind)
    return k is not None and k.function is not None and not k.mutating


class AliasSets:
    """Which values may share memory: views, in-place results and containers join their inputs' set."""

    def __init__(self, graph: Graph):
        self._parent: dict[Value, Value] = {}
        self._mutated_roots: set = set()
        self._output_roots: set = set()
        nodes = list(graph.all_nodes())
        for n in nodes:
            k = _KINDS.get(n.kind) if n.op is None else None
            if n.op is not None and n.op.kind in (R.VIEW, R.INPLACE) or k is not None and k.aliasing:
                vals = [v for v in n.inputs if _may_hold_tensor(v)] + [v for v in n.outputs if _may_hold_tensor(v)]
                for v in vals[1:]:
                    self._union(vals[0], v)
            elif k is not None and k.effects == K.OF_BLOCKS:
                for b in n.blocks:
                    for o, r in zip(n.outputs, b.outputs[len(b.outputs) - len(n.outputs):]):
                        self._union(o, r)
                if n.kind == K.LOOP:  # carried values enter the body as its parameters
                    for v, p in zip(n.inputs[2:], n.blocks[0].inputs[1:]):
                        self._union(v, p)
        for n in nodes:
            self._mutated_roots.update(self.written_roots(n))
        for v in graph.outputs:
            self._output_roots.add(self._find(v))

    def _find(self, v: Value) -> Value:
        p = self._parent.get(v, v)
        if p is v:
            return v
        r = self._find(p)
        self._parent[v] = r
        return r

    def _union(self, a: Value, b: Value) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra is not rb:
            self._parent[rb] = ra

    def root(self, v: Value) -> Value:
        """The representative of ``v``'s set: two values share memory (may) exactly when their roots are one."""
        return self._find(v)

    def written_roots(self, n: Node) -> list:
        """The sets ``n`` writes: its ``Tensor(a!)`` arguments (and an in-place op's ``self``)."""
        if not is_mutating(n):
            return []
        if n.op is None:
            return [self._find(n.inputs[i]) for i in _KINDS[n.kind].written_args]
        return [self._find(v) for v, a in zip(n.inputs, n.op.args)
                if a.alias.endswith("!") or (n.op.kind == R.INPLACE and v is n.inputs[0])]

    def is_mutated(self, v: Value) -> bool:
        """Whether some node writes ``v`` or a value sharing its memory."""
        return self._find(v) in self._mutated_roots

    def reaches_output(self, v: Value) -> bool:
        """Whether ``v`` or a value sharing its memory is returned by the graph."""
        return self._find(v) in self._output_roots


def _may_hold_tensor(v: Value) -> bool:
    return not isinstance(v.type, (T.IntType, T.FloatType, T.BoolType, T.StrType, T.NoneType, T.OtherType))
