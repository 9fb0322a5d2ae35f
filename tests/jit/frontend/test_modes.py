"""``toolkit.jit.is_scripting`` / ``is_tracing``: what code sees in eager, script and trace, as in torch.jit."""

from __future__ import annotations

import pytest
import torch

import toolkit


def _python_only(x):
    """Code neither script compiler accepts (a set): it must never be compiled."""
    return x * (2 + len({1, 2}) - 1)


def _branches(jit):
    def f(x):
        if not jit.is_scripting():
            return _python_only(x)
        if jit.is_tracing():
            return x * 5
        return x * 2

    return f


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_script_folds_the_queries_and_skips_the_python_branch(lib):
    f = _branches(lib.jit)
    x = lib.ones(2)
    assert f(x).tolist() == [3.0, 3.0]  # eager: not scripting
    scripted = lib.jit.script(f)
    assert scripted(x).tolist() == [2.0, 2.0]


def test_the_compiled_graph_holds_only_the_scripted_branch():
    g = toolkit.jit.script(_branches(toolkit.jit)).graph
    assert [n.kind for n in g.nodes() if n.kind != "prim::Constant"] == ["aten::mul"]


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_is_tracing_is_true_only_while_a_trace_records(lib):
    def g(x):
        return x * (7 if lib.jit.is_tracing() else 1)

    assert not lib.jit.is_tracing()
    with pytest.warns(Warning) if lib is torch else _nothing():
        traced = lib.jit.trace(g, (lib.ones(2),))
    assert traced(lib.ones(2)).tolist() == [7.0, 7.0]  # the trace recorded the tracing branch
    assert g(lib.ones(2)).tolist() == [1.0, 1.0]


def test_arguments_are_refused_in_script():
    def h(x):
        return x if toolkit.jit.is_scripting(1) else x

    with pytest.raises(Exception, match=r"is_scripting\(\) takes no arguments"):
        toolkit.jit.script(h)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
