"""Traced graphs hold no dead nodes, as PyTorch's: each example is traced by toolkit and by torch and compared.

PyTorch's tracer ends with dead code elimination: an unused result goes, an
unused random draw goes too, and an in-place op stays only when it writes
memory that outlives it (an input, a module buffer, a returned value or one
read later). Submodule calls keep PyTorch's shape: a call whose results the
caller never read returns ``None``; its callee keeps only its writes.
"""

import warnings
from collections import Counter

import numpy as np
import pytest

import toolkit
from toolkit.jit.passes import run_passes

torch = pytest.importorskip("torch")


def _examples(lib):
    def unused_mul(x):
        y = x * 3  # noqa: F841
        return x + 1

    def unused_rand(x):
        r = lib.rand(3)  # noqa: F841
        return x + 1

    def unused_randn_like(x):
        n = lib.randn_like(x)  # noqa: F841
        return x + 1

    def inplace_on_input(x):
        x.add_(1)
        return x * 2

    def inplace_on_dead_clone(x):
        y = x.clone()
        y.add_(1)
        return x * 2

    def inplace_on_clone_read_later(x):
        y = x.clone()
        y.add_(1)
        return y * 2

    def inplace_after_last_read(x):
        y = x.clone()
        z = y * 2
        y.add_(1)
        return z

    def inplace_on_view_of_input(x):
        y = x.view(3)
        y.add_(1)
        return x * 2

    def inplace_on_returned(x):
        y = x * 2
        y.add_(1)
        return y

    def inplace_on_view_of_returned(x):
        y = x * 2
        z = y.view(3)
        z.mul_(2)
        return y

    def inplace_random_on_input(x):
        x.bernoulli_(0.5)
        return x + 1

    def inplace_random_on_dead_clone(x):
        y = x.clone()
        y.bernoulli_(0.5)
        return x + 1

    def unused_dropout(x):
        y = lib.dropout(x, 0.5, True)  # noqa: F841
        return x + 1

    def inplace_relu_on_input(x):
        y = x.relu_()  # noqa: F841
        return x + 1

    def one_chunk_used(x):
        a, b = x.chunk(2)
        return a + 1

    def select_written(x):
        y = x[0]
        y.add_(1)
        return x

    def printed(x):
        print("traced once", end="")
        return x * 2

    return [unused_mul, unused_rand, unused_randn_like, inplace_on_input, inplace_on_dead_clone,
            inplace_on_clone_read_later, inplace_after_last_read, inplace_on_view_of_input, inplace_on_returned,
            inplace_on_view_of_returned, inplace_random_on_input, inplace_random_on_dead_clone, unused_dropout,
            inplace_relu_on_input, one_chunk_used, select_written, printed]


def _kinds(graph, skip=()):
    return [n.kind() if callable(n.kind) else n.kind for n in graph.nodes()
            if (n.kind() if callable(n.kind) else n.kind) not in skip]


