"""toolkit.jit.load runs what the archive's ``.code`` text says, parsed with ``ast`` against an allow-list,
control flow (``if``/``for``/``while`` blocks) included."""

import io
import zipfile

import numpy as np
import pytest

import toolkit
import toolkit.nn as nn
from toolkit.jit import Graph, Interpreter, load, save
from toolkit.jit.serialization.code import graph_to_code
from toolkit.jit.serialization.code_parser import CodeError, rebuild_from_code

from ...conftest import assert_close
from ..control_flow_graphs import (
    branchy,
    breaking_loop,
    from_torch,
    if_without_outputs,
    loop_inside_if,
    script,
    two_carried_with_nested_if,
    while_loop,
)


def _fn(x, y):
    return (2 * x + y).sin() * y.mean(0, keepdim=True)


def _archive(obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _edit_code(data: bytes, edit, entry: str = "archive/code/_fn.py") -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name == entry:
                new = edit(body.decode())
                assert new != body.decode()
                body = new.encode()
            dst.writestr(name, body)
    return out.getvalue()


def _load_bytes(data: bytes):
    return load(io.BytesIO(data))


@pytest.fixture
def xy():
    toolkit.manual_seed(0)
    return toolkit.randn(3, 4), toolkit.randn(3, 4)


def test_editing_the_op_changes_what_runs(xy):
    x, y = xy
    data = _archive(toolkit.jit.trace(_fn, xy))
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("_1 = torch.mul(_0, ", "_1 = torch.add(_0, ")))
    expected = (2 * x + y).sin() + y.mean(0, keepdim=True)
    assert_close(lf(x, y), expected, accum=3)  # (a mean over 3 rows)
    assert not np.allclose(lf(x, y).numpy(), _fn(x, y).numpy())
    assert "aten::add(%" in str(lf.graph).splitlines()[-2]


def test_editing_a_constant_and_wiring_changes_what_runs(xy):
    x, y = xy
    data = _archive(toolkit.jit.trace(_fn, xy))
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("torch.mul(x, 2)", "torch.mul(x, 3)")))
    assert_close(lf(x, y), (3 * x + y).sin() * y.mean(0, keepdim=True), accum=3)
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("torch.mean(y, [0]", "torch.mean(x, [1]")))
    assert_close(lf(x, y), (2 * x + y).sin() * x.mean(1, keepdim=True), accum=4)
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("return _1", "return _0")))
    assert_close(lf(x, y), (2 * x + y).sin())


def test_untouched_code_round_trips_exactly(xy):
    sf = toolkit.jit.trace(_fn, xy)
    lf = _load_bytes(_archive(sf))
    assert str(lf.graph) == str(sf.graph) and lf.code == sf.code
    toolkit.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    sm = toolkit.jit.trace(m, toolkit.randn(2, 4))
    lm = _load_bytes(_archive(sm))  # archives hold the flat graph: the submodule calls inlined
    assert str(lm.graph) == str(sm.inlined_graph) and lm.code == graph_to_code(sm.inlined_graph)


_MUL = "torch.mul(_0, torch.mean(y, [0], True))"  # the traced _fn's last call, the mean inlined in it


@pytest.mark.parametrize("old,new,match", [
    (_MUL, "torch.system(_0, _0)", r"unknown op 'torch\.system'"),
    (_MUL, "os.system(_0)", r"unknown op 'os\.system'"),
    (_MUL, "__import__('os')", r"unknown op '__import__'"),
    (_MUL, "torch.mul(_0, secret)", r"unknown name 'secret'"),
    (_MUL, "torch.mul(open('f'), torch.mean(y, [0], True))", r"unsupported expression \"open\('f'\)\""),
    (_MUL, "torch.mul(_0, open('f'))", r"unknown op 'open'"),  # where the graph's call is inlined
    (_MUL, "_0 if _0 else _0", r"expected an op call"),
    ("torch.mul(x, 2)", "torch.mul(x, 2, 5, 6, 7)", r"no overload of torch\.mul"),
    ("torch.mean(y, [0], True)", "torch.mean(y, [0], secret)", r"unknown name 'secret'"),  # inside an inlined call
    ("torch.mean(y, [0], True)", "torch.system(y)", r"unknown op 'torch\.system'"),
    ("  return _1", "  import os\n  return _1", r"unexpected statement 'import os'"),
    ("  _1 = " + _MUL, "  import os", r"expected an assignment for aten::mul"),
    ("  return _1", "  return _1 +", r"does not parse"),
])
def test_unknown_names_and_constructs_are_rejected(xy, old, new, match):
    data = _archive(toolkit.jit.trace(_fn, xy))
    with pytest.raises(RuntimeError, match=r"<BytesIO> is not a valid archive: archive/code/_fn\.py: .*" + match):
        _load_bytes(_edit_code(data, lambda s: s.replace(old, new)))


