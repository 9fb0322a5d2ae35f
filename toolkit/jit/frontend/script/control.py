"""Structured control flow: ``prim::If`` with values merged from both branches, ``prim::Loop`` with carried
values, and the flags that turn ``break``/``continue``/``return`` into that structure.

The environment maps names to IR values or compile-time values; the special
names ``$exit`` (the rest of this block is skipped), ``$brk`` (leave the loop),
``$retflag``/``$ret`` (the function returned, and what) and ``$raised`` (this
path always raises) hold Python bools while they are known at compile time and
IR values once they depend on run-time data.
"""

from __future__ import annotations

import ast

from ...ir import kinds as K
from ...ir import types as T
from ...ir.graph import Block, Node, Value
from .typing_rules import UNINITIALIZED, unify

SPECIAL = ("$exit", "$brk", "$retflag", "$ret")


class Undefined:
    """A name that is bound on some paths only: reading it is a compile error saying why."""

    def __init__(self, reason: str):
        self.reason = reason


def destroy_node(n: Node) -> None:
    """Remove a node and everything nested in it (innermost and last first)."""
    for b in reversed(n.blocks):
        destroy_block_nodes(b)
        b.outputs = []
    n.destroy()


def destroy_block_nodes(b: Block, start: int = 0) -> None:
    for m in reversed(b.nodes[start:]):
        destroy_node(m)


def exits_in(stmts, loops: bool = False) -> bool:
    """Whether ``return`` (or, outside nested loops, ``break``/``continue``) occurs in these statements."""
    for s in stmts:
        for node in _walk_no_defs(s, loops):
            if isinstance(node, ast.Return):
                return True
            if isinstance(node, (ast.Break, ast.Continue)) and not loops:
                return True
    return False


def _walk_no_defs(s, in_loop):
    stack = [(s, False)]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Break, ast.Continue)) and nested:
            continue
        yield node
        is_loop = isinstance(node, (ast.For, ast.While))
        orelse = node.orelse if is_loop else []
        for child in ast.iter_child_nodes(node):
            stack.append((child, (nested or is_loop) if not any(child is o for o in orelse) else nested))


def contains_return(stmts) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in _walk_no_defs(s, False))


def assigned_names(stmts) -> set:
    """Names a block of statements binds (assignment targets, loop targets), not counting nested functions."""
    out = set()
    for s in stmts:
        for node in _walk_no_defs(s, False):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, (ast.comprehension,)):
                pass
    return out


