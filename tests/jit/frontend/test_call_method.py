"""A traced module's ``.graph`` calls its submodules (``prim::CallMethod``) as TorchScript's does;
``.inlined_graph`` is the flat graph that runs; submodules are traced modules with their own graphs."""

import numpy as np
import pytest
import torch

import toolkit
from toolkit import nn
from toolkit.jit import Interpreter
from toolkit.jit.ir import types as T
from toolkit.jit.ir.verify import verify
from toolkit.jit.passes import inline_calls
from toolkit.jit.script_module import ScriptModule, TracedSubmodule

from ...conftest import assert_close
from ..call_helpers import calls, copy_weights, make_nested, op_kinds, structure, torch_calls
from .test_golden import Net


def _torch_net():
    import torch.nn.functional as F

    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = torch.nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = torch.nn.Dropout2d()
            self.fc1 = torch.nn.Linear(320, 50)
            self.fc2 = torch.nn.Linear(50, 10)

        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    return TNet()


def _pair(lib):
    m = make_nested(lib)
    return m.eval()


# accum for make_nested's output (the rule in tests/conftest.py): two Linear(4, 4) in a row and a sum over a
# 4x4 weight; the other models here are smaller
NESTED = 4 + 4 + 16


def _close(a, b, accum=NESTED):
    """A traced module's result against PyTorch's, or against eager toolkit: the tolerance rule."""
    assert_close(a, b, accum=accum)


def _same(a, b):
    """The graph with calls and the inlined graph run the same kernels in the same order: equal results."""
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_net_calls_match_torch():
    toolkit.manual_seed(0)
    m = Net().eval()
    x = toolkit.randn(2, 1, 28, 28)
    tm = toolkit.jit.trace(m, x)
    ref = torch.jit.trace(_torch_net().eval(), torch.from_numpy(x.numpy()))
    assert calls(tm.graph) == torch_calls(ref.graph) == [
        ("conv1", "forward"), ("conv2", "forward"), ("conv2_drop", "forward"), ("fc1", "forward"), ("fc2", "forward")]
    assert op_kinds(tm.graph) == op_kinds(ref.graph)  # the ops the parent runs itself, between the calls
    call = next(n for n in tm.graph.nodes() if n.kind == "prim::CallMethod")
    assert str(call.output().type) == "Tensor"
    assert call.inputs[0].type == T.ModuleType(nn.Conv2d)
    assert "prim::CallMethod" not in tm.inlined_graph.to_string()
    for g in (tm.graph, tm.inlined_graph, tm.conv1.graph):
        verify(g)


def test_submodule_graphs_read_their_own_parameters():
    m = Net().eval()
    tm = toolkit.jit.trace(m, toolkit.randn(2, 1, 28, 28))
    g = tm.conv1.graph
    assert isinstance(tm.conv1, TracedSubmodule) and isinstance(tm.conv1, ScriptModule)
    assert str(g.inputs[0].type) == "__torch__.toolkit.nn.modules.conv.Conv2d" and g.inputs[0].debug_name == "self"
    reads = [(n["name"], n.inputs[0]) for n in g.nodes() if n.kind == "prim::GetAttr"]
    assert [r[0] for r in reads] == ["weight", "bias"] and all(v is g.inputs[0] for _, v in reads)
    assert [n.kind for n in g.nodes() if n.kind.startswith("aten::")] == ["aten::conv2d"]
    assert tm.conv1.code == ("def forward(self,\n    input: Tensor) -> Tensor:\n"  # %input.1, as PyTorch names it
                             "  input0 = torch.conv2d(input, self.weight, self.bias, [1, 1], [0, 0], [1, 1])\n"
                             "  return input0\n")
    # submodule calls inlined where their results are used, as TorchScript prints them (which reads each submodule
    # into a name first: ``conv2 = self.conv2``)
    ref = torch.jit.trace(_torch_net().eval(), torch.randn(2, 1, 28, 28))
    for line in ("  input = torch.max_pool2d((self.conv1).forward(x, ), [2, 2], annotate(List[int], []), [0, 0], [1, 1])\n",
                 "  _0 = (self.conv2_drop).forward((self.conv2).forward(input0, ), )\n"):
        assert line in tm.code and line.replace("self.", "") in ref.code


