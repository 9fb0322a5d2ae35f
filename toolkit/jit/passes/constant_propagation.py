"""Constant propagation and folding: a pure, deterministic node whose inputs are all constants is run once,
through the registry's kernels, and replaced by ``prim::Constant`` nodes holding its results. A builtin that the
interpreter runs as a plain function (``aten::__not__``, ``aten::eq.int``) folds when its result is a scalar, and
a ``prim::If`` on a constant condition becomes the branch it takes (so a frozen module's ``self.training``
branches disappear).

Lists of constants (``prim::ListConstruct``) fold into list constants first, so
``aten::view(%x, [2, 3])`` sees a constant shape. A tensor result is not folded
when some node writes its memory or when the graph returns it (the constant
would be shared between runs), nor when it has more than ``max_elements`` elements.
"""

from __future__ import annotations

from ... import dispatch
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from ..kinds.effects import AliasSets, is_foldable_function, is_pure
from ..kinds.steps import EXEC
from .manager import register_pass

MAX_ELEMENTS = 1 << 16


def _const(v):
    n = v.node
    if n is None or n.kind != K.CONSTANT:
        raise LookupError
    return n.attributes.get("value")


def _evaluate(n: Node) -> list:
    args = [_const(v) for v in n.inputs]
    if n.kind == K.LIST_CONSTRUCT:
        return [list(args)]
    if n.kind == K.TUPLE_CONSTRUCT:
        return [tuple(args)]
    if n.kind in (K.LIST_UNPACK, K.TUPLE_UNPACK):
        seq = args[0]
        if len(seq) != len(n.outputs):
            raise LookupError
        return list(seq)
    for i, a in enumerate(n.op.args):
        if isinstance(args[i], list) and a.is_number_list:
            args[i] = tuple(args[i])
    with no_grad():
        out = dispatch.execute(n.op, args)
    return [out] if len(n.outputs) == 1 else list(out)


_CONTAINER_KINDS = (K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT, K.LIST_UNPACK, K.TUPLE_UNPACK)
"""The kinds without an op that ``_evaluate`` folds: containers of constants and their elements."""


def _foldable(n: Node, aliases: AliasSets, max_elements: int) -> bool:
    if n.kind == K.CONSTANT or not is_pure(n) or n.kind in (K.GET_ATTR, K.DICT_CONSTRUCT):
        return False
    if n.op is None and n.kind not in _CONTAINER_KINDS:
        return False  # other kinds without an op fold as plain functions (_foldable_function), or not at all
    if n.op is not None and (not n.op.returns_tensor or n.op.returns_list):
        return False  # list results are left to their prim::ListUnpack
    if n.kind == K.LIST_CONSTRUCT and any(isinstance(v.type, (T.TensorType, T.OptionalType))
                                               for v in n.inputs):
        return False
    if n.kind == K.LIST_CONSTRUCT and aliases.is_mutated(n.output()):
        return False  # a list that is appended to must be a fresh list on every run
    if not all(v.node is not None and v.node.kind == K.CONSTANT for v in n.inputs):
        return False
    for o in n.outputs:
        if isinstance(o.type, T.TensorType) and (aliases.is_mutated(o) or aliases.reaches_output(o)):
            return False
        if isinstance(o.type, T.TensorType) and o.type.complete_shape() and o.type.numel() > max_elements:
            return False
    return True


def _is_constant(v: Value) -> bool:
    return v.node is not None and v.node.kind == K.CONSTANT


def _inline_taken_branch(n: Node) -> None:
    """Replace a ``prim::If`` on a constant condition by the nodes of the branch it takes."""
    taken, dropped = (n.blocks[0], n.blocks[1]) if _const(n.inputs[0]) else (n.blocks[1], n.blocks[0])
    for m in list(taken.nodes):
        taken.nodes.remove(m)
        m.insert_before(n)
    for o, r in zip(n.outputs, taken.outputs):
        o.replace_all_uses_with(r)
    taken.outputs = []
    _destroy_nested(dropped)
    n.blocks = []
    n.destroy()


def _destroy_nested(b: Block) -> None:
    b.outputs = []
    for m in reversed(list(b.nodes)):
        for inner in m.blocks:
            _destroy_nested(inner)
        m.blocks = []
        m.destroy()


_SCALARS = (bool, int, float, str, type(None))


def _foldable_function(n: Node) -> bool:
    """A builtin run as a plain function (``aten::__not__``, ``aten::ne.int``) that writes nothing, on constants."""
    return (is_foldable_function(n) and len(n.outputs) == 1
            and bool(n.inputs) and all(_is_constant(v) for v in n.inputs))


def _evaluate_function(n: Node) -> list:
    """The node's result, when a plain scalar (a list or tensor result could be shared between runs); else raise
    LookupError."""
    env = {v: _const(v) for v in n.inputs}
    EXEC[n.kind](n, env)
    out = env[n.outputs[0]]
    if not isinstance(out, _SCALARS) or not isinstance(n.output().type, (T.IntType, T.FloatType, T.BoolType,
                                                                         T.StrType, T.NoneType)):
        raise LookupError
    return [out]


def _block(graph: Graph, b: Block, aliases: AliasSets, max_elements: int) -> bool:
    changed = False
    for n in list(b.nodes):
        for inner in n.blocks:
            changed |= _block(graph, inner, aliases, max_elements)
        if n.kind == K.IF and _is_constant(n.inputs[0]):
            _inline_taken_branch(n)
            changed = True
            continue
        if _foldable_function(n):
            evaluate = _evaluate_function
        elif _foldable(n, aliases, max_elements):
            evaluate = _evaluate
        else:
            continue
        try:
            results = evaluate(n)
        except LookupError:
            continue
        except Exception:
            continue  # the node fails at run time too; leave it so the error names it there
        if any(isinstance(r, Tensor) and (r.numel() > max_elements or r.requires_grad) for r in results):
            continue
        with graph.inserting_before(n):
            news = []
            for o, r in zip(n.outputs, results):
                if isinstance(r, Tensor):
                    typ = T.TensorType.of(r)
                else:
                    typ = o.type if n.kind in (K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT) else None
                news.append(graph.insert_constant(r, typ))
        for o, v in zip(n.outputs, news):
            v.node.source, v.node.scope = n.source, n.scope
            o.replace_all_uses_with(v)
        n.destroy()
        changed = True
    return changed


@register_pass("constant_propagation")
def propagate_constants(graph: Graph, max_elements: int = MAX_ELEMENTS) -> Graph:
    """Fold every node computable from constants; run ``dce`` afterwards to drop constants left unused."""
    _block(graph, graph.block, AliasSets(graph), max_elements)
    return graph
