"""add_graph: the traced model as a GraphDef with scopes, shapes, dtypes, fusion groups and nested inputs/outputs."""

import warnings

import pytest
import torch
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.proto import types_pb2

import toolkit
import toolkit.nn as nn
from toolkit.utils.tensorboard import SummaryWriter
from toolkit.utils.tensorboard._graph import graph


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * 4 * 4, 3))

    def forward(self, x):
        return self.head(toolkit.relu(self.conv(x)))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.act = nn.Sequential(nn.Sigmoid())

    def forward(self, pair, d, unused=None):
        y = self.fc(pair[0] + pair[1])
        return {"out": self.act(y) * y + d["z"], "none": None, "list": [y]}


def by_name(gd) -> dict:
    return {n.name: n for n in gd.node}


def shape(n) -> list:
    return [d.size for d in n.attr["_output_shapes"].list.shape[0].dim]


def test_scopes_shapes_and_edges():
    gd, run_metadata = graph(Net(), toolkit.rand(1, 1, 6, 6))
    nodes = by_name(gd)
    assert gd.versions.producer == 22
    assert run_metadata.step_stats.dev_stats[0].device == "/device:CPU:0"
    x = nodes["input/x"]
    assert x.op == "IO Node" and shape(x) == [1, 1, 6, 6]
    assert x.attr["dtype"].type == types_pb2.DT_FLOAT
    conv = [n for n in gd.node if n.op == "aten::conv2d"]
    assert len(conv) == 1 and conv[0].name.startswith("Net/Conv2d[conv]/")
    assert conv[0].input[0] == "input/x"
    assert "Net/Conv2d[conv]/weight" in conv[0].input and "Net/Conv2d[conv]/bias" in conv[0].input
    assert shape(conv[0]) == [1, 2, 4, 4]
    linear = [n for n in gd.node if n.op == "aten::linear"]
    assert linear[0].name.startswith("Net/Sequential[head]/Linear[1]/") and shape(linear[0]) == [1, 3]
    assert nodes["Net/Sequential[head]/Linear[1]/weight"].op == "prim::GetAttr"
    out = nodes["output/output.1"]
    assert out.op == "IO Node" and out.input[0] in nodes
    for n in gd.node:  # every edge points at a node that exists
        for i in n.input:
            assert i in nodes, (n.name, i)
    assert linear[0].attr["_source"].s.decode().rsplit(":", 1)[0].endswith(".py")


def sig_input(gd) -> str:
    return next(n for n in gd.node if n.op == "aten::sigmoid").input[0]


def test_nested_inputs_outputs_with_none_and_fusion_group():
    m = Nested()
    a, b, z = toolkit.rand(2, 4), toolkit.rand(2, 4), toolkit.rand(2, 3)
    gd, _ = graph(m, ((a, b), {"z": z}, None))
    nodes = by_name(gd)
    assert {n for n in nodes if n.startswith("input/")} == {"input/pair.0", "input/pair.1", "input/d.0"}
    outs = [n for n in nodes if n.startswith("output/")]
    assert outs == ["output/output.1"]
    groups = {n.split("/")[1] for n in nodes if "FusionGroup_" in n}
    assert groups == {"FusionGroup_0"}
    fused_ops = sorted(n.op for n in gd.node if "/FusionGroup_0/" in n.name and n.op.startswith("aten::"))
    assert fused_ops == ["aten::add", "aten::mul", "aten::sigmoid"]
    mul = next(n for n in gd.node if n.op == "aten::mul" and "FusionGroup" in n.name)
    assert set(mul.input) == {"Nested/FusionGroup_0/" + mul.input[0].rsplit("/", 1)[1], sig_input(gd)}
    assert "input/d.0" in next(n for n in gd.node if n.op == "aten::add" and "FusionGroup" in n.name).input
    assert m.training  # restored after tracing in eval mode


def test_without_fusion_keeps_module_scopes():
    toolkit.jit.set_fusion_enabled(False)
    try:
        gd, _ = graph(Nested(), ((toolkit.rand(2, 4), toolkit.rand(2, 4)), {"z": toolkit.rand(2, 3)}))
    finally:
        toolkit.jit.set_fusion_enabled(True)
    assert not any("FusionGroup" in n.name for n in gd.node)
    sig = next(n for n in gd.node if n.op == "aten::sigmoid")
    assert sig.name.startswith("Nested/Sequential[act]/Sigmoid[0]/")


def test_written_graph_reads_back(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Net(), toolkit.rand(1, 1, 6, 6))
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    gd = acc.Graph()
    assert any(n.op == "aten::conv2d" for n in gd.node)
    assert acc.Tags()["run_metadata"] == ["step1"]


def test_trace_errors_propagate():
    class Bad(nn.Module):
        def forward(self, x):
            return x.nonexistent_method()

    with pytest.raises(AttributeError):
        graph(Bad(), toolkit.rand(2))


