"""The IR's invariants, checked after tracing and after every pass.

- SSA: each value is defined once, and each use is dominated by its definition
  (defined earlier in the same block or an enclosing one);
- use lists agree with node inputs;
- types: ``aten::`` nodes have one input per schema argument, each of a type
  that fits the argument; ``prim::`` nodes have the arity their kind needs;
- blocks: ``prim::If`` has two blocks returning as many values as it has
  outputs; ``prim::Loop`` one block taking the counter and the carried values
  and returning the condition and the carried values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import kinds as K
from . import types as T
from .printer import node_to_string

if TYPE_CHECKING:  # graph.py imports this module (Graph.verify)
    from .graph import Block, Graph, Node

# ``aten::`` kinds without a registry entry that act on Python values (scripted code's ``aten::len``,
# ``aten::add.int``...); script mode registers them (``kinds.builtins``).
BUILTIN_KINDS: set = set()


class VerificationError(RuntimeError):
    """A graph breaks an invariant of the IR."""


def _where(n: Node) -> str:
    return node_to_string(n, source_locations=False).strip()


def verify(graph: Graph) -> None:
    """Raise ``VerificationError`` naming the first broken invariant."""
    defined: set = set()
    _block(graph, graph.block, [set(graph.inputs)], defined)
    for v in list(defined):
        for u in v.uses:
            if not (0 <= u.offset < len(u.user.inputs)) or u.user.inputs[u.offset] is not v:
                raise VerificationError(f"use list of %{v.debug_name} is stale: {u}")


def _block(graph: Graph, b: Block, scopes: list, defined: set) -> None:
    for v in b.inputs:
        if v in defined:
            raise VerificationError(f"%{v.debug_name} is defined twice")
        defined.add(v)
    for n in b.nodes:
        if n.owning_block is not b:
            raise VerificationError(f"{_where(n)}: owning block is wrong")
        for i, v in enumerate(n.inputs):
            if not any(v in s for s in scopes):
                raise VerificationError(
                    f"%{v.debug_name} is used before it is defined (input {i} of {_where(n)})")
            if not any(u.user is n and u.offset == i for u in v.uses):
                raise VerificationError(f"%{v.debug_name} does not list its use by {_where(n)}")
        _check_node(n)
        for blk in n.blocks:
            _block(graph, blk, scopes + [set(blk.inputs)], defined)
        for o in n.outputs:
            if o in defined:
                raise VerificationError(f"%{o.debug_name} is defined twice")
            if o.node is not n:
                raise VerificationError(f"%{o.debug_name} does not point back to {_where(n)}")
            defined.add(o)
            scopes[-1].add(o)
    for v in b.outputs:
        if not any(v in s for s in scopes):
            raise VerificationError(f"%{v.debug_name} is returned but not defined before the return")


def _fits(v_type: T.JitType, arg_type: str, op) -> bool:
    t = arg_type
    if isinstance(v_type, T.AnyType):
        return True
    if t.endswith("?"):
        if isinstance(v_type, T.NoneType):
            return True
        t = t[:-1]
        if isinstance(v_type, T.OptionalType):  # an Optional value fits where the schema accepts None
            v_type = v_type.elem
    if t == "Tensor":
        if isinstance(v_type, T.TensorType):
            return True
        return op.scalar_tensors and isinstance(v_type, (T.IntType, T.FloatType, T.BoolType))
    if t in ("int", "SymInt"):
        return isinstance(v_type, (T.IntType, T.BoolType))
    if t == "float":
        return isinstance(v_type, (T.FloatType, T.IntType))
    if t == "bool":
        return isinstance(v_type, T.BoolType)
    if t == "str":
        return isinstance(v_type, T.StrType)
    if t == "Scalar":
        return isinstance(v_type, (T.IntType, T.FloatType, T.BoolType))
    if t.endswith("[]") or "[" in t:
        if t.startswith(("Tensor", "Tensor?")):
            return isinstance(v_type, T.ListType) and isinstance(v_type.elem, (T.TensorType, T.OptionalType))
        return isinstance(v_type, (T.ListType, T.TupleType, T.IntType, T.FloatType))
    return True


def _check_node(n: Node) -> None:
    k = n.kind
    blocks = K.facts(k).blocks if n.op is None else 0  # the kind's declaration says how many blocks it holds
    if len(n.blocks) != blocks:
        raise VerificationError(f"{_where(n)}: {k} needs {blocks} block{'s' * (blocks != 1)}, has {len(n.blocks)}")
    if n.op is not None:
        args = n.op.args
        if len(n.inputs) != len(args):
            raise VerificationError(f"{_where(n)}: {k} takes {len(args)} inputs (schema {n.op.schema}), "
                                    f"got {len(n.inputs)}")
        for v, a in zip(n.inputs, args):
            if not _fits(v.type, a.type, n.op):
                raise VerificationError(
                    f"{_where(n)}: argument '{a.name}' of {k} must be {a.type}, but %{v.debug_name} is {v.type}")
        return
    if k == K.GETITEM:  # a traced dict input's lookup (no registry op)
        _arity(n, 2, 1)
    elif k.startswith("aten::") and k not in BUILTIN_KINDS:
        raise VerificationError(f"{_where(n)}: aten node without its op definition")
    if k == K.CONSTANT:
        _arity(n, 0, 1)
    elif k in (K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT):
        _arity(n, None, 1)
        t = n.output().type
        if k == K.TUPLE_CONSTRUCT and isinstance(t, T.TupleType) and len(t.elems) != len(n.inputs):
            raise VerificationError(f"{_where(n)}: tuple type {t} does not match {len(n.inputs)} inputs")
    elif k in (K.LIST_UNPACK, K.TUPLE_UNPACK):
        _arity(n, 1, None)
    elif k == K.GET_ATTR:
        _arity(n, 1, 1)
        if "name" not in n.attributes:
            raise VerificationError(f"{_where(n)}: prim::GetAttr needs a name attribute")
    elif k == K.IF:
        _arity(n, 1, None)
        for b in n.blocks:
            if b.inputs or len(b.outputs) != len(n.outputs):
                raise VerificationError(f"{_where(n)}: each block of prim::If takes no inputs and returns "
                                        f"{len(n.outputs)} values")
    elif k == K.LOOP:
        carried = len(n.inputs) - 2
        b = n.blocks[0]
        if carried < 0 or len(n.outputs) != carried or len(b.inputs) != carried + 1 or len(b.outputs) != carried + 1:
            raise VerificationError(f"{_where(n)}: prim::Loop(max_trip_count, cond, *carried) must carry as many "
                                    "values in, through its block and out")


def _arity(n: Node, n_in, n_out) -> None:
    if n_in is not None and len(n.inputs) != n_in:
        raise VerificationError(f"{_where(n)}: {n.kind} takes {n_in} inputs, got {len(n.inputs)}")
    if n_out is not None and len(n.outputs) != n_out:
        raise VerificationError(f"{_where(n)}: {n.kind} has {n_out} outputs, got {len(n.outputs)}")
