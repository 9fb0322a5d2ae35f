"""The registry of the JIT's own kinds (``toolkit.jit.ir.kinds``): every kind the JIT makes or runs is
declared there, effects read from the schemas are what the passes need, and no other module of ``toolkit/jit``
spells a ``prim::`` kind as a string."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import toolkit
import toolkit.nn.functional as F
from toolkit import Tensor
from toolkit.demo import seed_net
from toolkit.jit import Graph
from toolkit.jit.ir import kinds as K
from toolkit.jit.kinds import effects

JIT = Path(toolkit.jit.__file__).parent


def _graphs(g: Graph):
    """``g`` and the graphs its nodes hold (fusion groups' and forks' subgraphs, called methods' graphs)."""
    yield g
    for n in g.all_nodes():
        for a in n.attributes.values():
            sub = getattr(a, "graph", a)
            if isinstance(sub, Graph):
                yield from _graphs(sub)


def _lstm_cell(x: Tensor, hidden: tuple[Tensor, Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor,
               b_hh: Tensor) -> tuple[Tensor, Tensor]:
    hx, cx = hidden
    gates = F.linear(x, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    cy = toolkit.sigmoid(forgetgate) * cx + toolkit.sigmoid(ingate) * toolkit.tanh(cellgate)
    return toolkit.sigmoid(outgate) * toolkit.tanh(cy), cy


def _loop_with_if(x: Tensor, n: int) -> Tensor:
    ys = [x]
    for i in range(n):
        if i % 2 == 0:
            x = x * 2
        else:
            x = F.relu(x - 1)
        ys.append(x)
    print(len(ys))
    return ys[-1] + min(n, 3)


def _double(x: Tensor, k: int = 2) -> Tensor:
    if bool(x.sum() > 100):
        raise ValueError("too large")
    return x * k


def _fork_then_add(x: Tensor) -> Tensor:
    fut = toolkit.jit.fork(_double, x, k=3)
    return toolkit.jit.wait(fut) + x


def _made_graphs() -> list:
    """The graphs the JIT makes of the seed Net, an LSTM cell, a loop with an if and a fork: traced and
    scripted, as printed and as optimized for a run (fusion groups included)."""
    x = toolkit.randn(2, 1, 28, 28)
    net = seed_net().eval()
    ins = [toolkit.randn(3, 10), (toolkit.randn(3, 20), toolkit.randn(3, 20)), toolkit.randn(80, 10),
           toolkit.randn(80, 20), toolkit.randn(80), toolkit.randn(80)]
    v = toolkit.randn(4)
    made = [
        (toolkit.jit.trace(net, x), (x,)),
        (toolkit.jit.script(seed_net()), (x,)),
        (toolkit.jit.trace(_lstm_cell, tuple(ins)), tuple(ins)),
        (toolkit.jit.script(_lstm_cell), tuple(ins)),
        (toolkit.jit.script(_loop_with_if), (v, 3)),
        (toolkit.jit.script(_fork_then_add), (v,)),
    ]
    graphs = []
    for fn, args in made:
        graphs.append(fn.graph)
        if hasattr(fn, "inlined_graph"):
            graphs.append(fn.inlined_graph)
        graphs.append(fn.graph_for(*args).graph)
    return [sub for g in graphs for sub in _graphs(g)]


def test_every_kind_the_jit_makes_is_declared_and_runs():
    kinds = {n.kind for g in _made_graphs() for n in g.all_nodes() if n.op is None}
    assert {K.CONSTANT, K.GET_ATTR, K.LOOP, K.IF, K.LIST_CONSTRUCT, K.FORK, K.FUSION_GROUP, K.PRINT,
            K.RAISE_EXCEPTION, K.TUPLE_UNPACK, K.CALL_METHOD} <= kinds  # the models cover what they should
    assert sorted(kinds - set(K.KINDS)) == []
    assert [k for k in kinds if K.get(k).handler is None] == []


def test_every_handled_kind_is_declared_and_every_declared_kind_has_a_handler():
    assert set(K.HANDLERS) == set(K.KINDS)
    assert set(K.STEP_MAKERS) == {K.FUSION_GROUP}
    assert [name for name, k in K.KINDS.items() if k.handler is None] == []
    with pytest.raises(KeyError, match="prim::Undeclared is not declared"):
        K.set_handler("prim::Undeclared", lambda n, env: None)


def test_constants_are_the_declared_names():
    for const, value in vars(K).items():
        if const.isupper() and isinstance(value, str) and "::" in value:
            assert K.KINDS[value].name is value


def test_effects_come_from_the_schemas():
    assert K.get(K.SET_ATTR).mutating and K.get(K.SET_ATTR).written_args == (0,)
    assert not K.get(K.SET_ATTR).pure and K.get(K.SET_ATTR).has_side_effects
    for pure in (K.CONSTANT, K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT, K.DICT_CONSTRUCT, K.LIST_UNPACK, K.TUPLE_UNPACK,
                 K.GET_ATTR, K.UNCHECKED_CAST, K.TUPLE_INDEX, K.GETITEM, K.LEN, K.MIN, K.MAX, K.ABS, K.SLICE,
                 K.ELLIPSIS):
        assert K.get(pure).pure and not K.get(pure).has_side_effects, pure
    assert not K.get(K.UNINITIALIZED).pure  # each placeholder is its own: never merged or folded
    assert {n for n, k in K.KINDS.items() if k.aliasing} == {
        K.LIST_CONSTRUCT, K.TUPLE_CONSTRUCT, K.DICT_CONSTRUCT, K.LIST_UNPACK, K.TUPLE_UNPACK, K.UNCHECKED_CAST,
        K.GETITEM}
    assert {n for n, k in K.KINDS.items() if k.mutating} == {
        K.SET_ATTR, "aten::append", "aten::add_.t", "aten::extend", "aten::_set_item", "aten::insert", "aten::pop",
        "aten::clear", "aten::setitem_.Tensor"}  # the builtins' schemas annotate the list they write: t[](a!)
    for effectful in (K.PRINT, K.RAISE_EXCEPTION, K.PYTHON_OP, K.CALL_METHOD, K.FORK, K.WAIT):
        assert K.get(effectful).has_side_effects and not K.get(effectful).pure
    assert (K.get(K.IF).blocks, K.get(K.LOOP).blocks) == (2, 1)
    assert {n for n, k in K.KINDS.items() if k.blocks} == {K.IF, K.LOOP}
    assert K.facts("aten::relu") is K.UNKNOWN and K.UNKNOWN.has_side_effects and not K.UNKNOWN.pure


def _list_writer(x: Tensor) -> Tensor:
    xs = [x]
    xs.append(x * 2)
    print(len(xs))
    return xs[0]


def test_passes_read_the_same_effects():
    g = toolkit.jit.script(_list_writer).graph
    by_kind = {n.kind: n for n in g.all_nodes()}
    assert effects.is_pure(by_kind[K.LIST_CONSTRUCT]) and not effects.has_side_effects(by_kind[K.LIST_CONSTRUCT])
    assert effects.is_mutating(by_kind["aten::append"]) and effects.has_side_effects(by_kind["aten::append"])
    assert effects.has_side_effects(by_kind[K.PRINT]) and not effects.is_pure(by_kind[K.PRINT])
    assert effects.is_foldable_function(by_kind["aten::len"])
    assert not effects.is_foldable_function(by_kind["aten::append"])  # it writes its list
    aliases = effects.AliasSets(g)
    assert aliases.is_mutated(g.inputs[0])  # the list holds x, and append writes the list
    out = toolkit.jit.script(_list_writer)(toolkit.ones(2))
    np.testing.assert_array_equal(out.numpy(), np.ones(2))


def test_the_facts_the_tables_held():
    def where(fact: str) -> set:
        return {n for n, k in K.KINDS.items() if getattr(k, fact)}

    assert where("leaf_for_autodiff") == {K.GET_ATTR, K.TUPLE_UNPACK, K.LIST_UNPACK, K.GETITEM}
    assert where("opaque_under_grad") == {K.PYTHON_OP, K.CALL_MODULE, K.TENSOR_METHOD, K.CALL_METHOD}
    assert where("safe_to_rerun") == {K.GETITEM, K.LEN, K.LIST_UNPACK, K.TUPLE_UNPACK, K.GET_ATTR, K.TUPLE_INDEX}
    assert where("container_read") == {K.GETITEM, K.LIST_UNPACK, K.TUPLE_UNPACK, K.TUPLE_INDEX}
    assert where("python_only") == {K.PYTHON_OP, K.CALL_MODULE, K.MODULE_CONSTANT, K.TENSOR_METHOD,
                                    K.NAMED_TUPLE_CONSTRUCT}
    assert where("printed_inline") == {K.CONSTANT, K.LIST_CONSTRUCT, K.GET_ATTR}
    assert where("printed_as_syntax") == {K.TUPLE_CONSTRUCT, K.DICT_CONSTRUCT, K.LIST_UNPACK, K.TUPLE_UNPACK,
                                          K.CALL_METHOD, K.SET_ATTR, K.IF, K.LOOP}
    assert {n: k.attributes for n, k in K.KINDS.items() if k.attributes} == {
        K.CONSTANT: ("value",), K.GET_ATTR: ("name",), K.SET_ATTR: ("name",), K.RAISE_EXCEPTION: ("exception",),
        K.FORK: ("Subgraph",)}


def _docstrings(tree: ast.AST) -> set:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _kind_literals(path: Path) -> list:
    """The ``prim::`` kind names ``path`` spells as string literals: a whole string ``"prim::X"`` or an
    f-string built on ``"prim::"``. Docstrings, comments and messages that mention a kind in their text are not."""
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    in_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant) and first.value == "prim::":
                found.append((node.lineno, "f-string on 'prim::'"))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
              and id(node) not in in_fstrings and node.value.startswith("prim::") and " " not in node.value):
            found.append((node.lineno, node.value))
    return found


def test_no_prim_kind_is_spelled_outside_the_registry():
    left = {}
    for path in sorted(JIT.rglob("*.py")):
        if path == JIT / "ir" / "kinds.py":
            continue
        found = _kind_literals(path)
        if found:
            left[str(path.relative_to(JIT))] = found
    assert left == {}
