"""``.code`` prints as TorchScript prints it, and archives holding it load back what it says.

Compared with PyTorch's ``.code`` string for string: scripted and traced functions written once for both libraries
(``_scripted(base)``), and graphs written as IR text, parsed by ``torch._C.parse_ir`` and rebuilt with toolkit's IR,
so both printers print the same graph (where a call is inlined, where an effect keeps it a statement, where a long
expression is split). Each is saved and loaded back: same code, same graph, same results.
"""

from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np
import pytest
import torch

import toolkit
from toolkit.jit import Graph, Interpreter
from toolkit.jit.serialization.code import graph_to_code
from toolkit.jit.serialization.code_parser import CodeError, rebuild_from_code

from ...conftest import assert_close
from ..control_flow_graphs import from_torch


def _scripted(base):
    """Functions scripted by ``base`` (torch or toolkit): the same source for both."""

    def view_size(x):
        n = x.size(0)
        m = int(x.sum())
        s = x.size()
        return x.view(n, -1) * m + s[0]

    def scalars(a: int, b: int, c: bool, f: float):
        x = a + 1
        y = (a + b) * (a - b)
        z = -a
        w = not c
        u = a < b
        v = f / 2.0 + a // b
        return x, y, z, w, u, v

    def nested_calls(a: int, b: int):
        return a - (b - 1) + (a * b) * 2 - -a

    def branches(x, c: bool):
        if c:
            y = x * 2
        else:
            y = x - 1
        return y.sum(1)

    def loops(x, n: int):
        acc = x
        for i in range(n):
            acc = acc + i
        return acc

    def containers(l: list[int], d: dict[str, int], s: str):  # noqa: E741 (as the printed code names it)
        t = "{} and {}".format(s, len(l))  # noqa: UP032 (str.format is what the printed code calls)
        b = 3 in l
        e = "a" in d
        k = d.keys()
        g = d.get("a")
        f = float(len(s))
        return t, b, e, k, g, f, l[1], str(len(l))

    def tensor_methods(x, y):
        z = x.matmul(y).relu()
        return z.sum(0) + y.t().sum(), x.dim(), x.numel()

    def raising(x):
        if bool(x.sum() > 100):
            raise ValueError("too large")
        return x.neg()

    def defaults(x, y):
        return x.add(y, alpha=2).sum(1, keepdim=True), x.sum(1), x.add(y)

    return [view_size, scalars, nested_calls, branches, loops, containers, tensor_methods, raising, defaults]


def _traced(base):
    def flatten_add(x):
        return x.view(x.size(0), -1) + x.shape[1]

    def matmul_relu(x, y):
        return x.matmul(y).relu() + y.t().sum()

    def cell(x, hx, cx, w_ih, w_hh):
        gates = x.mm(w_ih.t()) + hx.mm(w_hh.t())
        i, f, g, o = gates.chunk(4, 1)
        cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
        hy = o.sigmoid() * cy.tanh()
        return hy, cy

    def reductions(x):
        return x.sum(1).softmax(0), x.mean(), x.max(1)[0]

    def pool(x):
        return base.nn.functional.max_pool2d(x, 2).relu()

    return [flatten_add, matmul_relu, cell, reductions, pool]


_TRACE_SHAPES = {"flatten_add": [(2, 3, 4)], "matmul_relu": [(3, 4), (4, 5)],
                 "cell": [(3, 10), (3, 20), (3, 20), (80, 10), (80, 20)], "reductions": [(3, 4)],
                 "pool": [(1, 2, 4, 4)]}
_SCRIPTED_ARGS = {
    "view_size": lambda: [toolkit.arange(6.0).reshape(2, 3)],
    "scalars": lambda: [7, 3, True, 1.5],
    "nested_calls": lambda: [7, 3],
    "branches": lambda: [toolkit.arange(6.0).reshape(2, 3), False],
    "loops": lambda: [toolkit.ones(2), 4],
    "containers": lambda: [[1, 2, 3], {"a": 1, "b": 2}, "xyz"],
    "tensor_methods": lambda: [toolkit.arange(6.0).reshape(2, 3), toolkit.arange(12.0).reshape(3, 4)],
    "raising": lambda: [toolkit.ones(3)],
    "defaults": lambda: [toolkit.arange(6.0).reshape(2, 3), toolkit.ones(2, 3)],
}


