"""ONNX import: models exported by PyTorch's TorchScript-based exporter (``dynamo=False``) are imported with
``toolkit.onnx.import_onnx``, run by the JIT and compared with onnxruntime and with the PyTorch twin, at the
exported batch size and at another one through ``dynamic_axes``. The imported graph holds registry ops, its
parameters keep the exporter's names, and gradients flow to them."""

from __future__ import annotations

import io

import pytest
import torch

import toolkit
import toolkit.onnx
from toolkit.demo import seed_net

from ..conftest import assert_close

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                              "ignore::torch.jit.TracerWarning")


class SmallCNN(torch.nn.Module):
    """Padded conv, batch norm, average pooling and a flatten that reads the batch size at run time."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1, stride=2)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = torch.nn.functional.avg_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return torch.softmax(self.head(x.view(x.size(0), -1)), dim=-1)


class TensorOps(torch.nn.Module):
    """Transpose, Concat, Split, Slice, Unsqueeze/Squeeze, Gather, Cast, MatMul and arithmetic with constants."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 4))

    def forward(self, x):
        a, b = torch.split(x, [2, 4], dim=1)
        y = torch.cat([b, a * 2.0 - 1.0], dim=1).transpose(0, 1)[1:5]
        y = y.unsqueeze(0).squeeze(0) / 3.0
        z = torch.index_select(x, 1, torch.tensor([0, 2]))
        n = (x > 0).to(torch.float32).sum(dim=1, keepdim=True)
        return torch.matmul(x, self.w).tanh() + n, y.t()[:, 0:2] + z, torch.sigmoid(x[:, 3])


def export(model, args, *, input_names, output_names, dynamic_axes=None) -> bytes:
    f = io.BytesIO()
    torch.onnx.export(model.eval(), args, f, dynamo=False, input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic_axes)
    return f.getvalue()


def _flat(x) -> list:
    return [t for e in x for t in _flat(e)] if isinstance(x, (tuple, list)) else [x]


def check_import(data: bytes, model, runs: list, accum: int = 1):
    """Import ``data`` and compare it with onnxruntime and the PyTorch model at each argument tuple of ``runs``."""
    imported = toolkit.onnx.import_onnx(data)
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for args in runs:
        arrays = [a.numpy() for a in _flat(args)]
        got = _flat(imported(*[toolkit.from_numpy(a.copy()) for a in arrays]))
        from_ort = session.run(None, dict(zip(names, arrays)))
        with torch.no_grad():
            from_torch = _flat(model(*args))
        assert len(got) == len(from_ort) == len(from_torch)
        for g, o, t in zip(got, from_ort, from_torch):
            assert_close(g, o, accum=accum)
            assert_close(g, t, accum=accum)
    return imported


def test_seed_net_matches_onnxruntime_and_torch_at_two_batch_sizes():
    torch.manual_seed(0)
    net = seed_net(torch).eval()
    data = export(net, (torch.randn(1, 1, 28, 28),), input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    imported = check_import(data, net, [(torch.randn(1, 1, 28, 28),), (torch.randn(7, 1, 28, 28),)], accum=320)
    kinds = [n.kind for n in imported.graph.nodes()]
    for k in ("aten::convolution", "aten::max_pool2d", "aten::relu", "aten::reshape", "aten::linear",
              "aten::log_softmax"):
        assert k in kinds
    assert all(n.op is not None for n in imported.graph.nodes() if n.kind.startswith("aten::"))
    assert [k for k, _ in imported.named_parameters()] == list(net.state_dict())
    imported.graph.verify()


def test_mlp_in_sequential_keeps_parameter_names():
    torch.manual_seed(1)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.Tanh(),
                              torch.nn.Linear(16, 3), torch.nn.Sigmoid())
    data = export(mlp, (torch.randn(2, 8),), input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}})
    imported = check_import(data, mlp, [(torch.randn(2, 8),), (torch.randn(9, 8),)], accum=16)
    assert set(imported.state_dict()) == set(mlp.state_dict())
    state = {k: toolkit.from_numpy(v.numpy().copy()) for k, v in mlp.state_dict().items()}
    imported.load_state_dict(state)


def test_lstm_cell_returns_both_states():
    torch.manual_seed(2)
    cell = torch.nn.LSTMCell(4, 6)
    args = (torch.randn(3, 4), (torch.randn(3, 6), torch.randn(3, 6)))
    data = export(cell, args, input_names=["x", "h", "c"], output_names=["h1", "c1"],
                  dynamic_axes={n: {0: "b"} for n in ("x", "h", "c", "h1", "c1")})
    other = (torch.randn(5, 4), (torch.randn(5, 6), torch.randn(5, 6)))
    imported = check_import(data, cell, [args, other], accum=10)
    h1, c1 = imported(*[toolkit.from_numpy(a.numpy().copy()) for a in _flat(args)])
    assert h1.shape == c1.shape == (3, 6)


def test_small_cnn_with_shape_arithmetic_at_run_time():
    torch.manual_seed(3)
    cnn = SmallCNN().eval()
    with torch.no_grad():
        cnn.bn.running_mean.uniform_(-0.5, 0.5)
        cnn.bn.running_var.uniform_(0.5, 2.0)
    data = export(cnn, (torch.randn(2, 3, 16, 16),), input_names=["x"], output_names=["p"],
                  dynamic_axes={"x": {0: "b"}, "p": {0: "b"}})
    op_types = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert {"Shape", "Gather", "Concat", "Reshape"} <= op_types  # x.view(x.size(0), -1) with a dynamic batch
    imported = check_import(data, cnn, [(torch.randn(2, 3, 16, 16),), (torch.randn(4, 3, 16, 16),)], accum=128)
    assert any(n.kind == "aten::size" for n in imported.graph.nodes())  # the batch is read, not folded


