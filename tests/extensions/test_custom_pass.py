"""The custom-pass example: a user's passes registered by name run with the built-in ones.

It runs in a subprocess so the example's passes do not join this process's pass registry.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run() -> str:
    r = subprocess.run([sys.executable, os.path.join("extensions", "custom_pass.py")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_example_prints_graphs_and_checks_values():
    out = _run()
    before, after = out.split("after:\n")
    before = before.split("before:\n")[1]
    # before: the traced multiply by 2, and a separate mul and add
    assert "aten::mul(%x, %3)" in before and "aten::mul(%y, %z)" in before and "aten::add(%5, %6, %7)" in before
    assert "addcmul" not in before
    graph, report = after.split("\n\n", 1)
    assert graph.splitlines()[3:] == [
        "  %3 : int = prim::Constant[value=1]()",
        "  %4 : Double(3, strides=[1], requires_grad=0, device=cpu) = aten::add(%x, %x, %3)",
        "  %5 : Double(3, strides=[1], requires_grad=0, device=cpu) = aten::sin(%4)",
        "  %6 : Double(3, strides=[1], requires_grad=0, device=cpu) = aten::addcmul(%5, %y, %z, %3)",
        "  return (%6)",
    ]
    assert "1: mul_two_to_add: removed 1 aten::mul; added 1 aten::add, 1 prim::Constant" in report
    assert "2: fuse_mul_add: removed 1 aten::add, 1 aten::mul; added 1 aten::addcmul" in report
    assert out.rstrip().endswith("values and gradients match the eager function")


def test_user_pass_is_registered_and_verified():
    check = r"""
import sys
sys.path.insert(0, "extensions")
import pytest, toolkit
import custom_pass
from toolkit.jit.passes import registered_passes
assert {"mul_two_to_add", "fuse_mul_add"} <= set(registered_passes())
with pytest.raises(ValueError, match="already registered"):
    toolkit.jit.register_pass("fuse_mul_add")(lambda g: g)

# a broken pass is caught by the manager's verifier, which names it
@toolkit.jit.register_pass("broken")
def broken(graph):
    graph.outputs[0].node.remove_input(0)
    return graph
t = toolkit.jit.trace(custom_pass.f, tuple(toolkit.randn(3) for _ in range(3)))
with pytest.raises(RuntimeError, match="after pass 'broken'"):
    toolkit.jit.PassManager(["broken"]).run(t.graph.copy())
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
