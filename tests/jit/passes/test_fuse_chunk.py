"""Fusing ``aten::chunk``: the nodes before a constant chunk and the math after it become one kernel.

The kernel iterates over one part's shape and computes the pre-chunk nodes
once per part, reading their inputs at the part's offset (TorchScript's
ConstantChunk). Checked against eager mode (the same ops unfused), with the
grouping asserted on the plan: the LSTM cell becomes one group, chunks along
dim 0 and dim 1 (and of inner dims of 3-D tensors) fuse, and chunks that
cannot be read by offset (unequal parts, parts used outside the group) stay out.
"""

from __future__ import annotations

import pytest

import toolkit
from toolkit.jit.codegen.fused_kernel import collapse
from toolkit.jit.runtime.group_runner import group_runner

from ..fusion_helpers import assert_close_chain, fused_nodes, groups, unfused_nodes


def lstm_cell(input, hidden, w_ih, w_hh, b_ih, b_hh):
    hx, cx = hidden
    gates = toolkit.mm(input, w_ih.t()) + toolkit.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = toolkit.sigmoid(ingate)
    forgetgate = toolkit.sigmoid(forgetgate)
    cellgate = toolkit.tanh(cellgate)
    outgate = toolkit.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * toolkit.tanh(cy)
    return hy, cy


def _lstm_args(batch: int, hidden: int):
    toolkit.manual_seed(0)
    return (toolkit.randn(batch, hidden), (toolkit.randn(batch, hidden), toolkit.randn(batch, hidden)),
            toolkit.randn(4 * hidden, hidden), toolkit.randn(4 * hidden, hidden),
            toolkit.randn(4 * hidden), toolkit.randn(4 * hidden))


def _kinds(plan) -> list:
    return sorted(n.kind for n in fused_nodes(plan))


@pytest.mark.parametrize("batch, hidden", [(3, 20), (5, 7)])
def test_lstm_cell_is_one_group_and_matches_eager(batch, hidden):
    args = _lstm_args(batch, hidden)
    traced = toolkit.jit.trace(lstm_cell, args)
    plan = traced.graph_for(*args)
    [group] = groups(plan)
    assert _kinds(plan) == sorted(["aten::add"] * 4 + ["aten::sigmoid"] * 3 + ["aten::tanh"] * 2
                                  + ["aten::mul"] * 3 + ["aten::chunk", "prim::ListUnpack"])
    assert not unfused_nodes(plan, "aten::chunk") and len(group.outputs) == 2
    assert [tuple(v.type.sizes) for v in group.inputs][:2] == [(batch, 4 * hidden)] * 2  # the pre-chunk tensors
    for _ in range(2):
        hy, cy = traced(*args)
        ehy, ecy = lstm_cell(*args)
        assert_close_chain(hy, ehy)
        assert_close_chain(cy, ecy)
    [kernel] = plan.kernels
    assert kernel.shape == (batch, hidden) and kernel.calls >= 2 and kernel.fallbacks == 0
    assert "+ 3 * n1]" in kernel.source()  # the fourth part read at its offset


def _chunked(dim: int, chunks: int):
    def f(x, b, y):
        parts = (x * 2.0 + b).chunk(chunks, dim)
        out = toolkit.sigmoid(parts[0]) * y
        for p in parts[1:]:
            out = out + toolkit.tanh(p)
        return out
    return f


CASES = [  # (x shape, b shape, y shape, dim, chunks)
    ((8, 5), (5,), (4, 5), 0, 2),
    ((3, 12), (12,), (3, 4), 1, 3),
    ((3, 12), (3, 1), (1, 4), -1, 3),
    ((2, 6, 5), (6, 1), (2, 3, 5), 1, 2),  # the chunked dim merges with the inner one in the loop
    ((4, 3), (3,), (1, 3), 0, 4),  # parts of size 1 along the chunked dim
    ((2, 4, 3), (1,), (2, 4, 1), 2, 3),
]


@pytest.mark.parametrize("xs, bs, ys, dim, chunks", CASES)
def test_chunk_fuses_and_fused_equals_unfused(xs, bs, ys, dim, chunks):
    f = _chunked(dim, chunks)
    toolkit.manual_seed(1)
    args = (toolkit.randn(*xs), toolkit.randn(*bs), toolkit.randn(*ys))
    traced = toolkit.jit.trace(f, args)
    plan = traced.graph_for(*args)
    assert len(groups(plan)) == 1 and "aten::chunk" in _kinds(plan), plan
    assert not unfused_nodes(plan, "aten::chunk")
    for _ in range(2):
        assert_close_chain(traced(*args), f(*args))
    assert plan.kernels[0].fallbacks == 0


@pytest.mark.parametrize("dim", [0, 1])
def test_non_contiguous_pre_chunk_input(dim):
    f = _chunked(dim, 2)
    toolkit.manual_seed(2)
    x = toolkit.randn(6, 8).t()  # (8, 6), strides (1, 8)
    b = toolkit.randn(6)
    y = toolkit.randn(4, 6) if dim == 0 else toolkit.randn(8, 3)
    traced = toolkit.jit.trace(f, (x, b, y))
    plan = traced.graph_for(x, b, y)
    assert "aten::chunk" in _kinds(plan)
    assert_close_chain(traced(x, b, y), f(x, b, y))
    xc = x.contiguous()  # the same plan, another layout: its own loop
    assert_close_chain(traced(xc, b, y), f(xc, b, y))
    assert plan.kernels[0].fallbacks == 0


