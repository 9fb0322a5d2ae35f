"""The code parser's statements about module attributes: ``self.count = ...`` (``prim::SetAttr``) and
``count = self.count`` (a ``prim::GetAttr`` the printer writes as a statement because the graph assigns it).

An assignment or read may name another attribute than the archive's graph did only when the module has it
with a type the value fits (``AttributeTypes`` tells), which is the check script mode makes at compile time.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..frontend.script.attributes import accepts
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from .code_statements import CodeError
from .code_statements import head as _head
from .code_statements import pop as _pop
from .code_statements import where as _where

AttributeTypes = Callable[[tuple, str], "T.JitType | None"]
"""``(module path from self, name) -> type``: an attribute the module at that path has, code may assign and read."""


class AttributeStatements:
    """Mixin of the code parser's rebuilder (which supplies ``graph``, ``attributes``, ``value`` and ``bind``)."""

    def setattr(self, node: Node, stmts: list, owner: str) -> None:
        stmt = _pop(stmts, owner, node.kind)
        if not _is_attribute_assignment(stmt):
            raise CodeError(f"expected an attribute assignment for prim::SetAttr at {_where(stmt)}, "
                            f"got {_head(stmt)!r}")
        target = stmt.targets[0]
        base = self.module_value(target.value, node, stmt)
        value = self.value(stmt.value, node.inputs[1], node)  # a call computing it is written in it
        typ = self.attribute_type(base, target, node["name"], node.inputs[1].type, stmt)
        if not accepts(typ, value.type):
            raise CodeError(f"wrong type for attribute assignment at {_where(stmt)}: "
                            f"{ast.unparse(target)} is {typ}, the value is {value.type}")
        for i, v in enumerate((base, value)):
            if node.inputs[i] is not v:
                node.replace_input(i, v)
        node["name"] = target.attr

    def getattr(self, node: Node, stmt: ast.stmt) -> None:
        """A read of an assigned attribute: ``count = self.count``."""
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) \
                or not isinstance(stmt.value, ast.Attribute):
            raise CodeError(f"expected 'name = <module>.{node['name']}' for prim::GetAttr at {_where(stmt)}, "
                            f"got {_head(stmt)!r}")
        target = stmt.value
        base = self.module_value(target.value, node, stmt)
        out = node.outputs[0]
        typ = self.attribute_type(base, target, node["name"], out.type, stmt)
        if not accepts(out.type, typ):
            raise CodeError(f"wrong type for attribute read at {_where(stmt)}: {ast.unparse(target)} is {typ}, "
                            f"the graph reads {out.type}")
        if node.inputs[0] is not base:
            node.replace_input(0, base)
        node["name"] = target.attr
        self.bind(stmt.targets[0], node.outputs)

    def module_value(self, e: ast.expr, node: Node, stmt: ast.stmt) -> Value:
        v = self.value(e, node.inputs[0], node)
        if not isinstance(v.type, T.ModuleType):
            raise CodeError(f"{ast.unparse(e)} at {_where(stmt)} is {v.type}, not a module: only module "
                            "attributes can be read or assigned")
        return v

    def attribute_type(self, base: Value, target: ast.Attribute, graph_name: str, graph_type, stmt) -> T.JitType:
        """The type of ``<base>.<name>``: from ``attributes`` when given, else the graph's own (same name only)."""
        name, where = target.attr, _where(stmt)
        if self.attributes is None:
            if name != graph_name:
                raise CodeError(f"{ast.unparse(target)} at {where}: the graph has {graph_name!r} here")
            return graph_type
        path = _module_path(self.graph, base)
        typ = None if path is None else self.attributes(path, name)
        if typ is None:
            raise CodeError(f"{ast.unparse(target)} at {where}: the module has no attribute {name!r} that code "
                            "can read or assign")
        return typ


def _is_attribute_assignment(s: ast.stmt) -> bool:
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Attribute)


def _module_path(graph: Graph, v: Value) -> tuple | None:
    """The submodule names from ``self`` (the graph's first input) to module value ``v``, or None."""
    path: list = []
    while v is not graph.inputs[0]:
        n = v.node
        if n is None or n.kind != K.GET_ATTR or not isinstance(v.type, T.ModuleType):
            return None
        path.append(n["name"])
        v = n.inputs[0]
    return tuple(reversed(path))