def _trace_both(fn_tk, fn_torch, make_tk, make_torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = toolkit.jit.trace(fn_tk, make_tk(), check_trace=False)
        r = torch.jit.trace(fn_torch, make_torch(), check_trace=False)
    return t, r


@pytest.mark.parametrize("i", range(len(_examples(toolkit))), ids=[f.__name__ for f in _examples(toolkit)])
def test_function_graph_nodes_match_torch(i, capsys):
    t, r = _trace_both(_examples(toolkit)[i], _examples(torch)[i], lambda: toolkit.ones(3), lambda: torch.ones(3))
    assert _kinds(t.graph) == _kinds(r.graph)
    t.graph.verify()


def test_what_goes_and_what_stays():
    ex = {f.__name__: f for f in _examples(toolkit)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = {k: toolkit.jit.trace(f, toolkit.ones(3), check_trace=False).graph for k, f in ex.items()}
    assert "aten::mul" not in _kinds(g["unused_mul"])
    assert "aten::rand" not in _kinds(g["unused_rand"])  # a draw nobody reads goes, as in PyTorch
    assert "aten::add_" in _kinds(g["inplace_on_input"])
    assert "aten::add_" not in _kinds(g["inplace_on_dead_clone"]) and "aten::clone" not in _kinds(
        g["inplace_on_dead_clone"])
    assert "aten::add_" in _kinds(g["inplace_on_clone_read_later"])
    assert "aten::add_" not in _kinds(g["inplace_after_last_read"])
    assert "aten::bernoulli_" in _kinds(g["inplace_random_on_input"])


def test_traced_inplace_on_input_still_writes_it():
    def f(x):
        y = x.clone()
        y.add_(5)  # dead: goes
        x.mul_(2)  # writes the input: stays
        return x + 1

    t = toolkit.jit.trace(f, toolkit.ones(3), check_trace=False)
    x = toolkit.full((3,), 3.0)
    out = t(x)
    np.testing.assert_array_equal(x.numpy(), [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(out.numpy(), [7.0, 7.0, 7.0])


def _modules(nn):
    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(3, 3)
            self.bn = nn.BatchNorm1d(3)

        def forward(self, x):
            y = self.l(x) * 3  # noqa: F841  (the call's result was read: the call keeps returning it)
            z = self.bn(x)  # noqa: F841  (never read: the call returns None, its buffer writes stay)
            return self.l(x) + 1

    class Unused(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(3, 3)

        def forward(self, x):
            y = x * 3  # noqa: F841
            u = self.l(x)  # noqa: F841
            return x + 1

    class Inner(nn.Module):
        def forward(self, x):
            y = x * 3  # noqa: F841
            return x + 1

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.i = Inner()

        def forward(self, x):
            return self.i(x) * 2

    return [Both, Unused, Outer]


def _type_name(v):
    t = v.type() if callable(v.type) else v.type
    return "NoneType" if "NoneType" in str(t) or t.__class__.__name__ == "NoneType" else "Tensor"


@pytest.mark.parametrize("i", range(3), ids=["linear_and_batchnorm", "unused_call", "nested_dead_mul"])
def test_module_graphs_match_torch(i):
    toolkit.manual_seed(0)
    torch.manual_seed(0)
    m_tk, m_torch = _modules(toolkit.nn)[i](), _modules(torch.nn)[i]()
    t, r = _trace_both(m_tk, m_torch, lambda: toolkit.ones(2, 3), lambda: torch.ones(2, 3))
    skip = ("prim::Constant", "prim::GetAttr")
    # the calls' graph: the same calls, in order, each returning what torch's returns
    assert _kinds(t.graph, skip) == _kinds(r.graph, skip)
    calls_t = [n for n in t.graph.nodes() if n.kind == "prim::CallMethod"]
    calls_r = [n for n in r.graph.nodes() if n.kind() == "prim::CallMethod"]
    assert [_type_name(n.outputs[0]) for n in calls_t] == [_type_name(n.output()) for n in calls_r]
    # each callee's graph
    for name, _ in m_torch.named_children():
        assert _kinds(getattr(t, name).graph, skip) == _kinds(getattr(r, name).graph, skip), name
    # the flat graph that runs: the same ops
    assert _kinds(t.inlined_graph, skip) == _kinds(r.inlined_graph, skip)
    assert Counter(_kinds(t.inlined_graph, ("prim::Constant",))) <= Counter(_kinds(r.inlined_graph, ("prim::Constant",)))
    t.graph.verify()
    t.inlined_graph.verify()


def test_unused_batchnorm_call_still_updates_buffers():
    class B(toolkit.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = toolkit.nn.BatchNorm1d(3)

        def forward(self, x):
            z = self.bn(x)  # noqa: F841
            return x + 1

    toolkit.manual_seed(0)
    eager, traced_from = B(), B()
    traced_from.load_state_dict(eager.state_dict())
    x = toolkit.randn(4, 3)
    t = toolkit.jit.trace(traced_from, x, check_trace=False)
    traced_from.load_state_dict(eager.state_dict())  # undo the tracing run's update
    for _ in range(3):
        eager(x)
        t(x)
    for k, v in eager.state_dict().items():
        np.testing.assert_allclose(t.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, err_msg=k)
    assert "aten::batch_norm" in _kinds(t.bn.graph)


def test_trace_dce_pass_is_registered_and_idempotent():
    t = toolkit.jit.trace(lambda x: x * 2, toolkit.ones(3))
    before = t.graph.to_string(source_locations=False)
    g = run_passes(t.graph.copy(), ["trace_dce"])
    assert g.to_string(source_locations=False) == before