def test_unequal_parts_stay_unfused():
    def f(x):
        a, b = (x * 2.0 + 1.0).chunk(2, 0)  # 5 rows: parts of 3 and 2
        return toolkit.sigmoid(a) * 2.0 + 1.0, toolkit.tanh(b) * 3.0 - 1.0

    toolkit.manual_seed(3)
    x = toolkit.randn(5, 3)
    traced = toolkit.jit.trace(f, (x,))
    plan = traced.graph_for(x)
    assert "aten::chunk" not in _kinds(plan) and len(unfused_nodes(plan, "aten::chunk")) == 1
    for got, want in zip(traced(x), f(x)):
        assert_close_chain(got, want)


def test_parts_used_outside_stay_unfused():
    def f(x, y):
        a, b = (x + 1.0).chunk(2, 1)
        return toolkit.sigmoid(a) * y + b, b

    toolkit.manual_seed(4)
    x, y = toolkit.randn(3, 8), toolkit.randn(3, 4)
    traced = toolkit.jit.trace(f, (x, y))
    plan = traced.graph_for(x, y)
    assert "aten::chunk" not in _kinds(plan) and len(unfused_nodes(plan, "aten::chunk")) == 1
    for got, want in zip(traced(x, y), f(x, y)):
        assert_close_chain(got, want)


def test_pre_chunk_values_used_outside_stay_out_of_the_group():
    def f(x, y):
        g = x * 3.0
        a, b = (g + 1.0).chunk(2, 0)
        return toolkit.tanh(a) * b + y, g

    toolkit.manual_seed(5)
    x, y = toolkit.randn(4, 3), toolkit.randn(2, 3)
    traced = toolkit.jit.trace(f, (x, y))
    plan = traced.graph_for(x, y)
    assert "aten::chunk" in _kinds(plan) and _kinds(plan).count("aten::mul") == 1  # x * 3 is returned: not inside
    for got, want in zip(traced(x, y), f(x, y)):
        assert_close_chain(got, want)


def test_requires_grad_runs_the_subgraph_with_eager_gradients():
    args = _lstm_args(2, 3)
    traced = toolkit.jit.trace(lstm_cell, args)
    traced.graph_for(*args)
    leaves = [a.detach().clone().requires_grad_() for a in (args[0], *args[1], *args[2:])]
    eager = [a.detach().clone().requires_grad_() for a in (args[0], *args[1], *args[2:])]
    hy, cy = traced(leaves[0], (leaves[1], leaves[2]), *leaves[3:])
    ehy, ecy = lstm_cell(eager[0], (eager[1], eager[2]), *eager[3:])
    (hy.sum() + cy.sum()).backward()
    (ehy.sum() + ecy.sum()).backward()
    for a, e in zip(leaves, eager):
        assert_close_chain(a.grad, e.grad)


def test_guard_still_checks_values_computed_inside_the_plan():
    def g(x):
        a, b = (toolkit.masked_select(x, x > 0) * 2.0 + 1.0).chunk(2, 0)
        return toolkit.tanh(a) * b

    x = toolkit.tensor([1.0, -2.0, 3.0, 4.0, 5.0])  # four positive values: parts of two
    traced = toolkit.jit.trace(g, (x,), check_trace=False)
    plan = traced.graph_for(x)
    [kernel] = plan.kernels
    assert kernel.shape == (2,)
    runner = group_runner(groups(plan)[0])
    assert [k for k, _, _ in runner._guarded] == [0]  # the masked_select result is not a graph input: guarded
    for other in ([1.0, 2.0, -3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -1.0], [1.0, -2.0, 3.0, 4.0, 5.0]):
        t = toolkit.tensor(other)
        assert_close_chain(traced(t), g(t))
    node = groups(plan)[0]
    for n in (4, 6):  # the runner on its own: an input of another shape than profiled fails the guard
        v = toolkit.arange(float(n))
        env = {node.inputs[0]: v}
        before = kernel.fallbacks
        runner(node, env)
        a, b = (v + 1.0).chunk(2, 0)
        assert_close_chain(env[node.outputs[0]], toolkit.tanh(a) * b)
        assert kernel.fallbacks == before + (n != 4)


def test_collapse_keeps_the_chunked_dim_outermost():
    from toolkit.jit.codegen.fused_kernel import _collapse

    shape, strides = (3, 4, 5), [(20, 5, 1)]
    assert collapse(shape, strides) == ((60,), [(False,)])
    flat, masks, where = _collapse(shape, strides, None, split=1)
    assert flat == (3, 20) and where == 1
    flat, masks, where = _collapse((3, 1, 5), [(5, 5, 1)], None, split=1)  # a part of size 1 keeps its dim
    assert flat == (3, 5) and where == 1
