"""List and dict comprehensions: one ``prim::Loop`` (or an unrolled body) filling a fresh container."""

from __future__ import annotations

import ast

from ...ir import kinds as K
from ...ir import types as T
from .typing_rules import unify


class Comprehensions:
    """Mixin of the function compiler: ``[e for x in it if c]`` and ``{k: v for x in it if c}``."""

    def _comprehension(self, e, add) -> None:
        """Compile the loop of a one-``for`` comprehension; ``add()`` compiles one element into the container."""
        if len(e.generators) != 1 or e.generators[0].is_async:
            raise self.error("only comprehensions with one 'for' are supported in script code", e)
        g = e.generators[0]
        saved = dict(self.env)

        def body(element):
            self.assign(g.target, element, e)
            conds = list(g.ifs)
            if not conds:
                add()
                return
            c, _ = self.condition(conds[0] if len(conds) == 1 else ast.BoolOp(ast.And(), conds))
            if isinstance(c, bool):
                if c:
                    add()
                return
            self.emit_if(c, add, lambda: None, e)

        self.for_each(self.iteration(self.expr(g.iter), g.iter), e, body)
        self.env = saved  # the comprehension's variables do not leak, as in Python 3

    def expr_ListComp(self, e):
        lst = self.list_of([], T.ANY, e)
        types = []

        def add():
            x = self.value(e.elt)
            types.append(x.type)
            self.scalar_op("aten::append", [lst, x], None, e)

        self._comprehension(e, add)
        lst.type = T.ListType(_unified(types, T.TENSOR))
        return lst

    def expr_DictComp(self, e):
        n = self.insert(K.DICT_CONSTRUCT, [], 1, node=e)
        d = n.output()
        d.type = T.DictType(T.STR, T.TENSOR)
        key_types, value_types = [], []

        def add():
            k, v = self.value(e.key), self.value(e.value)
            if not isinstance(k.type, (T.StrType, T.IntType, T.FloatType, T.BoolType, T.TensorType)):
                raise self.error(f"a dict key must be str, int, float, bool or Tensor in script code, not {k.type}",
                                 e.key)
            key_types.append(k.type)
            value_types.append(v.type)
            self.scalar_op("aten::_set_item", [d, k, v], None, e)

        self._comprehension(e, add)
        kt = _unified(key_types, T.STR)
        if isinstance(kt, T.AnyType):
            raise self.error("the keys of a dict comprehension must all have one type", e.key)
        d.type = T.DictType(kt, _unified(value_types, T.TENSOR))
        return d


def _unified(types: list, default):
    t = types[0] if types else default
    for x in types[1:]:
        t = unify(t, x) or T.ANY
    return t