def test_tensor_ops():
    torch.manual_seed(4)
    model = TensorOps()
    data = export(model, (torch.randn(5, 6),), input_names=["x"], output_names=["a", "b", "c"])
    op_types = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert {"Split", "Concat", "Transpose", "Slice", "Gather", "Cast", "MatMul"} <= op_types
    check_import(data, model, [(torch.randn(5, 6),)], accum=6)


def test_gradients_reach_the_imported_parameters():
    torch.manual_seed(5)
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    data = export(mlp, (torch.randn(3, 4),), input_names=["x"], output_names=["y"])
    imported = toolkit.onnx.import_onnx(data)
    x = torch.randn(3, 4)
    mlp(x).square().sum().backward()
    imported(toolkit.from_numpy(x.numpy().copy())).square().sum().backward()
    params = dict(imported.named_parameters())
    for k, p in mlp.named_parameters():
        assert_close(params[k].grad, p.grad, accum=5)


def test_accepts_a_model_proto_a_path_bytes_and_a_file(tmp_path):
    model = torch.nn.Linear(3, 2)
    data = export(model, (torch.randn(1, 3),), input_names=["x"], output_names=["y"])
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    x = toolkit.randn(1, 3)
    expected = toolkit.onnx.import_onnx(data)(x)
    with open(path, "rb") as f:
        for source in (onnx.load_from_string(data), str(path), path, f):
            assert_close(toolkit.onnx.import_onnx(source)(x), expected)
    with pytest.raises(TypeError, match="ModelProto, a path"):
        toolkit.onnx.import_onnx(3)


def test_unsupported_op_types_are_named():
    h = onnx.helper
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    nodes = [h.make_node("Hardmax", ["x"], ["t"]), h.make_node("Relu", ["t"], ["u"]),
             h.make_node("LpNormalization", ["u"], ["y"])]
    model = h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(toolkit.onnx.OnnxImportError, match="Hardmax, LpNormalization"):
        toolkit.onnx.import_onnx(model)


def test_constants_fold_at_import_and_graph_inputs_keep_their_names():
    h = onnx.helper
    x = h.make_tensor_value_info("input.1", onnx.TensorProto.FLOAT, ["n", 4])
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 2, 2])
    shape = h.make_tensor("shape", onnx.TensorProto.INT64, [2], [2, 2])
    nodes = [h.make_node("Constant", [], ["k"], value=h.make_tensor("k", onnx.TensorProto.INT64, [1], [-1])),
             h.make_node("Concat", ["k", "shape"], ["full_shape"], axis=0),  # folded: [-1, 2, 2]
             h.make_node("Reshape", ["input.1", "full_shape"], ["y"])]
    model = h.make_model(h.make_graph(nodes, "g", [x], [y], [shape]), opset_imports=[h.make_opsetid("", 17)])
    imported = toolkit.onnx.import_onnx(model)
    assert [n.kind for n in imported.graph.nodes()] == ["prim::Constant", "aten::reshape"]
    assert imported.graph.inputs[1].debug_name == "input_1"
    x = toolkit.randn(3, 4)
    assert_close(imported(x), x.reshape(3, 2, 2))


# -- round trips: toolkit -> ONNX (toolkit.onnx.export) -> toolkit ------------------------------------------
class LSTMCellModel(toolkit.nn.Module):
    """``nn.LSTMCell`` taking its state as two arguments (toolkit's exporter takes tensors, not a tuple of them)."""

    def __init__(self):
        super().__init__()
        self.cell = toolkit.nn.LSTMCell(4, 6)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


def round_trip(model, args: tuple, runs: list, *, input_names, output_names, dynamic_axes=None, accum: int = 1):
    f = io.BytesIO()
    toolkit.onnx.export(model, args, f, input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes)
    imported = toolkit.onnx.import_onnx(f.getvalue())
    for run_args in runs:
        with toolkit.no_grad():
            assert_close(imported(*_flat(run_args)), model(*run_args), accum=accum)
    return imported


@pytest.mark.parametrize("batch", [1, 6])
def test_round_trip_seed_net(batch):
    toolkit.manual_seed(0)
    net = seed_net(toolkit).eval()
    imported = round_trip(net, (toolkit.randn(2, 1, 28, 28),), [(toolkit.randn(batch, 1, 28, 28),)],
                          input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "b"}, "y": {0: "b"}},
                          accum=320)
    assert set(imported.state_dict()) == set(net.state_dict())
    imported.load_state_dict(net.state_dict())


def test_round_trip_mlp_and_lstm_cell():
    toolkit.manual_seed(1)
    nn = toolkit.nn
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Softmax(dim=1))
    round_trip(mlp, (toolkit.randn(3, 8),), [(toolkit.randn(3, 8),), (toolkit.randn(5, 8),)], input_names=["x"],
               output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, accum=16)
    cell = LSTMCellModel()
    args = (toolkit.randn(3, 4), toolkit.randn(3, 6), toolkit.randn(3, 6))
    other = (toolkit.randn(2, 4), toolkit.randn(2, 6), toolkit.randn(2, 6))
    axes = {n: {0: "b"} for n in ("x", "h", "c", "h1", "c1")}
    round_trip(cell, args, [args, other], input_names=["x", "h", "c"], output_names=["h1", "c1"],
               dynamic_axes=axes, accum=10)