def test_nested_calls_match_torch():
    toolkit.manual_seed(0)
    m, ref_m = _pair(toolkit), _pair(torch)
    copy_weights(m, ref_m)
    x = toolkit.randn(2, 4)
    tm = toolkit.jit.trace(m, x)
    ref = torch.jit.trace(ref_m, torch.from_numpy(x.numpy()))
    expected = [("seq", "forward"), ("pair", "forward"), ("act", "forward"), ("act", "forward1")]
    assert calls(tm.graph) == torch_calls(ref.graph) == expected
    assert calls(tm.seq.graph) == torch_calls(ref.seq.graph) == [("0", "forward"), ("1", "forward")]
    assert calls(tm.pair.graph) == torch_calls(ref.pair.graph) == [("l", "forward")]
    assert op_kinds(tm.graph) == op_kinds(ref.graph) == ["aten::sum", "aten::mul", "aten::add"]
    # a tuple-returning call: built in the callee, taken apart in the caller, as TorchScript does
    kinds = [n.kind for n in tm.graph.nodes()]
    assert kinds[kinds.index("prim::CallMethod") + 1:].count("prim::TupleUnpack") == 1
    assert tm.pair.graph.outputs[0].node.kind == "prim::TupleConstruct"
    assert str(tm.pair.graph.outputs[0].type).startswith("(Float(2, 4")
    assert tm.pair.code.splitlines()[1].endswith("-> Tuple[Tensor, Tensor]:")
    # the loop unrolled into two calls of the same module: forward and forward1, each with its graph
    assert [n.kind for n in tm.act.graph.nodes()] == ["aten::tanh"]
    assert [n.kind for n in tm.act.forward1.graph.nodes()] == ["aten::tanh"]
    assert "(self.act).forward1(" in tm.code
    # the parent reads a submodule's parameter itself: through its own GetAttr chain
    weight = next(n for n in tm.graph.nodes() if n.kind == "aten::sum").inputs[0]
    assert weight.node.kind == "prim::GetAttr" and weight.node.inputs[0].node["name"] == "0"
    for g in (tm.graph, tm.seq.graph, tm.pair.graph, tm.act.graph, tm.inlined_graph):
        verify(g)
    with toolkit.no_grad():
        y = toolkit.randn(2, 4)
        _close(tm(y), ref(torch.from_numpy(y.numpy())))


def test_running_the_graph_with_calls_equals_the_inlined_graph():
    toolkit.manual_seed(0)
    m = _pair(toolkit)
    tm = toolkit.jit.trace(m, toolkit.randn(2, 4))
    x = toolkit.randn(2, 4)
    xa, xb, xe = (x.clone().requires_grad_() for _ in range(3))
    out_calls = Interpreter(tm.graph).run([m, xa])[0]
    out_flat = Interpreter(tm.inlined_graph).run([m, xb])[0]
    out_eager = m(xe)
    _same(out_calls, out_flat)
    _close(out_calls, out_eager)
    for out in (out_calls, out_flat, out_eager):
        out.pow(2).sum().backward()
    _same(xa.grad, xb.grad)
    _close(xa.grad, xe.grad)


def test_submodules_share_state_and_mode_with_the_original():
    m = _pair(toolkit)
    tm = toolkit.jit.trace(m, toolkit.randn(2, 4))
    assert tm.pair.l.weight is m.pair.l.weight
    assert [p for p in tm.parameters()] == [p for p in m.parameters()]
    assert all(a is b for a, b in zip(tm.parameters(), m.parameters()))
    assert list(tm.state_dict()) == list(m.state_dict())
    tm.train()
    assert m.training and m.pair.l.training and tm.pair.l.training
    tm.eval()
    assert not m.training and not m.pair.l.training and not tm.seq.training
    assert repr(tm).splitlines()[:3] == ["Nested(", "  original_name=Nested", "  (seq): Sequential("]