def _script_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.script(fn)


def _round_trip(f):
    buf = io.BytesIO()
    toolkit.jit.save(f, buf)
    buf.seek(0)
    return toolkit.jit.load(buf)


def _same_results(a, b) -> None:
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same_results(x, y)
    elif isinstance(a, toolkit.Tensor):
        assert_close(b, a, rtol=0, atol=0)
    else:
        assert a == b and type(a) is type(b)


@pytest.mark.parametrize("i", range(len(_scripted(toolkit))), ids=[f.__name__ for f in _scripted(toolkit)])
def test_scripted_code_equals_torchscripts_and_round_trips(i):
    ours = toolkit.jit.script(_scripted(toolkit)[i])
    theirs = _script_torch(_scripted(torch)[i])
    assert ours.code == theirs.code
    loaded = _round_trip(ours)
    assert loaded.code == ours.code and str(loaded.graph) == str(ours.graph)
    args = _SCRIPTED_ARGS[ours.name]
    _same_results(ours(*args()), loaded(*args()))


@pytest.mark.parametrize("i", range(len(_traced(toolkit))), ids=[f.__name__ for f in _traced(toolkit)])
def test_traced_code_equals_torchs_and_round_trips(i):
    f_ours, f_theirs = _traced(toolkit)[i], _traced(torch)[i]
    rng = np.random.default_rng(i)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in _TRACE_SHAPES[f_ours.__name__]]
    ours = toolkit.jit.trace(f_ours, tuple(toolkit.from_numpy(a) for a in arrays))
    theirs = torch.jit.trace(f_theirs, tuple(torch.from_numpy(a) for a in arrays))
    assert ours.code == theirs.code
    loaded = _round_trip(ours)
    assert loaded.code == ours.code and str(loaded.graph) == str(ours.graph)
    args = [toolkit.from_numpy(a) for a in arrays]
    _same_results(ours(*args), loaded(*args))


def test_the_briefs_example_prints_as_torchscript():
    """``int(...)``, ``s[0]``, ``torch.size`` and calls nested into one statement, split where the line grows long."""
    ours = toolkit.jit.script(_scripted(toolkit)[0]).code
    assert ours == (
        "def view_size(x: Tensor) -> Tensor:\n"
        "  n = torch.size(x, 0)\n"
        "  m = int(torch.sum(x))\n"
        "  s = torch.size(x)\n"
        "  _0 = torch.add(torch.mul(torch.view(x, [n, -1]), m), s[0])\n"
        "  return _0\n")


# -- graphs written as IR, printed by both ------------------------------------------------------------------------
def _from_ir(ir: str) -> tuple[Graph, str]:
    """toolkit's IR for a torch graph written as text, and torch's ``.code`` of it."""
    tg = torch._C.parse_ir(ir)
    return from_torch(tg), torch._C._create_function_from_graph("f", tg).code


_EFFECT_BETWEEN = """
graph(%x : Tensor, %l : int[]):
  %c2 : int = prim::Constant[value=2]()
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %c2)
  %n : int = aten::len(%l)
  prim::Print(%n)
  %r : Tensor = aten::add(%m, %x, %one)
  %s : Tensor = aten::add(%r, %one, %one)
  return (%s)
"""

_OUT_OF_ORDER = """
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::relu(%y)
  %r : Tensor = aten::sub(%b, %a, %one)
  return (%r)
"""

