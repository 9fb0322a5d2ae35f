"""Scripted control flow exported to ONNX: ``prim::Loop`` becomes ``Loop`` and ``prim::If`` becomes ``If``, so the
model runs at any length and takes either branch in onnxruntime, with toolkit's numbers.

Covered: the seed's ``script_fn`` (a counted loop), a data-dependent ``if x.sum() > 0``, a ``while`` on a size,
the seed's ``rnn_loop`` (``for x_t in x.split(1)`` over a dynamic sequence, a hidden state that starts as None,
a module held in a global), a loop in a scripted module, an ``if`` on a constant, an ``if`` that only raises,
nested loops and ifs.
"""

from __future__ import annotations

import pytest

import toolkit
import toolkit.onnx
from toolkit import nn

from ..conftest import assert_close
from ..jit.frontend.script.test_seed import rnn_loop, script_fn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def export_and_run(model, args: tuple, tmp_path, names: list, dynamic_axes=None, runs=()):
    """Export ``model`` at ``args``, check it, and compare onnxruntime with toolkit at ``args`` and ``runs``."""
    path = tmp_path / "model.onnx"
    toolkit.onnx.export(model, args, str(path), input_names=names, output_names=["out"], dynamic_axes=dynamic_axes)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for run_args in (args, *runs):
        (got,) = session.run(None, {n: a.numpy() for n, a in zip(names, run_args)})
        with toolkit.no_grad():
            assert_close(toolkit.from_numpy(got), model(*run_args), accum=16)
    return proto


def _ops(proto) -> list:
    return [n.op_type for n in proto.graph.node]


def test_seed_script_fn_keeps_its_loop(tmp_path):
    proto = export_and_run(toolkit.jit.script(script_fn), (toolkit.rand(5),), tmp_path, ["x"], {"x": {0: "n"}},
                           runs=[(toolkit.rand(8),)])
    assert "Loop" in _ops(proto)


def branchy(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y


def test_data_dependent_if_takes_either_branch(tmp_path):
    x = toolkit.randn(4).abs() + 0.1
    proto = export_and_run(toolkit.jit.script(branchy), (x,), tmp_path, ["x"], {"x": {0: "n"}},
                           runs=[(-x,), (toolkit.randn(7) - 3,)])
    assert "If" in _ops(proto)


def while_on_size(x):
    i = 0
    y = x
    while i < x.size(0):
        y = y + x[i]
        i += 1
    return y


def test_while_loop_on_a_dynamic_size(tmp_path):
    proto = export_and_run(toolkit.jit.script(while_on_size), (toolkit.randn(3, 2),), tmp_path, ["x"],
                           {"x": {0: "n"}}, runs=[(toolkit.randn(6, 2),), (toolkit.randn(1, 2),)])
    assert "Loop" in _ops(proto)


def test_seed_rnn_loop_over_a_dynamic_sequence(tmp_path):
    """``for x_t in x.split(1)`` runs over an ONNX sequence, so the loop follows the input's length; the hidden
    state starts as None (an ONNX optional) and the global module's weights become initializers."""
    proto = export_and_run(toolkit.jit.script(rnn_loop), (toolkit.randn(6, 4),), tmp_path, ["x"], {"x": {0: "n"}},
                           runs=[(toolkit.randn(9, 4),), (toolkit.randn(1, 4),)])
    assert {"Loop", "SplitToSequence"} <= set(_ops(proto))
    assert "Split" not in _ops(proto)  # the example's six parts are not computed
    assert len(proto.graph.initializer) == 2


class Accumulate(nn.Module):
    """A scripted module: a loop over time steps with the module's weights, and an ``if`` on a constant."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.use_tanh = True

    def forward(self, x):
        h = toolkit.zeros_like(x[0])
        for t in range(x.size(0)):
            h = self.lin(x[t]) + h
            if self.use_tanh:
                h = toolkit.tanh(h)
        return h


def test_scripted_module_loop_over_time_steps(tmp_path):
    toolkit.manual_seed(0)
    model = toolkit.jit.script(Accumulate())
    proto = export_and_run(model, (toolkit.randn(5, 2, 3),), tmp_path, ["x"], {"x": {0: "seq", 1: "batch"}},
                           runs=[(toolkit.randn(8, 4, 3),)])
    assert _ops(proto).count("Loop") == 1 and "If" not in _ops(proto)  # the constant `if` folded


def checked(x):
    if x.dim() != 2:
        raise ValueError("expected a matrix")
    return x * 3


def test_if_that_only_raises_writes_nothing(tmp_path):
    proto = export_and_run(toolkit.jit.script(checked), (toolkit.randn(2, 3),), tmp_path, ["x"], {"x": {0: "n"}},
                           runs=[(toolkit.randn(5, 3),)])
    assert "If" not in _ops(proto)


def nested(x):
    y = x
    for i in range(3):
        j = 0
        while j < i:
            if y.mean() > 0:
                y = y - 0.5
            else:
                y = y + 1.0
            j += 1
    return y


def test_nested_loops_and_ifs(tmp_path):
    export_and_run(toolkit.jit.script(nested), (toolkit.randn(4),), tmp_path, ["x"], {"x": {0: "n"}},
                   runs=[(toolkit.randn(2) + 3,), (toolkit.randn(5) - 3,)])
