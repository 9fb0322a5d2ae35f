"""Recurrent models exported to ONNX and run in onnxruntime: the seed's LSTM cell, ``nn.LSTMCell``/``GRUCell``,
``nn.LSTM``/``nn.GRU`` and the sequence ops ``aten::lstm``/``aten::gru`` (one ONNX ``LSTM``/``GRU`` node per layer).
A trace of ``nn.LSTM``/``nn.GRU`` records the module as one sequence op, as PyTorch's tracer does, and the sizes it
reads as ``aten::size``: the model exports with any batch and sequence length. A model calling
``toolkit.lstm``/``toolkit.gru`` itself is checked against ``nn.LSTM`` with the same weights. A sequence of any
length through a scripted loop is in ``test_control_flow.py``.
"""

from __future__ import annotations

import pytest

import toolkit
import toolkit.onnx
from toolkit import nn

from ..conftest import assert_close
from ..jit.frontend.script.test_seed import lstm as seed_lstm

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def export_and_run(model, args: tuple, tmp_path, *, input_names, output_names, dynamic_axes=None,
                   runs: tuple = ()) -> list:
    """Export ``model`` at ``args``, check the file, and compare onnxruntime with toolkit at ``args`` and at each
    argument tuple of ``runs``; returns the checked model."""
    path = tmp_path / "model.onnx"
    toolkit.onnx.export(model, args, str(path), input_names=input_names, output_names=output_names,
                        dynamic_axes=dynamic_axes)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for run_args in (args, *runs):
        feeds = {name: a.numpy() for name, a in zip(input_names, _flat(run_args))}
        got = session.run(None, feeds)
        with toolkit.no_grad():
            expected = _flat(model(*run_args))
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_close(toolkit.from_numpy(g), e, accum=64)
    return proto


def _op_types(proto) -> list:
    return [n.op_type for n in proto.graph.node]


# -- the seed's LSTM cell (``seed_lstm``, from the seed's script tests) ---------------------------------------------
class SeedCell(nn.Module):
    """The seed's ``lstm`` function with its weights held as parameters (they become initializers)."""

    def __init__(self, input_size: int = 10, hidden_size: int = 20):
        super().__init__()
        self.w_ih = nn.Parameter(toolkit.randn(4 * hidden_size, input_size) * 0.3)
        self.w_hh = nn.Parameter(toolkit.randn(4 * hidden_size, hidden_size) * 0.3)
        self.b_ih = nn.Parameter(toolkit.randn(4 * hidden_size) * 0.3)
        self.b_hh = nn.Parameter(toolkit.randn(4 * hidden_size) * 0.3)

    def forward(self, x, h, c):
        return seed_lstm(x, (h, c), self.w_ih, self.w_hh, self.b_ih, self.b_hh)


BATCH_AXES = {"x": {0: "batch"}, "h": {0: "batch"}, "c": {0: "batch"}, "hy": {0: "batch"}, "cy": {0: "batch"}}


def test_seed_lstm_cell_exports_with_a_dynamic_batch(tmp_path):
    toolkit.manual_seed(0)
    cell = SeedCell()
    args = (toolkit.randn(3, 10), toolkit.randn(3, 20), toolkit.randn(3, 20))
    proto = export_and_run(cell, args, tmp_path, input_names=["x", "h", "c"], output_names=["hy", "cy"],
                           dynamic_axes=BATCH_AXES,
                           runs=[(toolkit.randn(5, 10), toolkit.randn(5, 20), toolkit.randn(5, 20))])
    assert {"Sigmoid", "Tanh"} <= set(_op_types(proto))
    assert len(proto.graph.initializer) >= 4  # the weights


def seed_lstm_step(x, h, c, w_ih, w_hh, b_ih, b_hh):
    return seed_lstm(x, (h, c), w_ih, w_hh, b_ih, b_hh)