_IN_BLOCKS = """
graph(%x : Tensor, %c : bool, %n : int):
  %one : int = prim::Constant[value=1]()
  %t : bool = prim::Constant[value=1]()
  %z : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::relu(%a)
      -> (%b)
    block1():
      %d : Tensor = aten::exp(%x)
      -> (%d)
  %w : Tensor = prim::Loop(%n, %t, %z)
    block0(%i : int, %acc : Tensor):
      %e : Tensor = aten::mul(%acc, %i)
      %f : Tensor = aten::add(%e, %one, %one)
      -> (%t, %f)
  %twice : Tensor = aten::add(%w, %w, %one)
  return (%twice)
"""

_BUILTINS = """
graph(%x : Tensor, %l : int[]):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %s : int = aten::size(%x, %zero)
  %t : Tensor = prim::NumToTensor(%s)
  %i : int = aten::Int(%t)
  %e : int = aten::__getitem__(%l, %one)
  %n : int = aten::len(%l)
  %v : int[] = prim::ListConstruct(%i, %e, %n)
  %r : Tensor = aten::view(%x, %v)
  return (%r)
"""

_IR = {"effect_between": _EFFECT_BETWEEN, "out_of_order": _OUT_OF_ORDER, "in_blocks": _IN_BLOCKS,
       "builtins": _BUILTINS}


@pytest.mark.parametrize("ir", _IR.values(), ids=list(_IR))
def test_ir_graphs_print_as_torchscript_prints_them_and_rebuild(ir):
    g, theirs = _from_ir(ir)
    code = graph_to_code(g, "f")
    assert code == theirs
    before = str(g)
    assert str(rebuild_from_code(g, code)) == before and graph_to_code(g, "f") == code


def test_a_call_is_not_inlined_across_an_effect():
    code = graph_to_code(_from_ir(_EFFECT_BETWEEN)[0], "f")
    # the mul runs before the print: a statement of its own, not written inside the add after it
    assert code.splitlines()[2:] == ["  _0 = torch.mul(x, 2)", "  print(torch.len(l))",
                                     "  return torch.add(torch.add(_0, x), 1)"]
    assert "  _0 = torch.neg(x)\n  return torch.sub(torch.relu(y), _0)\n" in graph_to_code(_from_ir(_OUT_OF_ORDER)[0])


def test_default_arguments_are_left_out_unless_they_differ():
    code = toolkit.jit.script(_scripted(toolkit)[-1]).code
    # alpha=1 and keepdim=False left out; alpha=2 written by name (keyword-only), keepdim=True by position
    assert code.splitlines()[2:] == ["  _0 = torch.sum(torch.add(x, y, alpha=2), [1], True)",
                                     "  _1 = (_0, torch.sum(x, [1]), torch.add(x, y))", "  return _1"]


# -- editing the archived code -----------------------------------------------------------------------------------
def _load_edited(f, old: str, new: str):
    """Save ``f``, replace ``old`` by ``new`` in the archive's code, and load it."""
    buf = io.BytesIO()
    toolkit.jit.save(f, buf)
    src = zipfile.ZipFile(buf)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for n in src.namelist():
            body = src.read(n)
            if n.startswith("archive/code/"):
                text = body.decode()
                assert old in text, text
                body = text.replace(old, new).encode()
            dst.writestr(n, body)
    out.seek(0)
    return toolkit.jit.load(out)


def test_editing_inlined_expressions_changes_what_runs():
    f = toolkit.jit.script(_scripted(toolkit)[0])  # view_size
    x = toolkit.arange(6.0).reshape(2, 3)
    # inside an inlined call: the mul's operand
    loaded = _load_edited(f, "torch.mul(torch.view(x, [n, -1]), m)", "torch.mul(torch.view(x, [n, -1]), 2)")
    assert_close(loaded(x), x * 2 + 2, rtol=0, atol=0)
    # a builtin written as Python: the index, the int() call's operand
    loaded = _load_edited(f, "s[0]", "s[1]")
    assert_close(loaded(x), x * 15 + 3, rtol=0, atol=0)
    loaded = _load_edited(f, "m = int(torch.sum(x))", "m = int(torch.mean(x))")
    assert_close(loaded(x), x * 2 + 2, rtol=0, atol=0)
    # an inlined call edited away is dropped; a call written where the graph had a name is added
    loaded = _load_edited(f, "torch.mul(torch.view(x, [n, -1]), m)", "x")
    assert_close(loaded(x), x + 2, rtol=0, atol=0)
    assert "aten::view" not in str(loaded.graph) and "aten::mul" not in str(loaded.graph)
    loaded = _load_edited(f, "torch.mul(torch.view(x, [n, -1]), m)", "torch.mul(torch.view(x, [n, -1]), torch.neg(x))")
    assert_close(loaded(x), x * -x + 2, rtol=0, atol=0)
    loaded = _load_edited(f, "torch.view(x, [n, -1])", "torch.neg(x)")  # another op in an inlined call's place
    assert_close(loaded(x), -x * 15 + 2, rtol=0, atol=0)