def test_missing_code_entry_is_an_error(xy):
    data = _archive(toolkit.jit.trace(_fn, xy))
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            if not name.startswith("archive/code/"):
                dst.writestr(name, src.read(name))
    with pytest.raises(RuntimeError, match=r"no archive/code/_fn\.py in the archive"):
        load(io.BytesIO(out.getvalue()))


def test_rebuild_refuses_a_second_definition(xy):
    g = toolkit.jit.trace(_fn, xy).graph.copy()
    with pytest.raises(CodeError, match="exactly one function definition"):
        rebuild_from_code(g, "def f(x, y):\n  return x\ndef g():\n  return 1\n")
    with pytest.raises(CodeError, match="takes 1 inputs, the graph 2"):
        rebuild_from_code(g, "def f(x):\n  return x\n")


# -- control flow ------------------------------------------------------------------------------------
_CF_GRAPHS = {
    "branchy": lambda: from_torch(script(branchy)),
    "two_carried_with_nested_if": two_carried_with_nested_if,
    "loop_inside_if": loop_inside_if,
    "while_loop": while_loop,
    "breaking_loop": breaking_loop,
    "if_without_outputs": if_without_outputs,
}


@pytest.mark.parametrize("make", _CF_GRAPHS.values(), ids=list(_CF_GRAPHS))
def test_control_flow_code_rebuilds_the_same_graph(make):
    g = make()
    code = graph_to_code(g, "f")
    before = str(g)
    assert rebuild_from_code(g, code) is g
    g.verify()
    assert str(g) == before and graph_to_code(g, "f") == code


def _rebuilt(make, old: str, new: str):
    g = make()
    code = graph_to_code(g, "f")
    assert old in code
    return Interpreter(rebuild_from_code(g, code.replace(old, new)))


def _two_carried_ref(x, y, c, trips=3, swap=False):
    a, b = x, y
    for _ in range(trips):
        if c:
            a, b = b * a, a
        else:
            a, b = (b + a, a) if swap else (a, b + a)
    return a - b


def test_editing_a_loop_or_a_branch_changes_what_runs():
    x, y = toolkit.tensor([1.0, -2.0]), toolkit.tensor([0.5, 3.0])
    for c in (True, False):
        run = _rebuilt(two_carried_with_nested_if, "range(3)", "range(5)").run
        np.testing.assert_allclose(run([x, y, c])[0].numpy(), _two_carried_ref(x, y, c, 5).numpy())
        run = _rebuilt(two_carried_with_nested_if, "_0, _1 = a, torch.add(b, a)", "_0, _1 = torch.add(b, a), a").run
        np.testing.assert_allclose(run([x, y, c])[0].numpy(), _two_carried_ref(x, y, c, swap=True).numpy())
        run = _rebuilt(two_carried_with_nested_if, "  if c:", "  if True:").run
        np.testing.assert_allclose(run([x, y, c])[0].numpy(), _two_carried_ref(x, y, True).numpy())
    # the while loop's body: s accumulates k twice
    x, lim = toolkit.tensor(0.0), toolkit.tensor(3.0)
    run = _rebuilt(while_loop, "_2 = torch.add(s, _1)", "_2 = torch.add(s, _1, alpha=2)").run
    assert run([x, lim])[0].item() == 2 * (1 + 2 + 3)


def _tamper(make, old: str, new: str):
    g = make()
    code = graph_to_code(g, "f")
    assert old in code, code
    rebuild_from_code(g, code.replace(old, new))