def test_scripted_seed_lstm_cell_exports_with_a_dynamic_batch(tmp_path):
    """The seed's scripted ``lstm``, its weights passed in as the seed passes them (graph inputs)."""
    toolkit.manual_seed(0)
    scripted = toolkit.jit.script(seed_lstm_step)
    weights = (toolkit.randn(80, 10) * 0.3, toolkit.randn(80, 20) * 0.3, toolkit.randn(80) * 0.3,
               toolkit.randn(80) * 0.3)
    names = ["x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh"]
    export_and_run(scripted, (toolkit.randn(3, 10), toolkit.randn(3, 20), toolkit.randn(3, 20), *weights),
                   tmp_path, input_names=names, output_names=["hy", "cy"], dynamic_axes=BATCH_AXES,
                   runs=[(toolkit.randn(2, 10), toolkit.randn(2, 20), toolkit.randn(2, 20), *weights)])


# -- nn.LSTMCell and nn.GRUCell: one fused cell op each ------------------------------------------------------------
class LSTMCellModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(6, 8)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


class GRUCellModel(nn.Module):
    def __init__(self, bias: bool = True):
        super().__init__()
        self.cell = nn.GRUCell(6, 8, bias=bias)

    def forward(self, x, h):
        return self.cell(x, h)


def test_lstm_cell_module_exports_its_fused_cell_with_a_dynamic_batch(tmp_path):
    toolkit.manual_seed(1)
    model = LSTMCellModel()
    args = (toolkit.randn(3, 6), toolkit.randn(3, 8), toolkit.randn(3, 8))
    export_and_run(model, args, tmp_path, input_names=["x", "h", "c"], output_names=["hy", "cy"],
                   dynamic_axes=BATCH_AXES, runs=[(toolkit.randn(7, 6), toolkit.randn(7, 8), toolkit.randn(7, 8))])


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_module_exports_its_fused_cell_with_a_dynamic_batch(tmp_path, bias):
    toolkit.manual_seed(2)
    model = GRUCellModel(bias)
    axes = {"x": {0: "batch"}, "h": {0: "batch"}, "hy": {0: "batch"}}
    export_and_run(model, (toolkit.randn(3, 6), toolkit.randn(3, 8)), tmp_path, input_names=["x", "h"],
                   output_names=["hy"], dynamic_axes=axes, runs=[(toolkit.randn(1, 6), toolkit.randn(1, 8))])


# -- nn.LSTM and nn.GRU, traced ------------------------------------------------------------------------------------
RNN_GRID = [(cls, layers, batch_first) for cls in ("LSTM", "GRU") for layers in (1, 2) for batch_first in (False, True)]
TRACED_GRID = RNN_GRID + [("RNN", 2, True), ("RNN_RELU", 1, False)]  # nn.RNN: aten::rnn_tanh / rnn_relu


def _rnn(cls: str, layers: int, batch_first: bool, **kw):
    toolkit.manual_seed(3)
    if cls == "RNN_RELU":
        cls, kw = "RNN", {**kw, "nonlinearity": "relu"}
    return getattr(nn, cls)(4, 6, num_layers=layers, batch_first=batch_first, **kw).eval()


def _seq(seq: int, batch: int, batch_first: bool):
    return toolkit.randn(batch, seq, 4) if batch_first else toolkit.randn(seq, batch, 4)


