"""The function compiler: one Python function's statements into IR, in the caller's graph.

A ``FunctionCompiler`` compiles a function body at the graph's insertion point
with its parameters bound to values; calls to other Python functions compile
them the same way, inline. The result of a call is the function's return value.
"""

from __future__ import annotations

import ast
import builtins
import copy

from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Graph, Node, Value
from . import sugar as S
from .annotations import eval_annotation
from .attributes import Attributes
from .calls import Calls
from .comprehensions import Comprehensions
from .control import ControlFlow, Undefined, assigned_names, contains_return, destroy_block_nodes, exits_in
from .errors import FrontendError, SourceInfo
from .exprs import Expressions
from .fallback import emit_fallback, fallback_return
from .refs import ExceptionRef
from .resolve import sugar_object
from .typing_rules import from_annotation

_UNSUPPORTED = {
    ast.Try: "try/except", ast.With: "with", ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del",
    ast.ClassDef: "class definitions", ast.FunctionDef: "nested function definitions", ast.Import: "import",
    ast.ImportFrom: "import", ast.AsyncFunctionDef: "async def", ast.AsyncFor: "async for",
    ast.AsyncWith: "async with",
}


class Context:
    """What one ``script`` call shares across the functions it compiles inline."""

    def __init__(self, graph: Graph, fallback: bool = False):
        self.graph = graph
        self.fallback = fallback
        self.stack: list = []  # functions being compiled: a repeat is recursion


