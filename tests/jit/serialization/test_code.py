"""``.code`` of graphs with control flow: ``prim::If`` and ``prim::Loop`` print as Python, in TorchScript's shape."""

import re

import pytest

from toolkit.jit import Graph
from toolkit.jit.serialization.code import graph_to_code, loop_form
from toolkit.jit.serialization.code_parser import rebuild_from_code

from ..control_flow_graphs import (
    MAX_TRIP,
    branchy,
    breaking_loop,
    from_torch,
    if_without_outputs,
    loop,
    loop_inside_if,
    op,
    script,
    two_carried_with_nested_if,
    while_loop,
)

BRANCHY = script(branchy)


def _skeleton(code: str) -> list:
    """Control-flow lines as (indent, keyword)."""
    out = []
    for line in code.splitlines():
        m = re.match(r"( *)(if|else|for|while)\b", line)
        if m:
            out.append((len(m.group(1)), m.group(2)))
    return out


def test_control_flow_prints_in_torchscripts_shape():
    ours = graph_to_code(from_torch(BRANCHY), "branchy")
    assert _skeleton(ours) == _skeleton(BRANCHY.code)
    assert _skeleton(ours) == [(2, "if"), (2, "else"), (2, "for"), (2, "for"), (4, "if"), (4, "else"), (2, "if"),
                               (4, "for"), (2, "else"), (2, "while")]
    # the two-value loop closes its body the way TorchScript does: one simultaneous assignment
    assert "    a, b = a1, b0\n" in ours and "    a, b = a1, b0\n" in BRANCHY.code
    assert ours == BRANCHY.code  # names, inlined calls and all
    assert "  for j in range(3):\n" in ours and "  for j in range(3):\n" in BRANCHY.code


def test_loop_carried_values_and_nested_if_golden():
    assert graph_to_code(two_carried_with_nested_if(), "f") == (
        "def f(x: Tensor,\n"
        "    y: Tensor,\n"
        "    c: bool) -> Tensor:\n"
        "  a = x\n"
        "  b = y\n"
        "  for j in range(3):\n"
        "    if c:\n"
        "      _0, _1 = torch.mul(b, a), a\n"
        "    else:\n"
        "      _0, _1 = a, torch.add(b, a)\n"
        "    a, b = _0, _1\n"
        "  return torch.sub(a, b)\n")


def test_loop_inside_if_and_optional_output_golden():
    assert graph_to_code(loop_inside_if(), "f") == (
        "def f(x: Tensor,\n"
        "    n: int,\n"
        "    c: bool) -> Optional[Tensor]:\n"
        "  if c:\n"
        "    _0 = x\n"
        "    for k in range(n):\n"
        "      _0 = torch.mul(_0, 0.5)\n"
        "    z = _0\n"
        "  else:\n"
        "    z = None\n"
        "  return z\n")


def test_while_and_breaking_loops_golden():
    assert graph_to_code(while_loop(), "f") == (
        "def f(x: Tensor,\n"
        "    limit: Tensor) -> Tensor:\n"
        "  k = x\n"
        "  s = x\n"
        "  _0 = torch.lt(x, limit)\n"
        "  while _0:\n"
        "    _1 = torch.add(k, 1.)\n"
        "    _2 = torch.add(s, _1)\n"
        "    _0, k, s = torch.lt(_1, limit), _1, _2\n"
        "  return s\n")
    assert graph_to_code(breaking_loop(), "f") == (
        "def f(x: Tensor,\n"
        "    n: int,\n"
        "    limit: Tensor) -> Tensor:\n"
        "  s = x\n"
        "  _0 = True\n"
        "  for i in range(n):\n"
        "    if not _0:\n"
        "      break\n"
        "    _1 = torch.add(torch.mul(s, 2), i)\n"
        "    _0, s = torch.lt(_1, limit), _1\n"
        "  return s\n")


def _bare_loop(trip, cond=True, body_cond=True, use_counter=False) -> Graph:
    g = Graph()
    x = g.add_input("x")
    n, body = loop(g, g.insert_constant(trip), g.insert_constant(cond), [x])
    with g.inserting_at_end(body):
        y = op(g, "add", body.inputs[1], body.inputs[0]) if use_counter else body.inputs[1]
        body.register_output(g.insert_constant(body_cond))
        body.register_output(y)
    g.register_output(n.output())
    g.verify()
    return g


@pytest.mark.parametrize("trip,cond,body_cond,use_counter,form", [
    (3, True, True, False, "for"),
    (3, True, True, True, "for"),
    (MAX_TRIP, True, True, False, "while"),  # TorchScript's `while True:`
    (None, True, True, False, "while"),
    (MAX_TRIP, True, True, True, "for"),  # the counter is read: TorchScript prints a for
    (MAX_TRIP, False, True, False, "while"),
    (3, True, False, False, "for-break"),
    (3, False, True, True, "for-break"),
])
def test_loop_form_follows_torchscript(trip, cond, body_cond, use_counter, form):
    g = _bare_loop(trip, cond, body_cond, use_counter)
    assert loop_form(next(n for n in g.nodes() if n.kind == "prim::Loop")) == form
    code = graph_to_code(g)
    assert ("while " in code) == (form == "while") and ("break" in code) == (form == "for-break")


def test_unchanged_carried_values_and_empty_blocks():
    """A body that carries its values unchanged assigns nothing; an if without outputs prints ``else: pass`` when its
    second block is empty, as TorchScript does."""
    code = graph_to_code(_bare_loop(4))
    assert code.endswith("  _0 = x\n  for i in range(4):\n    pass\n  return _0\n")
    g = if_without_outputs()
    assert graph_to_code(g).endswith(
        "  if c:\n    pass\n  else:\n    pass\n"
        "  if c:\n    pass\n  else:\n    _0 = torch.neg(x)\n"
        "  return x\n")


def test_keywords_and_odd_names_print_as_valid_names():
    """A value named like a keyword (possible in archives and hand-built graphs) must not break the code: as in
    TorchScript, a reserved name gets a number (``if0``), other characters than letters, digits and ``_`` become
    ``_``."""
    g = Graph()
    x = g.add_input("lambda")
    y = op(g, "neg", x, name_as="if")
    g.register_output(op(g, "neg", y, name_as="a-b"))
    code = graph_to_code(g)
    assert code == "def forward(lambda0: Tensor) -> Tensor:\n  if0 = torch.neg(lambda0)\n  return torch.neg(if0)\n"
    before = str(g)
    assert str(rebuild_from_code(g, code)) == before