@pytest.mark.parametrize("cls,layers,batch_first", TRACED_GRID)
def test_traced_rnn_module_exports_with_dynamic_batch_and_sequence_length(tmp_path, cls, layers, batch_first):
    """A trace records the module as one ``aten::lstm``/``aten::gru`` (as PyTorch's tracer does), which becomes
    one ONNX LSTM/GRU node per layer: the file runs at any batch and sequence length."""
    model = _rnn(cls, layers, batch_first)
    names = ["out", "h_n", "c_n"] if cls == "LSTM" else ["out", "h_n"]
    seq_axes = {0: "batch", 1: "seq"} if batch_first else {0: "seq", 1: "batch"}
    axes = {"x": seq_axes, "out": seq_axes, **{n: {1: "batch"} for n in names[1:]}}
    proto = export_and_run(model, (_seq(5, 3, batch_first),), tmp_path, input_names=["x"], output_names=names,
                           dynamic_axes=axes, runs=[(_seq(7, 2, batch_first),), (_seq(1, 1, batch_first),)])
    assert _op_types(proto).count(cls.split("_")[0]) == layers
    assert "Loop" not in _op_types(proto)


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_traced_rnn_module_with_initial_states_runs_at_another_batch(tmp_path, cls):
    model = _rnn(cls, 1, False)
    names = ["out", "h_n", "c_n"] if cls == "LSTM" else ["out", "h_n"]

    def args(seq, batch):
        h = toolkit.randn(1, batch, 6)
        return (_seq(seq, batch, False), (h, toolkit.randn(1, batch, 6)) if cls == "LSTM" else h)

    inputs = ["x", "h0", "c0"] if cls == "LSTM" else ["x", "h0"]
    axes = {"x": {0: "seq", 1: "batch"}, "out": {0: "seq", 1: "batch"}, **{n: {1: "batch"} for n in inputs[1:]}}
    export_and_run(model, args(5, 3), tmp_path, input_names=inputs, output_names=names, dynamic_axes=axes,
                   runs=[args(6, 2)])


# -- the sequence ops: one ONNX LSTM/GRU node per layer, any batch and sequence length ----------------------------
class SequenceOp(nn.Module):
    """``toolkit.lstm``/``toolkit.gru`` called with an ``nn.LSTM``/``nn.GRU``'s weights: one ``aten::lstm`` node."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h, c=None):
        r = self.rnn
        params = [getattr(r, name) for names in r._all_weights for name in names]
        args = (params, r.bias, r.num_layers, float(r.dropout), r.training, r.bidirectional, r.batch_first)
        if c is None:
            return toolkit.gru(x, h, *args)
        return toolkit.lstm(x, [h, c], *args)


SEQ_GRID = RNN_GRID + [("LSTM", 2, False, True), ("GRU", 1, True, True)]


@pytest.mark.parametrize("cls,layers,batch_first,bidirectional",
                         [(*row, False) if len(row) == 3 else row for row in SEQ_GRID])
def test_sequence_op_exports_with_dynamic_batch_and_sequence_length(tmp_path, cls, layers, batch_first,
                                                                     bidirectional):
    rnn = _rnn(cls, layers, batch_first, bidirectional=bidirectional)
    model = SequenceOp(rnn).eval()
    dirs = 2 if bidirectional else 1
    seq_axes = {0: "batch", 1: "seq"} if batch_first else {0: "seq", 1: "batch"}
    axes = {"x": seq_axes, "out": seq_axes, "h0": {1: "batch"}, "h_n": {1: "batch"}}

    def args(seq, batch):
        x, h = _seq(seq, batch, batch_first), toolkit.randn(layers * dirs, batch, 6)
        return (x, h, toolkit.randn(layers * dirs, batch, 6)) if cls == "LSTM" else (x, h)

    inputs, outputs = ["x", "h0"], ["out", "h_n"]
    if cls == "LSTM":
        inputs, outputs = inputs + ["c0"], outputs + ["c_n"]
        axes.update(c0={1: "batch"}, c_n={1: "batch"})
    first, second = args(5, 3), args(7, 2)
    proto = export_and_run(model, first, tmp_path, input_names=inputs, output_names=outputs, dynamic_axes=axes,
                           runs=[second])
    assert _op_types(proto).count(cls) == layers
    # the same numbers as the module itself
    hidden = (second[1], second[2]) if cls == "LSTM" else second[1]
    with toolkit.no_grad():
        assert_close(model(*second), _flat(rnn(second[0], hidden)), accum=64)


def test_lstm_projections_are_refused_with_the_op_named(tmp_path):
    rnn = nn.LSTM(4, 6, proj_size=3).eval()
    model = SequenceOp(rnn)
    args = (toolkit.randn(5, 2, 4), toolkit.zeros(1, 2, 3), toolkit.zeros(1, 2, 6))
    with pytest.raises(Exception, match=r"aten::lstm.*proj_size"):
        toolkit.onnx.export(model, args, str(tmp_path / "m.onnx"))
