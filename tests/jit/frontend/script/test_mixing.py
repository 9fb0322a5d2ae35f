"""Mixing script and trace: a trace records a scripted call as its graph (control flow kept); scripted
code calls traced functions and plain Python through @ignore."""

import numpy as np

import toolkit
from toolkit import nn

from .helpers import same


@toolkit.jit.script
def clip_loop(x, n: int):
    for _ in range(n):
        if x.sum() > 10:
            x = x * 0.5
        else:
            x = x + 1
    return x


def traced_body(x):
    return clip_loop(x * 2, 4) + 1


def test_trace_of_a_function_calling_a_scripted_one_keeps_its_control_flow():
    x = toolkit.ones(3)
    tr = toolkit.jit.trace(traced_body, (x,))
    text = tr.graph.to_string(False)
    assert "prim::Loop" in text and "prim::If" in text
    for inp in (x, toolkit.ones(3) * 5, -toolkit.ones(3)):
        assert same(tr(inp), traced_body(inp))


class UsesScripted(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scripted = toolkit.jit.script(Gate())

    def forward(self, x):
        return self.scripted(self.lin(x))


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(toolkit.ones(3))

    def forward(self, x):
        if x.mean() > 0:
            return x * self.w
        return -x


def test_traced_module_holding_a_scripted_submodule():
    toolkit.manual_seed(0)
    m = UsesScripted()
    x = toolkit.randn(2, 3)
    tr = toolkit.jit.trace(m, x)
    assert "prim::If" in tr.inlined_graph.to_string(False)
    with toolkit.no_grad():
        for inp in (x, -x, x * 3):
            assert same(tr(inp), m(inp), 1e-5)


def numpy_norm(x):
    return float(np.linalg.norm(x.numpy()))


@toolkit.jit.ignore
def python_scale(x) -> toolkit.Tensor:
    return x * numpy_norm(x)


def calls_python(x):
    return python_scale(x) + 1


def test_scripted_code_calls_plain_python_through_ignore():
    s = toolkit.jit.script(calls_python)
    x = toolkit.randn(4)
    assert same(s(x), calls_python(x))
    assert any(n.kind == "prim::PythonOp" for n in s.graph.all_nodes())


def traced_inner(x):
    return toolkit.sigmoid(x) * 3


inner = toolkit.jit.trace(traced_inner, (toolkit.randn(2),))


def calls_traced(x, n: int):
    for _ in range(n):
        x = inner(x)
    return x


def test_scripted_function_calls_a_traced_function_inline():
    s = toolkit.jit.script(calls_traced)
    x = toolkit.randn(2)
    assert same(s(x, 3), calls_traced(x, 3), 1e-5)
    assert "aten::sigmoid" in s.graph.to_string(False)