class ControlFlow:
    """Mixin of the function compiler: emits If and Loop nodes and merges environments."""

    # -- helpers the mixin needs from the compiler: insert, const, error, env, graph ---------------
    def materialize(self, x, node) -> Value:
        """A flag held as a Python bool becomes a constant value here; values pass through."""
        if isinstance(x, bool):
            return self.const(x, node)
        return x

    def uninitialized(self, typ: T.JitType, node) -> Value:
        n = self.insert(K.UNINITIALIZED, [], 1, node=node)
        n.output().type = typ
        return n.output()

    # -- if ------------------------------------------------------------------------------------------
    def emit_if(self, cond: Value, then_fn, else_fn, node, refine=(None, None)) -> list:
        """Compile both branches into a ``prim::If`` and merge what they bind; returns the If's outputs."""
        n = self.insert(K.IF, [cond], 0, node=node)
        base = self.env
        branches = []
        for fn, ref in ((then_fn, refine[0]), (else_fn, refine[1])):
            b = n.add_block()
            self.env = dict(base)
            with self.graph.inserting_at_end(b):
                if ref:
                    ref()
                fn()
            branches.append((b, self.env))
        self.env = base
        self._merge(n, base, branches, node)
        return list(n.outputs)

    def _one_sided(self, n: Node, name: str, v, live_b, dead_b, node):
        """A binding only one branch keeps: an output of ``n`` (the dead branch yields an uninitialized value)."""
        if not isinstance(v, Value):
            return v
        with self.graph.inserting_at_end(dead_b):
            dead_b.register_output(self.uninitialized(v.type, node))
        live_b.register_output(v)
        o = n.add_output(v.type)
        _name(o, name)
        return o

    def _merge(self, n: Node, base: dict, branches: list, node) -> None:
        (bt, et), (bf, ef) = branches
        raised_t, raised_f = et.get("$raised") is True, ef.get("$raised") is True
        if raised_t and raised_f:
            base["$raised"] = True
            return
        if raised_t or raised_f:  # the raising side never continues: keep the other side's bindings
            live_b, live_env, dead_b = (bf, ef, bt) if raised_t else (bt, et, bf)
            for name in sorted(set(live_env) | set(base)):
                v = live_env.get(name)
                if v is base.get(name) or name == "$raised":
                    continue
                base[name] = self._one_sided(n, name, v, live_b, dead_b, node)
            return
        # a side that surely returned leaves nothing live but the return value (break/continue do: the loop
        # carries their values on)
        exit_t = et.get("$retflag") is True and base.get("$retflag") is not True
        exit_f = ef.get("$retflag") is True and base.get("$retflag") is not True
        names = sorted(k for k in set(et) | set(ef) if et.get(k) is not base.get(k) or ef.get(k) is not base.get(k))
        for name in names:
            if name == "$raised":
                continue
            vt, vf = et.get(name), ef.get(name)
            if isinstance(vt, bool) and isinstance(vf, bool) and vt == vf:
                base[name] = vt
                continue
            special = name.startswith("$")
            if not special and (exit_t != exit_f):  # one side left the block: the other side's binding wins
                live, (lb, db) = (vf, (bf, bt)) if exit_t else (vt, (bt, bf))
                base[name] = self._one_sided(n, name, live, lb, db, node)
                continue
            missing_t = vt is None or isinstance(vt, Undefined)
            missing_f = vf is None or isinstance(vf, Undefined)
            if missing_t or missing_f:
                if missing_t and missing_f:
                    base[name] = vt
                    continue
                if not special and not (missing_t and exit_t) and not (missing_f and exit_f):
                    side = "true" if missing_t else "false"
                    base[name] = Undefined(f"'{name}' is not defined in the {side} branch")
                    continue
            if (vt is not None and not isinstance(vt, (Value, bool, Undefined))) or \
                    (vf is not None and not isinstance(vf, (Value, bool, Undefined))):
                if vt is vf:
                    base[name] = vt
                    continue
                raise self.error(f"'{name}' refers to different compile-time objects in the two branches", node)
            vals = []
            for v, b in ((vt, bt), (vf, bf)):
                with self.graph.inserting_at_end(b):
                    vals.append(None if v is None or isinstance(v, Undefined) else self.materialize(v, node))
            known = [v for v in vals if v is not None]
            typ = known[0].type
            for v in known[1:]:
                u = unify(typ, v.type)
                if u is None:
                    raise self.error(f"Type mismatch: '{name}' is {vals[0].type} in the true branch and "
                                     f"{vals[1].type} in the false branch", node)
                typ = u
            for v, b in zip(vals, (bt, bf)):
                if v is None:
                    with self.graph.inserting_at_end(b):
                        v = self.uninitialized(typ, node)
                b.register_output(v)
            o = n.add_output(typ)
            _name(o, name)
            base[name] = o

    # -- loops ---------------------------------------------------------------------------------------
    def emit_loop(self, node, trip: Value, cond: Value, body_fn, assigned: set, recheck=None) -> None:
        """A ``prim::Loop``: ``body_fn(index)`` compiles one iteration; names in ``assigned`` that exist
        before the loop are carried. Types of carried values are widened until the body agrees with them."""
        base = self.env
        returns = "$ret" in assigned
        if returns:
            base["$retflag"] = self.materialize(base.get("$retflag", False), node)
            if not isinstance(base.get("$ret"), Value):
                base["$ret"] = self.uninitialized(UNINITIALIZED, node)
        carried = [k for k in sorted(assigned) if isinstance(base.get(k), Value)]
        types = {k: base[k].type for k in carried}
        for _attempt in range(5):
            n = self.insert(K.LOOP, [trip, cond] + [base[k] for k in carried], 0, node=node)
            b = n.add_block()
            idx = b.add_input(None, T.INT)
            env = dict(base)
            for k in carried:
                env[k] = b.add_input(None if k.startswith("$") else k, types[k])
            env["$exit"], env["$brk"] = False, False
            env.pop("$raised", None)
            self.env = env
            with self.graph.inserting_at_end(b):
                body_fn(idx)
                env = self.env
                b.register_output(self._next_condition(env, recheck, node, cond))
                outs = []
                for k in carried:
                    v = env.get(k)
                    if env.get("$raised") is True:
                        v = self.uninitialized(types[k], node)
                    if isinstance(v, bool):
                        v = self.const(v, node)
                    if not isinstance(v, Value):
                        raise self.error(f"'{k}' is not defined on every path through the loop body", node)
                    outs.append(v)
                    b.register_output(v)
            widened = {}
            for k, v in zip(carried, outs):
                u = unify(types[k], v.type)
                if u is None:
                    raise self.error(f"Type mismatch: loop-carried '{k}' is {types[k]} before the loop and "
                                     f"{v.type} after an iteration", node)
                widened[k] = u
            if widened == types:
                break
            self.env = base
            destroy_node(n)
            types = widened
        else:
            raise self.error("loop-carried types do not settle", node)
        self.env = base
        for k in carried:
            if base[k].node is not None and base[k].node.kind == K.UNINITIALIZED:
                base[k].type = types[k]
            o = n.add_output(types[k])
            _name(o, k)
            base[k] = o
        for k in assigned - set(carried) - set(SPECIAL):
            if k not in base:
                base[k] = Undefined(f"'{k}' is defined only inside a loop body")
        if returns:
            rf = base["$retflag"]
            base["$exit"] = rf
            brk = base.get("$brk", False)
            base["$brk"] = rf if brk is False else (True if brk is True else
                                                    self.scalar_op("aten::__or__.bool", [brk, rf], T.BOOL, node))

    def _next_condition(self, env: dict, recheck, node, cond: Value) -> Value:
        brk = env.get("$brk", False)
        if recheck is None:
            if brk is False:
                return cond
            if brk is True:
                return self.const(False, node)
            return self.scalar_op("aten::__not__", [brk], T.BOOL, node)
        if brk is False:
            return recheck()
        if brk is True:
            return self.const(False, node)
        out = []

        def then():
            out.append(self.const(False, node))

        def other():
            out.append(recheck())

        n = self.insert(K.IF, [brk], 0, node=node)
        for fn in (then, other):
            b = n.add_block()
            with self.graph.inserting_at_end(b):
                fn()
                b.register_output(out[-1])
        return n.add_output(T.BOOL)


def _name(v: Value, name: str) -> None:
    if not name.startswith("$"):
        v.set_debug_name(name)