def test_untraced_and_called_submodules_raise_as_in_torch():
    tm = toolkit.jit.trace(_pair(toolkit), toolkit.randn(2, 4))
    with pytest.raises(RuntimeError, match=r"Method 'forward' is not defined\."):
        _ = tm.unused.graph
    assert getattr(tm.unused, "graph", None) is None  # views probing for a graph see none
    with pytest.raises(RuntimeError, match=r"Trace submodules cannot be called\."):
        tm.act(toolkit.randn(2, 4))


class _Scaled(nn.Module):
    """Reads a tensor its caller stored on it during the same forward: it cannot be a call of its own."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = None

    def forward(self, x):
        return self.lin(x) * self.scale


class _UsesScaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Scaled()
        self.gate = nn.Linear(3, 3)

    def forward(self, x):
        self.inner.scale = self.gate(x).sigmoid()
        return self.inner(x) + self.gate.weight.sum()


class _TakesTuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, xs):
        return self.lin(xs[0]) + xs[1]


class _PassesTuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = _TakesTuple()
        self.twice = nn.Linear(3, 3)

    def forward(self, x):
        y = self.twice(self.twice(x))  # one submodule's output feeds its next call
        return self.sub((y, x))


@pytest.mark.parametrize("make,expected", [
    # inner reads its caller's value: it stays inlined, and its own submodule's call is made from the parent
    (_UsesScaled, [("gate", "forward"), ("inner.lin", "forward")]),
    # sub takes a tuple: it stays inlined
    (_PassesTuple, [("twice", "forward"), ("twice", "forward1"), ("sub.lin", "forward")]),
])
def test_calls_that_cannot_stand_alone_stay_inlined(make, expected):
    toolkit.manual_seed(0)
    m = make()
    x = toolkit.randn(2, 3)
    tm = toolkit.jit.trace(m, x)
    top = calls(tm.graph)
    assert top == expected
    assert structure(inline_calls(tm.graph.copy())) == structure(tm.inlined_graph)
    verify(tm.graph)
    y = toolkit.randn(2, 3)
    _close(Interpreter(tm.graph).run([m, y])[0], m(y))
    _close(tm(y), m(y))


def test_a_submodule_inside_an_inlined_call_is_still_a_call():
    m = _UsesScaled()
    tm = toolkit.jit.trace(m, toolkit.randn(2, 3))
    # inner's own nodes are in the parent's graph, with inner's scope; its linear is a call read through inner
    g = tm.graph
    mul = next(n for n in g.nodes() if n.kind == "aten::mul")
    assert mul.scope == "__module.inner"
    call = next(n for n in g.nodes() if n.kind == "prim::CallMethod" and n.inputs[0].debug_name == "lin")
    assert call.inputs[0].node.inputs[0].node["name"] == "inner"
    assert getattr(tm.inner, "graph", None) is None and tm.inner.lin.graph is call["callee"]


def test_tied_weights_and_parameter_arguments():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3, bias=False)
            self.b = nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    x = toolkit.randn(2, 3)
    tm = toolkit.jit.trace(m, x)
    assert calls(tm.graph) == [("a", "forward"), ("b", "forward")]
    for sub in (tm.a, tm.b):  # each reads the shared weight from its own self
        reads = [n for n in sub.graph.nodes() if n.kind == "prim::GetAttr"]
        assert [n["name"] for n in reads] == ["weight"] and reads[0].inputs[0] is sub.graph.inputs[0]
    _close(Interpreter(tm.graph).run([m, x])[0], m(x), accum=3 + 3)


def test_trace_of_a_function_has_no_calls():
    f = toolkit.jit.trace(lambda x: (x * 2).relu(), toolkit.randn(2, 3))
    assert f.inlined_graph is f.graph and "prim::CallMethod" not in str(f.graph)
