"""Expressions: names, constants, operators, subscripts, containers, comprehensions, f-strings, calls."""

from __future__ import annotations

import ast

from ....ops import registry as R
from ....tensor import Tensor as _Tensor
from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Value
from ...kinds.builtins import SCALAR_OPERATORS, has_kind
from . import ops as O
from . import sugar as S
from .fallback import call_object, get_attribute
from .typing_rules import NamedTupleType, index_error, unify

_BINOP = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "and", ast.BitOr: "or",
          ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_SWAPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
_PY = {name: fn for name, (_, fn) in SCALAR_OPERATORS.items()}
_SCALAR_KIND = {name: kind for name, (kind, _) in SCALAR_OPERATORS.items()}
TENSOR_ATTR_TYPES = {"dtype": T.OtherType("ScalarType"), "device": T.OtherType("Device"), "requires_grad": T.BOOL,
                     "is_leaf": T.BOOL, "is_cuda": T.BOOL, "ndim": T.INT, "shape": T.ListType(T.INT)}
"""The types of the Tensor properties scripted code reads (``x.dtype``, a ``prim::GetAttr`` on a tensor); the
others are tensors."""
_NUMBER = (T.IntType, T.FloatType, T.BoolType)
_NOT_SUBSCRIPTABLE = (T.IntType, T.FloatType, T.BoolType, T.NoneType)


def _suffix(*types) -> str:
    if all(isinstance(t, T.IntType) for t in types):
        return "int"
    if all(isinstance(t, (T.IntType, T.BoolType)) for t in types):
        return "int" if not all(isinstance(t, T.BoolType) for t in types) else "bool"
    if all(isinstance(t, _NUMBER) for t in types):
        return "float"
    if all(isinstance(t, T.StrType) for t in types):
        return "str"
    if all(isinstance(t, T.ListType) for t in types):
        return "t"
    return "Scalar"