class FunctionCompiler(ControlFlow, Comprehensions, Attributes, Expressions, Calls):
    """Compiles one function body; ``env`` maps names to IR values or compile-time values."""

    def __init__(self, ctx: Context, fn, fdef: ast.FunctionDef, info: SourceInfo, globals_: dict, closure: dict,
                 self_mv=None, owner: type | None = None):
        self.ctx = ctx
        self.graph = ctx.graph
        self.fn = fn
        self.fdef = fdef
        self.info = info
        self.globals = globals_
        self.closure = closure
        self.self_mv = self_mv
        self.owner = owner
        self.env: dict = {}
        self._stmt: ast.AST | None = fdef

    # -- small services ------------------------------------------------------------------------------
    def error(self, message: str, node) -> FrontendError:
        return self.info.error(message, node if node is not None else self._stmt)

    def insert(self, kind: str, inputs, n_outputs: int = 1, op=None, node=None) -> Node:
        n = self.graph.insert(kind, list(inputs), n_outputs, op)
        n.source = self.info.location(node if node is not None else self._stmt)
        return n

    def const(self, value, node, typ=None) -> Value:
        v = self.graph.insert_constant(value, typ)
        v.node.source = self.info.location(node if node is not None else self._stmt)
        return v

    def sugar(self, obj, node):
        return sugar_object(self, obj, node)

    def as_value(self, x, node) -> Value:
        if isinstance(x, Value):
            return x
        if isinstance(x, bool):
            return self.const(x, node)
        return x.as_value(self, node)

    def lookup(self, name: str, node):
        if name in self.env:
            v = self.env[name]
            if isinstance(v, Undefined):
                raise self.error(v.reason, node)
            return v
        if name in self.closure:
            return self.sugar(self.closure[name], node)
        if name in self.globals:
            return self.sugar(self.globals[name], node)
        if hasattr(builtins, name):
            if name in S.SCRIPT_BUILTINS:
                return S.Builtin(name)
            obj = getattr(builtins, name)
            if isinstance(obj, type) and issubclass(obj, BaseException):
                return S.PythonValue(obj)
            raise self.error(f"Python builtin '{name}' is not supported in script code", node)
        raise self.error(f"undefined value {name}", node)

    # -- the function --------------------------------------------------------------------------------
    def compile_body(self):
        """Compile the body; returns the function's result value (None constant when it returns nothing)."""
        body = self.fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        self.env.setdefault("$exit", False)
        self.stmts(body)
        env = self.env
        if env.get("$raised") is True:
            return self.uninitialized(self.return_type() or T.TENSOR, self.fdef)
        flag = env.get("$retflag", False)
        if flag is True:
            return env["$ret"]
        if flag is False:
            return self.const(None, self.fdef, T.NONE)
        out = self.emit_if(flag, lambda: None, lambda: self.env.__setitem__("$ret", self.const(None, None, T.NONE)),
                           self.fdef)
        return self.env["$ret"] if out else self.const(None, self.fdef, T.NONE)

    def return_type(self):
        ann = self.fdef.returns
        if ann is None:
            return None
        return from_annotation(self.fn.__annotations__.get("return"), self.globals)

    # -- statements ----------------------------------------------------------------------------------
    def stmts(self, body: list) -> None:
        for i, s in enumerate(body):
            rest = body[i + 1:]
            if isinstance(s, ast.If) and rest and (_always_exits(s.body) or _always_exits(s.orelse)):
                self._stmt = s
                cond, refine = self.condition(s.test)
                if isinstance(cond, bool):
                    self.stmts((s.body if cond else s.orelse) + rest)
                else:  # the rest runs only on the side that did not leave: compile it there
                    self.emit_if(cond, lambda s=s, rest=rest: self.stmts(s.body + rest),
                                 lambda s=s, rest=rest: self.stmts(s.orelse + rest), s, refine)
                return
            self.stmt_or_fallback(s)
            if self.env.get("$raised") is True:
                return
            if not exits_in([s], loops=False):
                continue
            ex = self.env.get("$exit", False)
            if ex is True:
                return
            if ex is False:
                continue
            rest = body[i + 1:]
            if rest:
                self.emit_if(ex, lambda: None, lambda rest=rest: self.stmts(rest), s)
            return

    def stmt_or_fallback(self, s: ast.stmt) -> None:
        if not self.ctx.fallback:
            self.stmt(s)
            return
        block, _ = self.graph._insert
        start = len(block.nodes)
        saved = dict(self.env)
        try:
            self.stmt(s)
        except FrontendError as e:
            value_return = isinstance(s, ast.Return) and s.value is not None
            if getattr(e, "_no_fallback", False) or (exits_in([s], loops=False) and not value_return):
                raise
            destroy_block_nodes(block, start)
            self.env = saved
            if value_return:  # the value runs as Python; the return itself stays compiled
                fallback_return(self, s, e.reason)
                return
            emit_fallback(self, s, e.reason)

    def stmt(self, s: ast.stmt) -> None:
        self._stmt = s
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            what = _UNSUPPORTED.get(type(s), type(s).__name__)
            raise self.error(f"Python construct '{type(s).__name__}' ({what}) is not supported in script code", s)
        method(s)

    def stmt_Pass(self, s) -> None:
        pass

    def stmt_Expr(self, s) -> None:
        if isinstance(s.value, ast.Constant):
            return  # a string used as a comment
        self.expr(s.value)

    def stmt_Assign(self, s) -> None:
        value = self.expr(s.value)
        for t in s.targets:
            self.assign(t, value, s)

    def stmt_AnnAssign(self, s) -> None:
        typ = from_annotation(eval_annotation(self, s.annotation), self.globals)
        if typ is None:
            raise self.error("unsupported type annotation", s.annotation)
        if s.value is None:
            raise self.error("a variable annotation needs a value in script code", s)
        value = self.expr(s.value, expected=typ)
        if isinstance(value, Value) and isinstance(typ, T.OptionalType) and not isinstance(value.type, T.OptionalType):
            n = self.insert(K.UNCHECKED_CAST, [value], 1, node=s)
            n.output().type = typ
            value = n.output()
        self.assign(s.target, value, s)

    def stmt_AugAssign(self, s) -> None:
        target = s.target
        cur = self.expr(_as_load(target))
        rhs = self.expr(s.value)
        cur_v = self.as_value(cur, s)
        if isinstance(cur_v.type, T.ListType):
            self.scalar_op("aten::add_.t", [cur_v, self.as_value(rhs, s)], cur_v.type, s)
            if isinstance(target, ast.Name):
                self.env[target.id] = cur_v
            return
        result = self.binop(s.op, cur_v, self.as_value(rhs, s), s, inplace=isinstance(cur_v.type, T.TensorType))
        if isinstance(target, (ast.Subscript, ast.Name, ast.Attribute)):
            self.assign(target, result, s)
        else:
            raise self.error("augmented assignment to this target is not supported", target)

    def stmt_If(self, s) -> None:
        cond, refine = self.condition(s.test)
        if isinstance(cond, bool):
            self.stmts(s.body if cond else s.orelse)
            return
        self.emit_if(cond, lambda: self.stmts(s.body), lambda: self.stmts(s.orelse), s, refine)

    def stmt_Return(self, s) -> None:
        value = self.expr(s.value) if s.value is not None else self.const(None, s, T.NONE)
        self.env["$ret"] = self.as_value(value, s)
        self.env["$retflag"] = True
        self.env["$exit"] = True
        self.env["$brk"] = True

    def stmt_Break(self, s) -> None:
        self.env["$exit"] = True
        self.env["$brk"] = True

    def stmt_Continue(self, s) -> None:
        self.env["$exit"] = True

    def stmt_Raise(self, s) -> None:
        exc, msg = RuntimeError, None
        e = s.exc
        if e is None:
            raise self.error("bare 'raise' is not supported in script code", s)
        if isinstance(e, ast.Call):
            exc = self.exception_class(e.func)
            if e.args:
                msg = self.as_value(self.expr(e.args[0]), s)
        else:
            exc = self.exception_class(e)
        self.emit_raise(exc, msg, s)

    def exception_class(self, e):
        obj = self.expr(e)
        if isinstance(obj, S.PythonValue) and isinstance(obj.obj, type) and issubclass(obj.obj, BaseException):
            return obj.obj
        raise self.error("raise needs an exception class in script code", e)

    def emit_raise(self, exc, msg: Value | None, node) -> None:
        n = self.insert(K.RAISE_EXCEPTION, [msg] if msg is not None else [], 0, node=node)
        n["exception"] = ExceptionRef(exc)
        self.env["$raised"] = True

    def stmt_Assert(self, s) -> None:
        cond, refine = self.condition(s.test)
        msg = None

        def fail():
            m = self.as_value(self.expr(s.msg), s) if s.msg is not None else None
            self.emit_raise(AssertionError, m, s)

        if cond is True:
            return
        if cond is False:
            fail()
            return
        del msg
        self.emit_if(cond, lambda: None, fail, s, refine)
        if refine[0] is not None:
            refine[0]()  # after the assert, the condition holds

    def stmt_While(self, s) -> None:
        cond, _ = self.condition(s.test)
        if cond is False:
            self.stmts(s.orelse)
            return
        cond_v = self.materialize(cond, s)
        trip = self.const(9223372036854775807, s)
        assigned = assigned_names(s.body)
        if contains_return(s.body):
            assigned |= {"$ret", "$retflag"}
        flag = self._track_break(s, assigned)

        def recheck():
            c, _ = self.condition(s.test)
            return self.materialize(c, s)

        def body(idx):
            self.stmts(s.body)
            self._note_break(flag)

        self.emit_loop(s, trip, cond_v, body, assigned, recheck)
        self._loop_else(s, flag)

    def stmt_For(self, s) -> None:
        it = self.expr(s.iter)
        assigned = assigned_names(s.body) | assigned_names([ast.Expr(s.target)]) | _target_names(s.target)
        if contains_return(s.body):
            assigned |= {"$ret", "$retflag"}
        spec = self.iteration(it, s.iter)
        if spec[0] == "unrolled":
            if not self.unrolled_loop(s, spec[1]) and self.env.get("$exit") is not True:
                self.stmts(s.orelse)
            return
        _, trip, element = spec
        flag = self._track_break(s, assigned)

        def body(idx):
            self.assign(s.target, element(idx), s)
            self.stmts(s.body)
            self._note_break(flag)

        self.emit_loop(s, trip, self.const(True, s), body, assigned)
        self._loop_else(s, flag)

    # -- for/else and while/else: the else block runs when the loop ends without break (or return) ---------
    def _track_break(self, s, assigned: set) -> str | None:
        """A carried flag saying whether the loop left early; None when there is no else or no way to leave."""
        if not s.orelse or not exits_in(s.body, loops=False):
            return None
        flag = f"$broke{id(s)}"
        self.env[flag] = self.const(False, s)
        assigned.add(flag)
        return flag

    def _note_break(self, flag: str | None) -> None:
        if flag is not None:
            self.env[flag] = self.env.get("$brk", False)

    def _loop_else(self, s, flag: str | None) -> None:
        if not s.orelse:
            return
        if flag is None:
            self.stmts(s.orelse)
            return
        broke = self.env.pop(flag)
        if isinstance(broke, bool):
            if not broke:
                self.stmts(s.orelse)
            return
        self.emit_if(broke, lambda: None, lambda: self.stmts(s.orelse), s)

    def unrolled_loop(self, s, items: list) -> bool:
        """Compile the body once per item; returns whether the loop surely left early (break, return, raise)."""
        for item in items:
            saved = {k: self.env.get(k) for k in ("$exit", "$brk")}
            self.env["$exit"], self.env["$brk"] = False, False
            self.assign(s.target, item, s)
            self.stmts(s.body)
            brk = self.env["$brk"]
            ret = self.env.get("$retflag", False)
            for k, v in saved.items():
                self.env[k] = v
            if self.env.get("$raised") is True:
                return True
            if ret is True:
                self.env["$exit"] = True
                return True
            if brk is True:
                return True
            if brk is not False:
                raise self.error("break or return depending on run-time values is not supported in a loop over a "
                                 "tuple or ModuleList (the loop is unrolled)", s)
        return False

    # -- assignment ----------------------------------------------------------------------------------
    def assign(self, target, value, node) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Value) and not value.has_debug_name() \
                    and (value.node is None or value.node.kind != K.CONSTANT):
                value.set_debug_name(target.id)
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.error("starred assignment is not supported in script code", target)
            items = self.unpack(value, len(target.elts), node)
            for t, v in zip(target.elts, items):
                self.assign(t, v, node)
        elif isinstance(target, ast.Subscript):
            self.assign_subscript(target, self.as_value(value, node), node)
        elif isinstance(target, ast.Attribute):
            self.assign_attribute(target, value, node)
        else:
            raise self.error(f"cannot assign to {type(target).__name__} in script code", target)

    def assign_subscript(self, target, value: Value, node) -> None:
        obj = self.as_value(self.expr(target.value), node)
        if isinstance(obj.type, T.TensorType):
            idx = self.index_value(target.slice)
            self.scalar_op("aten::setitem_.Tensor", [obj, idx, value], obj.type, node)
            return
        if isinstance(obj.type, T.PyObjectType):  # a fallback's value: Python sets the item at run time
            self.scalar_op("aten::_set_item", [obj, self.index_value(target.slice), value], None, node)
            return
        if isinstance(obj.type, (T.ListType, T.DictType)):
            idx = self.as_value(self.expr(target.slice), node)
            self.scalar_op("aten::_set_item", [obj, idx, value], None, node)
            return
        raise self.error(f"cannot assign to an element of a {obj.type}", target)


def _always_exits(stmts) -> bool:
    """Whether a block surely ends in return, break or continue (so code after its ``if`` needs no flag)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If):
        return _always_exits(last.body) and _always_exits(last.orelse)
    return False


def _as_load(t):
    t = copy.deepcopy(t)
    for n in ast.walk(t):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return t


def _target_names(t) -> set:
    return {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