def _add_alpha_2(x, y):
    return toolkit.add(x, y, alpha=2)


def _sum_keepdim(x):
    return toolkit.sum(x, [0], True)


def _add_scaled(x, y):
    return toolkit.add(y, toolkit.mul(x, 2))


def test_an_argument_left_out_in_the_code_takes_its_default_not_the_graphs_constant():
    x, y = toolkit.arange(4.0), toolkit.ones(4)
    loaded = _load_edited(toolkit.jit.script(_add_alpha_2), "torch.add(x, y, alpha=2)", "torch.add(x, y)")
    assert_close(loaded(x, y), x + y, rtol=0, atol=0)
    loaded = _load_edited(toolkit.jit.script(_sum_keepdim), "torch.sum(x, [0], True)", "torch.sum(x, [0])")
    assert loaded(x.reshape(2, 2)).shape == (2,)


def test_a_call_added_in_an_expression_runs_before_the_inlined_calls_written_after_it():
    loaded = _load_edited(toolkit.jit.script(_add_scaled), "torch.add(y, torch.mul(x, 2))",
                          "torch.add(torch.add_(x, 1), torch.mul(x, 2))")
    x = toolkit.ones(2)
    assert_close(loaded(x, toolkit.ones(2)), toolkit.full((2,), 6.0), rtol=0, atol=0)  # x is 2 when mul reads it
    assert_close(x, toolkit.full((2,), 2.0), rtol=0, atol=0)


def test_inlined_expressions_that_do_not_fit_are_refused():
    f = toolkit.jit.script(_scripted(toolkit)[0])
    for old, new, match in [
        ("s[0]", "s.count(0)", r"unsupported expression 's\.count\(0\)' at line 5"),
        ("int(torch.sum(x))", "float(torch.sum(x))", r"expected int\(\.\.\.\) for aten::Int at line 3, got 'float'"),
        ("torch.view(x, [n, -1])", "torch.view(x, [n, secret])", r"unknown name 'secret' at line 5"),
        ("torch.view(x, [n, -1])", "torch.system(x)", r"unknown op 'torch\.system' at line 5"),
    ]:
        with pytest.raises(RuntimeError, match=r"is not a valid archive: archive/code/view_size\.py: " + match):
            _load_edited(f, old, new)


def test_rebuilding_an_ir_graph_from_edited_code():
    g, _ = _from_ir(_IN_BLOCKS)
    code = graph_to_code(g, "f")
    assert "    _0 = torch.relu(torch.neg(x))\n" in code and "    _1 = torch.add(torch.mul(_1, i), 1)\n" in code
    x = toolkit.tensor([0.5, -1.0])
    run = Interpreter(rebuild_from_code(g, code.replace("torch.relu(torch.neg(x))", "torch.relu(torch.abs(x))")))
    expected = x.abs().relu()
    for i in range(3):
        expected = expected * i + 1
    assert_close(run.run([x, True, 3])[0], expected + expected, rtol=0, atol=0)
    with pytest.raises(CodeError, match="unknown name 'q' at line 5"):
        rebuild_from_code(_from_ir(_IN_BLOCKS)[0], code.replace("torch.neg(x)", "torch.neg(q)"))