class Expressions:
    """Mixin of the function compiler: expression compilation."""

    def expr(self, e, expected=None):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"Python expression '{type(e).__name__}' is not supported in script code", e)
        if expected is not None and isinstance(e, (ast.List, ast.Dict)):
            return method(e, expected)
        return method(e)

    def value(self, e) -> Value:
        return self.as_value(self.expr(e), e)

    # -- building blocks -----------------------------------------------------------------------------
    def scalar_op(self, kind: str, inputs, out_type, node):
        if not has_kind(kind):
            raise self.error(f"no builtin {kind}", node)
        n = self.insert(kind, inputs, 0 if out_type is None else 1, node=node)
        if out_type is None:
            return None
        n.output().type = out_type
        return n.output()

    def tuple_of(self, values: list, node, typ=None) -> Value:
        n = self.insert(K.TUPLE_CONSTRUCT, values, 1, node=node)
        n.output().type = typ or T.TupleType([v.type for v in values])
        return n.output()

    def list_of(self, values: list, elem, node) -> Value:
        n = self.insert(K.LIST_CONSTRUCT, values, 1, node=node)
        n.output().type = T.ListType(elem)
        return n.output()

    def to_list(self, v: Value, node) -> Value:
        elems = self.tuple_elements(v, node)
        t = elems[0].type if elems else T.TENSOR
        for e in elems[1:]:
            t = unify(t, e.type) or T.ANY
        return self.list_of(elems, t, node)

    def tuple_elements(self, v: Value, node) -> list:
        n = v.node
        if n is not None and n.kind in (K.TUPLE_CONSTRUCT, K.NAMED_TUPLE_CONSTRUCT):
            return list(n.inputs)
        if not isinstance(v.type, T.TupleType):
            raise self.error(f"expected a tuple, got {v.type}", node)
        u = self.insert(K.TUPLE_UNPACK, [v], 0, node=node)
        return [u.add_output(t) for t in v.type.elems]

    def unpack(self, value, n: int, node) -> list:
        if isinstance(value, S.Unrolled):
            items = value.items
        elif isinstance(value, S.PythonValue) and isinstance(value.obj, (tuple, list)):
            items = [self.sugar(x, node) for x in value.obj]
        else:
            v = self.as_value(value, node)
            if isinstance(v.type, T.TupleType):
                items = self.tuple_elements(v, node)
            elif isinstance(v.type, T.ListType):
                u = self.insert(K.LIST_UNPACK, [v], 0, node=node)
                items = [u.add_output(v.type.elem) for _ in range(n)]
            else:
                raise self.error(f"cannot unpack a value of type {v.type}", node)
        if len(items) != n:
            raise self.error(f"cannot unpack {len(items)} values into {n} names", node)
        return items

    # -- leaves --------------------------------------------------------------------------------------
    def expr_Constant(self, e):
        v = e.value
        if v is Ellipsis or isinstance(v, (bytes, complex)):
            raise self.error(f"constant {v!r} is not supported in script code", e)
        return self.const(v, e, T.NONE if v is None else None)

    def expr_Name(self, e):
        return self.lookup(e.id, e)

    def expr_Attribute(self, e):
        obj = self.expr(e.value)
        if isinstance(obj, Value):
            return self.value_attr(obj, e.attr, e)
        return obj.attr(self, e.attr, e)

    def value_attr(self, v: Value, name: str, node):
        t = v.type
        if isinstance(t, T.TensorType):
            ops = O.method_ops(name)
            if ops:
                return S.OpsValue(ops, name, v)
            cls_attr = getattr(_Tensor, name, None)
            if cls_attr is None:
                raise self.error(f"Tensor has no attribute '{name}'", node)
            if callable(cls_attr) and not isinstance(_Tensor.__dict__.get(name), property):
                return S.TensorMethod(v, name)
            if name == "shape":
                return O.emit_tensor_method(self, v, "size", [], {}, node)
            n = self.insert(K.GET_ATTR, [v], 1, node=node)
            n["name"] = name
            n.output().type = TENSOR_ATTR_TYPES.get(name, T.TENSOR)
            return n.output()
        if isinstance(t, T.PyObjectType):  # a Python fallback's value: Python reads the attribute at run time
            return get_attribute(self, v, name, node)
        if isinstance(t, NamedTupleType) and name in t.names:
            return self.tuple_elements(v, node)[t.names.index(name)]
        if isinstance(t, T.DictType) and name in ("keys", "values", "items", "get"):
            return _DictMethod(v, name)
        if isinstance(t, T.ListType) and name in ("append", "insert", "pop", "clear", "extend"):
            return _ListMethod(v, name)
        if isinstance(t, T.StrType) and name == "format":
            return _StrFormat(v)
        raise self.error(f"'{t}' object has no attribute or method '{name}'", node)

    # -- operators -----------------------------------------------------------------------------------
    def expr_BinOp(self, e):
        return self.binop(e.op, self.value(e.left), self.value(e.right), e)

    def binop(self, op, a: Value, b: Value, node, inplace: bool = False) -> Value:
        name = _BINOP.get(type(op))
        if name is None:
            raise self.error(f"operator {type(op).__name__} is not supported", node)
        return self.binary(name, a, b, node, inplace)

    def binary(self, name: str, a: Value, b: Value, node, inplace: bool = False) -> Value:
        ta, tb = a.type, b.type
        if isinstance(ta, T.PyObjectType) or isinstance(tb, T.PyObjectType):
            return self.python_object_binary(name, a, b, node)
        if isinstance(ta, T.TensorType):
            ops = O.dunder_ops("i" + name) if inplace else []
            return O.emit_ops(self, ops or O.dunder_ops(name), [a, b], {}, node, name)
        if isinstance(tb, T.TensorType):
            if name in _SWAPPED:
                return O.emit_ops(self, O.dunder_ops(_SWAPPED[name]), [b, a], {}, node, name)
            if name in O.REFLECTED_TENSOR_FIRST:
                return O.emit_ops(self, O.dunder_ops(name), [b, a], {}, node, name)
            if name == "sub":
                return O.emit_ops(self, R.overloads("rsub"), [b, a], {}, node, "rsub")
            if name == "truediv":
                r = O.emit_ops(self, R.overloads("reciprocal"), [b], {}, node, "reciprocal")
                return O.emit_ops(self, O.dunder_ops("mul"), [r, a], {}, node, "mul")
            return O.emit_ops(self, O.dunder_ops(name), [a, b], {}, node, name)
        try:
            x, y = O.constant_of(a), O.constant_of(b)
        except LookupError:
            pass
        else:
            try:
                return self.const(_PY[name](x, y), node)
            except Exception as err:
                raise self.error(f"{name} of {x!r} and {y!r} fails: {err}", node) from None
        if name in _CMP.values():
            out = T.BOOL
        elif isinstance(ta, T.StrType) and isinstance(tb, T.StrType):
            out = T.STR
        elif isinstance(ta, T.ListType) and isinstance(tb, T.ListType):
            out = T.ListType(unify(ta.elem, tb.elem) or T.ANY)
        elif name == "mul" and isinstance(ta, T.ListType) and isinstance(tb, T.IntType):
            out = ta  # [x] * n repeats the list
        elif name == "mul" and isinstance(ta, T.IntType) and isinstance(tb, T.ListType):
            out = tb
        elif isinstance(ta, _NUMBER) and isinstance(tb, _NUMBER):
            ints = isinstance(ta, (T.IntType, T.BoolType)) and isinstance(tb, (T.IntType, T.BoolType))
            if name in ("and", "or", "xor") and isinstance(ta, T.BoolType) and isinstance(tb, T.BoolType):
                out = T.BOOL
            else:
                out = T.INT if ints and name != "truediv" else T.FLOAT
        elif isinstance(ta, T.AnyType) or isinstance(tb, T.AnyType):
            out = T.ANY
        else:
            raise self.error(f"operator '{name}' is not supported between {ta} and {tb}", node)
        return self.scalar_op(f"aten::{_SCALAR_KIND[name]}.{_suffix(ta, tb)}", [a, b], out, node)

    def python_object_binary(self, name: str, a: Value, b: Value, node) -> Value:
        """An operator with a Python fallback's value: Python's operator at run time (a ``PyObject``); with a
        tensor it needs the object's type to pick the op, so it is not compiled (with ``fallback=True`` the
        statement runs as Python)."""
        other = b.type if isinstance(a.type, T.PyObjectType) else a.type
        if isinstance(other, T.TensorType):
            raise self.error(f"operator '{name}' between a Tensor and a Python object (PyObject, bound by a "
                             "Python fallback statement) needs the object's type", node)
        return self.scalar_op(f"aten::{_SCALAR_KIND[name]}.Scalar", [a, b], T.PYOBJECT, node)

    def expr_UnaryOp(self, e):
        if isinstance(e.op, ast.Not):
            c, _ = self.condition(e.operand)
            if isinstance(c, bool):
                return self.const(not c, e)
            return self.scalar_op("aten::__not__", [c], T.BOOL, e)
        v = self.value(e.operand)
        if isinstance(e.op, ast.UAdd):
            return v
        if isinstance(v.type, T.TensorType):
            name = "neg" if isinstance(e.op, ast.USub) else "bitwise_not"
            return O.emit_ops(self, R.overloads(name), [v], {}, e, name)
        if isinstance(e.op, ast.USub):
            try:
                return self.const(-O.constant_of(v), e)
            except LookupError:
                return self.scalar_op(f"aten::neg.{_suffix(v.type)}", [v], v.type, e)
        raise self.error("operator ~ is not supported on numbers in script code", e)

    def expr_BoolOp(self, e):
        is_and = isinstance(e.op, ast.And)
        return self._boolop(is_and, e.values, e)

    def _boolop(self, is_and: bool, values: list, node):
        c, _ = self.condition(values[0])
        if len(values) == 1:
            return self.materialize(c, node)
        if isinstance(c, bool):
            if c == is_and:
                return self._boolop(is_and, values[1:], node)
            return self.const(c, node)
        out = []
        t_names, f_names = self.refined_names(values[0])
        narrow = self.refinement(t_names if is_and else f_names, node)

        def rest():
            saved = dict(self.env)
            if narrow is not None:
                narrow()
            out.append(self._boolop(is_and, values[1:], node))
            self.env = saved

        short = lambda: out.append(self.const(not is_and, node))  # noqa: E731
        n = self.insert(K.IF, [c], 0, node=node)
        for fn in ((rest, short) if is_and else (short, rest)):
            b = n.add_block()
            with self.graph.inserting_at_end(b):
                fn()
                b.register_output(out[-1])
        return n.add_output(T.BOOL)

    def expr_Compare(self, e):
        left = e.left
        result = None
        for op, right in zip(e.ops, e.comparators):
            r = self.compare(op, self.expr(left), self.expr(right), e)
            if result is None:
                result = r
            else:
                result = self.binary("and", self.as_bool(result, e), self.as_bool(r, e), e)
            left = right
        return result

    def compare(self, op, a, b, node) -> Value:
        if isinstance(op, (ast.Is, ast.IsNot)):
            return self.is_none_test(a, b, isinstance(op, ast.IsNot), node)
        a, b = self.as_value(a, node), self.as_value(b, node)
        if isinstance(op, (ast.In, ast.NotIn)):
            r = self.scalar_op("aten::__contains__", [b, a], T.BOOL, node)
            return self.scalar_op("aten::__not__", [r], T.BOOL, node) if isinstance(op, ast.NotIn) else r
        name = _CMP[type(op)]
        if isinstance(a.type, T.NoneType) or isinstance(b.type, T.NoneType):
            if name in ("eq", "ne") and not (isinstance(a.type, T.OptionalType) or isinstance(b.type, T.OptionalType)):
                same = isinstance(a.type, T.NoneType) and isinstance(b.type, T.NoneType)
                return self.const(same == (name == "eq"), node)
        return self.binary(name, a, b, node)

    def is_none_test(self, a, b, negate: bool, node) -> Value:
        a, b = self.as_value(a, node), self.as_value(b, node)
        if isinstance(b.type, T.NoneType):
            x = a
        elif isinstance(a.type, T.NoneType):
            x = b
        else:
            return self.scalar_op("aten::__isnot__" if negate else "aten::__is__", [a, b], T.BOOL, node)
        if isinstance(x.type, T.NoneType):
            return self.const(not negate, node)
        if not isinstance(x.type, (T.OptionalType, T.AnyType, T.PyObjectType)):
            return self.const(negate, node)
        none = self.const(None, node, T.NONE)
        return self.scalar_op("aten::__isnot__" if negate else "aten::__is__", [x, none], T.BOOL, node)

    def as_bool(self, v, node):
        v = self.as_value(v, node)
        if isinstance(v.type, T.BoolType):
            return v
        try:
            return self.const(bool(O.constant_of(v)), node)
        except LookupError:
            pass
        return self.scalar_op("aten::Bool", [v], T.BOOL, node)

    def condition(self, test):
        """(condition: a bool Value or a Python bool when known now, (then-refinement, else-refinement)).

        A refinement narrows ``Optional[T]`` names to ``T`` where the test proves them not None, as
        TorchScript does: ``x is not None``, ``x is None`` (its else side), ``not``, ``and``/``or`` chains.
        """
        then_names, else_names = self.refined_names(test)
        refine = (self.refinement(then_names, test), self.refinement(else_names, test))
        v = self.as_bool(self.expr(test), test)
        try:
            return bool(O.constant_of(v)), refine
        except LookupError:
            return v, refine

    def refined_names(self, test) -> tuple:
        """(names not None when ``test`` holds, names not None when it fails)."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            a, b = test.left, test.comparators[0]
            if isinstance(a, ast.Constant) and a.value is None:
                a, b = b, a
            if isinstance(a, ast.Name) and isinstance(b, ast.Constant) and b.value is None:
                cur = self.env.get(a.id)
                if isinstance(cur, Value) and isinstance(cur.type, T.OptionalType):
                    return ({a.id}, set()) if isinstance(test.ops[0], ast.IsNot) else (set(), {a.id})
            return set(), set()
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            t, f = self.refined_names(test.operand)
            return f, t
        if isinstance(test, ast.BoolOp):
            parts = [self.refined_names(v) for v in test.values]
            thens, elses = [p[0] for p in parts], [p[1] for p in parts]
            if isinstance(test.op, ast.And):
                return set().union(*thens), set.intersection(*elses)
            return set.intersection(*thens), set().union(*elses)
        return set(), set()

    def refinement(self, names: set, node):
        """A function rebinding each ``Optional`` name in ``names`` to its unwrapped value, or None."""
        if not names:
            return None

        def cast():
            for name in sorted(names):
                cur = self.env.get(name)
                if isinstance(cur, Value) and isinstance(cur.type, T.OptionalType):
                    n = self.insert(K.UNCHECKED_CAST, [cur], 1, node=node)
                    n.output().type = cur.type.elem
                    n.output().set_debug_name(name)
                    self.env[name] = n.output()

        return cast

    def expr_IfExp(self, e):
        c, refine = self.condition(e.test)
        if isinstance(c, bool):
            return self.expr(e.body if c else e.orelse)

        def branch(x):
            return lambda: self.env.__setitem__("$tmp", self.value(x))

        self.emit_if(c, branch(e.body), branch(e.orelse), e, refine)
        return self.env.pop("$tmp")

    # -- containers ----------------------------------------------------------------------------------
    def expr_List(self, e, expected=None):
        vals = [self.value(x) for x in e.elts]
        if not vals:
            elem = expected.elem if isinstance(expected, T.ListType) else T.TENSOR
            return self.list_of([], elem, e)
        t = vals[0].type
        for v in vals[1:]:
            u = unify(t, v.type)
            if u is None:
                raise self.error(f"list elements must have one type, got {t} and {v.type}", e)
            t = u
        return self.list_of(vals, t, e)

    def expr_Tuple(self, e):
        items = [self.expr(x) for x in e.elts]
        if any(not isinstance(x, Value) and not isinstance(x, bool) and isinstance(x, (S.ModuleValue, S.Unrolled,
                                                                                            S.MethodValue, S.Builtin))
               for x in items):
            return S.Unrolled(items)
        return self.tuple_of([self.as_value(x, e) for x in items], e)

    def expr_Dict(self, e, expected=None):
        keys = [self.value(k) for k in e.keys]
        vals = [self.value(v) for v in e.values]
        kt = keys[0].type if keys else (expected.key if isinstance(expected, T.DictType) else T.STR)
        vt = vals[0].type if vals else (expected.value if isinstance(expected, T.DictType) else T.TENSOR)
        for v in vals[1:]:
            vt = unify(vt, v.type) or T.ANY
        inputs = [x for kv in zip(keys, vals) for x in kv]
        n = self.insert(K.DICT_CONSTRUCT, inputs, 1, node=e)
        n.output().type = T.DictType(kt, vt)
        return n.output()

    def expr_Subscript(self, e):
        obj = self.expr(e.value)
        if not isinstance(obj, Value):
            return self.sugared_index(obj, e)
        t = obj.type
        if isinstance(t, T.TensorType):
            return self.tensor_index(obj, e.slice, e)
        if isinstance(t, T.TupleType):
            k = self._const_index(e.slice, e)
            if isinstance(k, int) and not -len(t.elems) <= k < len(t.elems):
                raise self.error(f"Tuple index out of range. Tuple is length {len(t.elems)} and index is {k}", e)
            elems = self.tuple_elements(obj, e)
            if isinstance(k, slice):
                return self.tuple_of(elems[k], e)
            return elems[k]
        if isinstance(t, T.PyObjectType):  # Python indexes a fallback's value at run time
            n = self.insert(K.GETITEM, [obj, self.index_value(e.slice)], 1, node=e)
            n.output().type = T.PYOBJECT
            return n.output()
        if isinstance(t, _NOT_SUBSCRIPTABLE):
            raise self.error(f"'{t}' object is not subscriptable", e)
        if isinstance(e.slice, ast.Slice) and isinstance(t, (T.ListType, T.StrType)):
            parts = [self.value(p) if p is not None else self.const(d, e, T.NONE if d is None else None)
                     for p, d in ((e.slice.lower, 0), (e.slice.upper, None), (e.slice.step, 1))]
            return self.scalar_op("aten::slice.t", [obj, *parts], t, e)
        idx = self.value(e.slice)
        why = index_error(t, idx.type)
        if why is not None:
            raise self.error(why, e)
        if isinstance(t, T.ListType):
            out = t.elem
        elif isinstance(t, T.DictType):
            out = t.value
        elif isinstance(t, T.StrType):
            out = T.STR
        else:
            out = T.ANY
        n = self.insert(K.GETITEM, [obj, idx], 1, node=e)
        n.output().type = out
        return n.output()

    def _const_index(self, s, node):
        if isinstance(s, ast.Slice):
            parts = [None if p is None else O.constant_of(self.value(p)) for p in (s.lower, s.upper, s.step)]
            return slice(*parts)
        try:
            return O.constant_of(self.value(s))
        except LookupError:
            raise self.error("tuple indices must be constants in script code", s) from None

    def sugared_index(self, obj, e):
        k = self._const_index(e.slice, e)
        if isinstance(obj, S.Unrolled):
            return S.Unrolled(obj.items[k]) if isinstance(k, slice) else obj.items[k]
        if isinstance(obj, S.ModuleValue):
            keys = list(obj.module._modules)
            if isinstance(k, str):
                return self.module_attr(obj, k, e)
            if isinstance(k, slice):
                return S.Unrolled([self.module_attr(obj, x, e) for x in keys[k]])
            return self.module_attr(obj, keys[k], e)
        if isinstance(obj, S.PythonValue):
            try:
                return self.sugar(obj.obj[k], e)
            except Exception as err:
                raise self.error(f"cannot index {obj.describe()}: {err}", e) from None
        if isinstance(obj, _KwargsValue):
            return obj.items[k]
        raise self.error(f"'{obj.describe()}' cannot be indexed in script code", e)

    def tensor_index(self, v: Value, s, node) -> Value:
        parts = s.elts if isinstance(s, ast.Tuple) else [s]
        simple = all(isinstance(p, ast.Slice) or _is_int_expr(self, p) or
                     (isinstance(p, ast.Constant) and p.value is None) for p in parts)
        if simple:
            dim = 0
            for p in parts:
                if isinstance(p, ast.Slice):
                    if p.lower is None and p.upper is None and p.step is None:
                        dim += 1
                        continue
                    args = [v, self.const(dim, node)]
                    args += [self.value(x) if x is not None else self.const(None, node, T.NONE)
                             for x in (p.lower, p.upper)]
                    args.append(self.value(p.step) if p.step is not None else self.const(1, node))
                    v = O.emit_ops(self, R.overloads("slice"), args, {}, node, "slice")
                    dim += 1
                elif isinstance(p, ast.Constant) and p.value is None:
                    v = O.emit_ops(self, R.overloads("unsqueeze"), [v, self.const(dim, node)], {}, node)
                    dim += 1
                else:
                    v = O.emit_ops(self, R.overloads("select"), [v, self.const(dim, node), self.value(p)], {}, node)
            return v
        idx = self.index_value(s)
        n = self.insert(K.GETITEM, [v, idx], 1, node=node)
        n.output().type = T.TENSOR
        return n.output()

    def index_value(self, s) -> Value:
        """An index as a run-time value: ints, tensors, None, slices (``prim::slice``) and tuples of them."""
        if isinstance(s, ast.Tuple):
            return self.tuple_of([self.index_value(p) for p in s.elts], s)
        if isinstance(s, ast.Slice):
            parts = [self.value(p) if p is not None else self.const(None, s, T.NONE) for p in (s.lower, s.upper, s.step)]
            return self.scalar_op(K.SLICE, parts, T.OtherType("slice"), s)
        if isinstance(s, ast.Constant) and s.value is Ellipsis:
            return self.scalar_op(K.ELLIPSIS, [], T.OtherType("ellipsis"), s)
        return self.value(s)

    # -- strings ------------------------------------------------------------------
    def expr_JoinedStr(self, e):
        fmt, args = [], []
        for part in e.values:
            if isinstance(part, ast.Constant):
                fmt.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            else:
                conv = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[part.conversion]
                spec = ""
                if part.format_spec is not None:
                    if not all(isinstance(x, ast.Constant) for x in part.format_spec.values):
                        raise self.error("nested f-string format specs are not supported in script code", part)
                    spec = ":" + "".join(str(x.value) for x in part.format_spec.values)
                fmt.append("{" + conv + spec + "}")
                args.append(self.value(part.value))
        return self.scalar_op("aten::format", [self.const("".join(fmt), e), *args], T.STR, e)

    # -- calls ---------------------------------------------------------------------------------------
    def expr_Call(self, e):
        fn = self.expr(e.func)
        if getattr(fn, "compiles_own_arguments", False):  # needs its arguments' source (toolkit.jit.annotate)
            return fn.call_ast(self, e)
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                x = self.expr(a.value)
                args.extend(self.unpack_all(x, a))
            else:
                args.append(self.expr(a))
        kwargs = {}
        for kw in e.keywords:
            if kw.arg is None:
                x = self.expr(kw.value)
                if not isinstance(x, _KwargsValue):
                    raise self.error("** in a call needs a **kwargs parameter in script code", kw)
                kwargs.update(x.mapping)
            else:
                kwargs[kw.arg] = self.expr(kw.value)
        if isinstance(fn, Value):
            if isinstance(fn.type, T.PyObjectType):
                return call_object(self, fn, args, kwargs, e)
            raise self.error(f"'{fn.type}' object is not callable", e.func)
        return fn.call(self, args, kwargs, e)

    def unpack_all(self, x, node) -> list:
        if isinstance(x, S.Unrolled):
            return list(x.items)
        if isinstance(x, S.PythonValue) and isinstance(x.obj, (tuple, list)):
            return [self.sugar(o, node) for o in x.obj]
        v = self.as_value(x, node)
        if isinstance(v.type, T.TupleType):
            return self.tuple_elements(v, node)
        raise self.error(f"cannot expand a {v.type} with * in script code", node)


class _DictMethod(S.Sugared):
    def __init__(self, v: Value, name: str):
        self.v, self.name = v, name

    def call(self, c, args, kwargs, node):
        t = self.v.type
        args = [c.as_value(a, node) for a in args]
        out = {"keys": T.ListType(t.key), "values": T.ListType(t.value),
               "items": T.ListType(T.TupleType([t.key, t.value])), "get": T.OptionalType(t.value)}[self.name]
        if self.name == "get" and len(args) == 2:
            out = unify(t.value, args[1].type) or T.ANY
        return c.scalar_op(f"aten::{self.name}", [self.v, *args], out, node)


class _StrFormat(S.Sugared):
    """``fmt.format(*args)`` with positional arguments: ``aten::format``, as in TorchScript."""

    def __init__(self, v: Value):
        self.v = v

    def call(self, c, args, kwargs, node):
        if kwargs:
            raise c.error("str.format() takes positional arguments only in script code", node)
        return c.scalar_op("aten::format", [self.v, *[c.as_value(a, node) for a in args]], T.STR, node)


class _ListMethod(S.Sugared):
    def __init__(self, v: Value, name: str):
        self.v, self.name = v, name

    def call(self, c, args, kwargs, node):
        args = [c.as_value(a, node) for a in args]
        if self.name == "append" and len(args) == 1:
            t = self.v.type
            if isinstance(t.elem, T.AnyType) or not args[0].type.is_subtype_of(t.elem) and \
                    unify(t.elem, args[0].type) is None:
                raise c.error(f"cannot append a {args[0].type} to a {t}", node)
        out = self.v.type.elem if self.name == "pop" else None
        r = c.scalar_op(f"aten::{self.name}", [self.v, *args], out, node)
        return r if r is not None else c.const(None, node, T.NONE)


class _KwargsValue(S.Sugared):
    """A helper's ``**kwargs``: names to values, known at compile time."""

    def __init__(self, mapping: dict):
        self.mapping = mapping
        self.items = mapping

    def attr(self, c, name, node):
        if name == "get":
            return _KwargsGet(self)
        return super().attr(c, name, node)


class _KwargsGet(S.Sugared):
    def __init__(self, kw: _KwargsValue):
        self.kw = kw

    def call(self, c, args, kwargs, node):
        key = O.constant_of(c.as_value(args[0], node))
        if key in self.kw.mapping:
            return self.kw.mapping[key]
        return args[1] if len(args) > 1 else c.const(None, node, T.NONE)


def _is_int_expr(c, p) -> bool:
    if isinstance(p, ast.Constant):
        return isinstance(p.value, int) and not isinstance(p.value, bool)
    if isinstance(p, (ast.Name, ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Subscript)):
        try:
            if isinstance(p, ast.Name):
                v = c.env.get(p.id)
                if isinstance(v, Value):
                    return isinstance(v.type, T.IntType)
                return isinstance(c.closure.get(p.id, c.globals.get(p.id)), int)
            if isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant):
                return isinstance(p.operand.value, int)
            if isinstance(p, ast.BinOp):
                return _is_int_expr(c, p.left) and _is_int_expr(c, p.right)
        except Exception:
            return False
    return False