class LSTMCellNet(nn.Module):
    """An LSTM cell's gate arithmetic: one fusion group of a dozen pointwise ops after two linear layers."""

    def __init__(self):
        super().__init__()
        self.ih, self.hh = nn.Linear(4, 16), nn.Linear(4, 16)

    def forward(self, x, h, c):
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, 1)
        c2 = toolkit.sigmoid(f) * c + toolkit.sigmoid(i) * toolkit.tanh(g)
        return toolkit.sigmoid(o) * toolkit.tanh(c2), c2


def _variable_names(g) -> set:
    """The names a traced graph's ops gave their results after the variables holding them."""
    return {v.debug_name for n in g.nodes() if n.kind != "prim::GetAttr" for v in n.outputs if v.has_debug_name()}


def test_fused_ops_are_named_after_their_ops_and_coloured_as_their_group_when_read_back(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(LSTMCellNet(), (toolkit.randn(2, 4), toolkit.randn(2, 4), toolkit.randn(2, 4)))
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    gd = acc.Graph()
    names = [n.name for n in gd.node]
    assert len(names) == len(set(names))
    fused = [n for n in gd.node if "/FusionGroup_" in n.name]
    assert {n.name.split("/")[1] for n in fused} == {"FusionGroup_0"}
    sigmoids = sorted(n.name.rsplit("/", 1)[1] for n in fused if n.op == "aten::sigmoid")
    assert sigmoids == ["sigmoid", "sigmoid_1", "sigmoid_2"]
    variables = _variable_names(toolkit.jit.trace(LSTMCellNet(), (toolkit.randn(2, 4),) * 3).inlined_graph)
    for n in fused:  # each named after its variable where the trace named it, else after its op; never a number
        leaf = n.name.rsplit("/", 1)[1]
        assert not leaf.isdigit() and (leaf in variables or leaf.split("_")[0] == n.op.split("::")[1]), n.name
        assert n.attr["_XlaCluster"].s == b"FusionGroup_0"
        assert n.device == "/device:CPU:0/FusionGroup_0"
    chunk = next(n for n in fused if n.op == "aten::chunk")
    assert chunk.input[0] == "LSTMCellNet/FusionGroup_0/gates"
    unfused = [n for n in gd.node if n.op.startswith("aten::") and "/FusionGroup_" not in n.name]
    assert [n.op for n in unfused] == ["aten::linear", "aten::linear"]
    assert {n.device for n in unfused} == {"/device:CPU:0"} and all("_XlaCluster" not in n.attr for n in unfused)
    nodes = by_name(gd)
    for n in gd.node:
        for i in n.input:
            assert i in nodes, (n.name, i)
    out = nodes[nodes["output/output.1"].input[0]]
    assert out.op == "prim::TupleConstruct"
    assert out.input == ["LSTMCellNet/FusionGroup_0/mul_2", "LSTMCellNet/FusionGroup_0/c2"]


def _gates_cell(lib):
    """The seed's LSTM cell as a module's forward (its weights as parameters), built from ``lib``."""

    class GatesCell(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w_ih = lib.nn.Parameter(lib.randn(20, 4))
            self.w_hh = lib.nn.Parameter(lib.randn(20, 5))
            self.b = lib.nn.Parameter(lib.randn(20))

        def forward(self, x, h, c):
            gates = x.mm(self.w_ih.t()) + h.mm(self.w_hh.t()) + self.b
            ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
            ingate = ingate.sigmoid()
            forgetgate = forgetgate.sigmoid()
            cellgate = cellgate.tanh()
            outgate = outgate.sigmoid()
            cy = forgetgate * c + ingate * cellgate
            hy = outgate * cy.tanh()
            return hy, cy

    return GatesCell()


def test_fused_ops_carry_the_names_pytorchs_tracer_gives_their_variables(tmp_path):
    inputs = [(3, 4), (3, 5), (3, 5)]
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(_gates_cell(toolkit), tuple(toolkit.randn(*s) for s in inputs))
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    fused = {n.name.rsplit("/", 1)[1]: n for n in acc.Graph().node if "/FusionGroup_0/" in n.name}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        g = torch.jit.trace(_gates_cell(torch), tuple(torch.randn(*s) for s in inputs)).inlined_graph
    named = {v.debugName() for n in g.nodes() if n.kind() != "prim::GetAttr" for v in n.outputs()
             if not v.debugName().isdigit()}
    assert named >= {"gates", "ingate", "forgetgate", "cellgate", "outgate", "cy"}
    assert named <= set(fused), sorted(set(fused))
    assert {fused[name].op for name in ("ingate", "forgetgate", "outgate")} == {"aten::sigmoid"}
    assert fused["cellgate"].op == "aten::tanh" and fused["gates"].op == fused["cy"].op == "aten::add"
    for leaf, n in fused.items():  # the rest keep their op's name
        assert leaf in named or leaf.split("_")[0] == n.op.split("::")[1], leaf
