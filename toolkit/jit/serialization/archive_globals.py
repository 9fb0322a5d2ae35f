"""Modules held in globals, as the archive of a scripted function saves them: their state becomes constants.

Scripted code may call a module held in a global variable (the seed's ``rnn_loop`` calls ``model``): the compiler
inlines its ``forward``, and the graph reads the module's parameters, buffers and attributes off a
``prim::ModuleConstant``. An archive cannot hold a Python object, so ``toolkit.jit.save`` writes a copy of the
graph in which each read of such a module (``prim::GetAttr`` chains down through its submodules) is the value
it has at save time: tensors as tensor constants (stored with the archive's data, printed ``CONSTANTS.c0``),
numbers and flags (``training``) as literals. The loaded function computes what the scripted one computed when
it was saved, the way ``torch.jit.freeze`` folds a module's state into its graph. A graph that assigns an
attribute of such a module, or hands the module itself to something other than ``prim::GetAttr``, cannot be
saved this way and is refused.
"""

from __future__ import annotations

from ...nn.modules.module import Module
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from .archive_types import check_value

__all__ = ["global_modules_as_constants"]


def _refuse(n: Node, module, what: str) -> TypeError:
    where = f" at {n.source_location}" if n.source is not None else ""
    return TypeError(f"toolkit.jit.save: cannot save {what} of the module {type(module).__name__} held in a global"
                     f"{where}: an archive saves such a module's state as constants, read with prim::GetAttr only")


def _fold_reads(g: Graph, v: Value, module) -> None:
    """Replace each ``prim::GetAttr`` of ``v`` (which is ``module``) by its value now, submodules recursively."""
    for use in list(v.uses):
        user = use.user
        if user.kind == K.SET_ATTR:
            raise _refuse(user, module, f"the assignment of '{user['name']}'")
        if user.kind != K.GET_ATTR:
            raise _refuse(user, module, f"{user.kind} (it needs the module object)")
        out = user.output()
        value = getattr(module, user["name"])
        if isinstance(value, Module):
            _fold_reads(g, out, value)
        else:
            with g.inserting_before(user):
                c = g.insert_constant(value)
            if check_value(value, out.type) and not isinstance(out.type, T.AnyType):
                c.type = out.type
            c.node.source = user.source
            out.replace_all_uses_with(c)
        user.destroy()


def global_modules_as_constants(graph: Graph) -> Graph:
    """``graph`` if it reads no module held in a global, else a copy reading their current state as constants.

    Raises ``TypeError`` naming the node for an assignment to such a module or another use of it than reading
    its members.
    """
    if not any(n.kind == K.MODULE_CONSTANT for sub in _with_forked(graph) for n in sub.all_nodes()):
        return graph
    copy = graph.copy()  # forked subgraphs are copied with it
    for g in _with_forked(copy):
        for n in [n for n in g.all_nodes() if n.kind == K.MODULE_CONSTANT]:
            _fold_reads(g, n.output(), n["value"].module)
            n.destroy()
    return copy


def _with_forked(graph: Graph) -> list[Graph]:
    """``graph`` and the ``Subgraph`` of each ``prim::fork`` in it, nested ones too: a forked function may read a
    module held in a global as well."""
    out, stack = [], [graph]
    while stack:
        g = stack.pop()
        out.append(g)
        stack.extend(n["Subgraph"] for n in g.all_nodes() if n.kind == K.FORK and "Subgraph" in n.attributes)
    return out
