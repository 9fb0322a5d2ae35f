"""Graphs the view tests draw: a fused elementwise chain (traced) and a scripted loop with a branch; a profile."""

from __future__ import annotations

import toolkit


def chain(x, y):
    return toolkit.sigmoid(x * y + 1.5) * toolkit.tanh(x) - y


@toolkit.jit.script
def looped(x, n: int):
    y = x
    for _ in range(n):
        if bool(y.sum() > 0):
            y = y * 2
        else:
            y = y - 1
    return y.relu()


def traced_chain():
    x, y = toolkit.randn(4, 8), toolkit.randn(4, 8)
    return toolkit.jit.trace(chain, (x, y)), x, y


def profiled_chain():
    """A profile of the traced chain run forward and backward inside a ``record_function`` range."""
    tr, x, y = traced_chain()
    w = toolkit.randn(4, 8, requires_grad=True)
    tr.graph_for(x, y)
    with toolkit.profiler.profile(record_shapes=True) as prof:
        with toolkit.profiler.record_function("step"):
            out = tr(x, y) * w
            out.sum().backward()
    return prof