_BROKEN = [
    # unbalanced blocks
    (two_carried_with_nested_if, "    else:\n      _0, _1 = a, torch.add(b, a)\n", "",
     r"the if at line 7 has no else block, but prim::If has 2 output\(s\)"),
    (two_carried_with_nested_if, "    a, b = _0, _1\n", "  a, b = _0, _1\n",
     r"the body of the loop at line 6 does not assign the next carried values \(a, b\) at its end"),
    (loop_inside_if, "      _0 = torch.mul(_0, 0.5)\n", "      pass\n",
     r"the body of the loop at line 6 does not assign the next carried values \(_0\) at its end"),
    (while_loop, "    _1 = torch.add(k, 1.)\n", "    if c:\n      pass\n",
     r"expected an assignment for aten::add at line 7, got 'if c:'"),
    (while_loop, "    _1 = torch.add(k, 1.)\n    _2 = torch.add(s, _1)\n    _0, k, s = torch.lt(_1, limit), _1, _2\n",
     "    pass\n", r"the body of the loop at line 6 has fewer statements than the graph \(missing aten::add\)"),
    (while_loop, "    _2 = torch.add(s, _1)\n", "",
     r"expected an op call for aten::add at line 8, got '\(torch\.lt\(_1, limit\), _1, _2\)'"),
    (if_without_outputs, "  else:\n    _0 = torch.neg(x)\n", "",
     r"the if at line 7 has no else block, but prim::If has statements in its second block"),
    (two_carried_with_nested_if, "      _0, _1 = torch.mul(b, a), a\n", "    _0, _1 = torch.mul(b, a), a\n",
     r"does not parse \(expected an indented block after 'if' statement on line 7 at line 8\)"),
    # blocks that do not assign their outputs
    (two_carried_with_nested_if, "      _0, _1 = a, torch.add(b, a)\n", "      pass\n",
     r"the else block of the if at line 7 does not assign the 2 output\(s\) of prim::If \(_0, _1\) at its end"),
    (two_carried_with_nested_if, "_0, _1 = a, torch.add(b, a)", "_0, _5 = a, torch.add(b, a)",
     r"the else block of the if at line 7 must end by assigning the 2 output\(s\) of prim::If \(_0, _1\), "
     r"got '_0, _5 = \(a, torch\.add\(b, a\)\)' at line 10"),
    (two_carried_with_nested_if, "_0, _1 = torch.mul(b, a), a", "_0 = torch.mul(b, a)",
     r"must end by assigning the 2 output\(s\) of prim::If \(2 name\(s\)\), got '_0 = torch\.mul\(b, a\)' at line 8"),
    (two_carried_with_nested_if, "    a, b = _0, _1\n", "    b, a = _0, _1\n",
     r"the body of the loop at line 6 must end by assigning the next carried values \(a, b\)"),
    (while_loop, "    _0, k, s = torch.lt(_1, limit), _1, _2\n", "",
     r"the body of the loop at line 6 does not assign the next condition and carried values \(_0, k, s\) at its end"),
    (loop_inside_if, "    z = _0\n", "    z = _0\n    z = _0\n", r"unexpected statement 'z = _0' at line 8"),
    # constructs outside what the printer writes
    (two_carried_with_nested_if, "range(3)", "enumerate(3)",
     r"expected 'for \.\.\. in range\(\.\.\.\):' for prim::Loop at line 6, got 'for j in enumerate\(3\):'"),
    (two_carried_with_nested_if, "for j in range(3):", "while j:", r"expected 'for \.\.\. in range"),
    (two_carried_with_nested_if, "    a, b = _0, _1\n", "    a, b = _0, _1\n  else:\n    pass\n",
     r"expected 'for \.\.\. in range\(\.\.\.\):' for prim::Loop at line 6"),
    (two_carried_with_nested_if, "    a, b = _0, _1\n", "    break\n    a, b = _0, _1\n",
     r"unexpected statement 'break' at line 11"),
    (two_carried_with_nested_if, "  a = x\n", "  a, q = x, y\n",
     r"expected 'name = value' for the initial value of a loop-carried value of prim::Loop at line 4"),
    (two_carried_with_nested_if, "torch.sub(a, b", "torch.sub(_2, b", r"unknown name '_2' at line 12"),
    (two_carried_with_nested_if, "torch.mul(b, a), a", "torch.mul(b, _7), a", r"unknown name '_7' at line 8"),
    (while_loop, "while _0:", "while _1:", r"the while loop at line 6 must test '_0', got '_1'"),
    (while_loop, "while _0:", "for i in range(3):", r"expected 'while _0:' for prim::Loop at line 6"),
    (while_loop, "torch.add(k, 1.", "torch.add(_9, 1.", r"unknown name '_9' at line 7"),
    (while_loop, "  _0 = torch.lt(x, limit)\n", "",
     r"expected 'name = value' for the loop's condition of prim::Loop at line 5, got 'while _0:'"),
    (breaking_loop, "    if not _0:\n      break\n", "",
     r"the body of the loop at line 6 must start with 'if not _0: break', got '_1 = torch\.add\(torch\.mul\(s, 2\), i\)'"),
    (loop_inside_if, "z = None", "z = torch.secret()", r"unsupported expression 'torch\.secret\(\)' at line 10"),
    (loop_inside_if, "z = None", "z = open('f')", r"unsupported expression \"open\('f'\)\" at line 10"),
    (loop_inside_if, "    z = _0\n", "    try:\n      z = _0\n    finally:\n      pass\n",
     r"the if block of the if at line 4 must end by assigning the 1 output\(s\) of prim::If \(1 name\(s\)\), "
     r"got 'try:' at line 8"),
]


@pytest.mark.parametrize("make,old,new,match", _BROKEN)
def test_bad_control_flow_code_names_the_line(make, old, new, match):
    with pytest.raises(CodeError, match=match):
        _tamper(make, old, new)


def test_a_returned_constant_round_trips():
    g = Graph()
    g.add_input("x")
    g.register_output(g.insert_constant(2))
    code = graph_to_code(g, "f")
    assert code.endswith("  return 2\n")
    before = str(g)
    assert str(rebuild_from_code(g, code)) == before
    assert Interpreter(rebuild_from_code(g, code.replace("return 2", "return 3"))).run([toolkit.ones(1)]) == [3]
