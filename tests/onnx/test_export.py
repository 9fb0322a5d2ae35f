"""ONNX export: modules, traced and scripted models to files that pass onnx's full check, load in ONNX Runtime
and give toolkit's numbers, at the exported batch size and at another one through ``dynamic_axes``."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F
import toolkit.onnx
from toolkit.demo import seed_net
from toolkit.onnx import _optimize, _types

from ..conftest import assert_close

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _run(model_bytes_or_path, *inputs):
    source = model_bytes_or_path
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, {n: x.numpy() for n, x in zip(names, inputs)})


def _checked(path):
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    return model


def test_seed_net_dynamic_batch(tmp_path):
    toolkit.manual_seed(0)
    model = seed_net()
    path = tmp_path / "net.onnx"
    toolkit.onnx.export(model, (toolkit.randn(1, 1, 28, 28),), str(path), input_names=["x"], output_names=["y"],
                        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    assert model.training  # traced in eval mode, the mode restored after
    proto = _checked(path)
    assert [i.name for i in proto.graph.input] == ["x"]
    assert [o.name for o in proto.graph.output] == ["y"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {t.name for t in proto.graph.initializer} == set(model.state_dict())
    model.eval()
    for batch in (1, 64):
        x = toolkit.randn(batch, 1, 28, 28)
        (got,) = _run(str(path), x)
        assert_close(toolkit.tensor(got), model(x), atol=1e-5, rtol=1e-4)


def test_linear_relu_to_file_object():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = toolkit.randn(2, 4)
    buf = io.BytesIO()
    toolkit.onnx.export(model, x, buf)
    (got,) = _run(buf.getvalue(), x)
    assert_close(toolkit.tensor(got), model(x))
    ops = [n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node]
    assert ops == ["Gemm", "Relu"]


def test_dynamic_axes_as_lists_and_output_names(tmp_path):
    model = nn.Linear(6, 2)
    path = tmp_path / "lin.onnx"
    toolkit.onnx.export(model, (toolkit.randn(3, 6),), path, input_names=["inp"], output_names=["out"],
                        dynamic_axes={"inp": [0], "out": [0]})
    proto = _checked(path)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "inp_dynamic_axes_1"
    assert proto.graph.output[0].name == "out"
    x = toolkit.randn(11, 6)
    assert_close(toolkit.tensor(_run(str(path), x)[0]), model(x), atol=1e-6, rtol=1e-5)


def test_default_names_are_the_graph_values():
    model, x = nn.Linear(3, 2), toolkit.randn(1, 3)
    proto = toolkit.onnx.export(model, (x,), None)
    traced = toolkit.jit.trace(model, (x,))
    assert [i.name for i in proto.graph.input] == [traced.graph.inputs[1].debug_name]
    assert [o.name for o in proto.graph.output] == [traced.inlined_graph.outputs[0].debug_name]


@toolkit.jit.script
def _scripted(x, y):
    return toolkit.relu(x @ y.t() + 1.0).sum(1) * 2


def test_scripted_function_without_control_flow():
    x, y = toolkit.randn(4, 3), toolkit.randn(5, 3)
    result = toolkit.onnx.verify(_scripted, (x, y))
    assert result.ok(1e-5), result
    assert "output" in repr(result) or "max" in repr(result)


def test_traced_module_and_multiple_outputs():
    class Two(nn.Module):
        def forward(self, x):
            return x.softmax(-1), x.max(1)[1], x.mean((0, 1))

    x = toolkit.randn(3, 4)
    traced = toolkit.jit.trace(Two(), (x,))
    result = toolkit.onnx.verify(traced, (x,))
    assert result.ok(1e-6), result
    assert len(result.names) == 3


def test_opset_version_and_ir_version():
    model = nn.Linear(3, 2)
    for opset in (13, 17, 18):
        proto = toolkit.onnx.export(model, (toolkit.randn(1, 3),), None, opset_version=opset)
        assert {o.domain: o.version for o in proto.opset_import}[""] == opset
        assert proto.ir_version == onnx.helper.find_min_ir_version_for(
            [onnx.helper.make_opsetid("", opset)], ignore_unknown=True)
        ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ValueError, match="opset_version 9"):
        toolkit.onnx.export(model, (toolkit.randn(1, 3),), None, opset_version=9)


def test_reductions_before_and_after_opset_18():
    class R(nn.Module):
        def forward(self, x):
            return x.amax(1), x.var(0), x.sum(1, keepdim=True)

    x = toolkit.randn(3, 5)
    for opset in (17, 18):
        assert toolkit.onnx.verify(R(), (x,), opset_version=opset).ok(1e-5)


def test_unsupported_op_names_the_op_and_line():
    class Odd(nn.Module):
        def forward(self, x):
            return toolkit.logcumsumexp(x, 0)

    with pytest.raises(toolkit.onnx.UnsupportedOperatorError, match=r"aten::logcumsumexp.*test_export\.py:\d+"):
        toolkit.onnx.export(Odd(), (toolkit.randn(3),), None)


def test_unsupported_call_of_a_lowered_op_says_why():
    class Train(nn.Module):
        def forward(self, x):
            return F.dropout2d(x, training=True)

    with pytest.raises(toolkit.onnx.UnsupportedOperatorError, match="feature_dropout.*training mode"):
        toolkit.onnx.export(Train(), (toolkit.randn(1, 2, 3, 3),), None, training=toolkit.onnx.TrainingMode.PRESERVE)


def test_kwargs_in_args_and_parameters_as_inputs():
    class K(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, y=None):
            return self.lin(x) + y

    x, y = toolkit.randn(3, 2), toolkit.randn(3, 2)
    proto = toolkit.onnx.export(K(), (x, {"y": y}), None, export_params=False)
    assert len(proto.graph.initializer) == 0
    assert len(proto.graph.input) == 4  # x, y, lin.weight, lin.bias


def test_failed_export_leaves_no_file(tmp_path):
    path = tmp_path / "m.onnx"

    class Odd(nn.Module):
        def forward(self, x):
            return toolkit.logcumsumexp(x, 0)

    with pytest.raises(toolkit.onnx.UnsupportedOperatorError):
        toolkit.onnx.export(Odd(), (toolkit.randn(3),), path)
    assert list(tmp_path.iterdir()) == []


def test_dtype_codes_match_onnx():
    for name in ("float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"):
        assert _types.onnx_type(getattr(toolkit, name)) == onnx.helper.np_dtype_to_tensor_dtype(np.dtype(name))


def test_import_toolkit_does_not_import_onnx():
    code = "import sys, toolkit, toolkit.onnx; print('onnx' in sys.modules, 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# -- constant folding and dead nodes ---------------------------------------------------------------------------
class _TransposedWeight(nn.Module):
    """Its graph reads the weight only through ops on it (a transpose, a reshape of a cast): what folding computes
    once when exporting."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(toolkit.randn(5, 4))
        self.b = nn.Parameter(toolkit.randn(5))

    def forward(self, x):
        return x @ self.w.t() + self.b.double().float().reshape(1, 5)


def _op_types(proto) -> list:
    return [n.op_type for n in proto.graph.node]


def test_constant_folding_computes_ops_on_initializers_once():
    toolkit.manual_seed(0)
    model, x = _TransposedWeight(), toolkit.randn(3, 4)
    folded = toolkit.onnx.export(model, (x,), None, input_names=["x"], dynamic_axes={"x": {0: "n"}})
    kept = toolkit.onnx.export(model, (x,), None, input_names=["x"], dynamic_axes={"x": {0: "n"}},
                               do_constant_folding=False)
    assert _op_types(folded) == ["MatMul", "Add"]
    assert {"Transpose", "Cast", "Reshape"} <= set(_op_types(kept))
    assert len(folded.graph.node) < len(kept.graph.node)
    shapes = {tuple(t.dims) for t in folded.graph.initializer}
    assert (4, 5) in shapes  # the transposed weight; the original is no longer read, so it is left out
    assert (5, 4) not in shapes
    for proto in (folded, kept):
        onnx.checker.check_model(proto, full_check=True)
        for n in (3, 7):
            x = toolkit.randn(n, 4)
            assert_close(toolkit.tensor(_run(proto.SerializeToString(), x)[0]), model(x), atol=1e-5, rtol=1e-4)


def test_constant_folding_leaves_parameters_given_as_inputs():
    model, x = _TransposedWeight(), toolkit.randn(3, 4)
    proto = toolkit.onnx.export(model, (x,), None, export_params=False)  # weights are inputs: nothing to fold
    assert "Transpose" in _op_types(proto)
    assert len(proto.graph.initializer) == 0


def _helper_graph(nodes, outputs, initializers=()):
    h = onnx.helper
    inputs = [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])]
    outs = [h.make_tensor_value_info(o, onnx.TensorProto.FLOAT, [2]) for o in outputs]
    return h.make_graph(nodes, "g", inputs, outs, list(initializers))


def test_dead_nodes_are_removed_but_what_subgraphs_read_is_kept():
    h = onnx.helper
    then = h.make_graph([h.make_node("Neg", ["kept_by_branch"], ["t"])], "then", [],
                        [h.make_tensor_value_info("t", onnx.TensorProto.FLOAT, [2])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", onnx.TensorProto.FLOAT, [2])])
    w = onnx.numpy_helper.from_array(np.ones(2, np.float32), "w")
    unused = onnx.numpy_helper.from_array(np.ones(2, np.float32), "unused")
    graph = _helper_graph([
        h.make_node("Relu", ["x"], ["dead"]),  # read by nobody
        h.make_node("Add", ["dead", "x"], ["dead2"]),  # read by nobody either: both go
        h.make_node("Mul", ["x", "w"], ["kept_by_branch"]),  # read inside the If's branch only
        h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        h.make_node("Cast", ["s"], ["c"], to=onnx.TensorProto.BOOL),
        h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
    ], ["y"], [w, unused])
    assert _optimize.remove_dead_nodes(graph) == 2
    assert [n.op_type for n in graph.node] == ["Mul", "ReduceSum", "Cast", "If"]
    assert [t.name for t in graph.initializer] == ["w"]


def test_folding_replaces_constant_subexpressions_by_initializers():
    h = onnx.helper
    shape = onnx.numpy_helper.from_array(np.array([2], np.int64), "shape")
    w = onnx.numpy_helper.from_array(np.arange(2, dtype=np.float32), "w")
    graph = _helper_graph([
        h.make_node("Constant", [], ["k"], value=onnx.numpy_helper.from_array(np.float32(3.0))),
        h.make_node("Mul", ["w", "k"], ["wk"]),
        h.make_node("Reshape", ["wk", "shape"], ["wr"]),
        h.make_node("RandomNormalLike", ["wr"], ["noise"]),  # random: never folded
        h.make_node("Add", ["x", "wr"], ["a"]),
        h.make_node("Add", ["a", "noise"], ["y"]),
    ], ["y"], [shape, w])
    assert _optimize.fold_constants(graph, 17) == 2
    _optimize.remove_dead_nodes(graph)
    assert [n.op_type for n in graph.node] == ["RandomNormalLike", "Add", "Add"]
    values = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    assert set(values) == {"wr"}
    np.testing.assert_array_equal(values["wr"], [0.0, 3.0])


def test_exported_models_have_no_dead_nodes():
    toolkit.manual_seed(0)
    for model, x in ((seed_net(), toolkit.randn(2, 1, 28, 28)),
                     (nn.Sequential(nn.Conv2d(2, 3, 3), nn.Flatten(), nn.Linear(12, 2)), toolkit.randn(2, 2, 4, 4))):
        graph = toolkit.onnx.export(model, (x,), None).graph
        read = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
        assert all(any(o in read for o in n.output) for n in graph.node)


# -- outputs whose type the toolkit IR does not know -----------------------------------------------------------
@toolkit.jit.script
def _halves(x):
    a, b = x.chunk(2, 1)
    return toolkit.tanh(a) * b, a + b


def test_scripted_outputs_after_list_unpack_get_inferred_types():
    x = toolkit.randn(3, 4)
    proto = toolkit.onnx.export(_halves, (x,), None, input_names=["x"], output_names=["p", "q"],
                                dynamic_axes={"x": {0: "batch"}, "p": {0: "batch"}, "q": {0: "batch"}})
    onnx.checker.check_model(proto, full_check=True)
    for out in proto.graph.output:
        t = out.type.tensor_type
        assert t.elem_type == onnx.TensorProto.FLOAT
        assert t.shape.dim[0].dim_param == "batch" and t.shape.dim[1].dim_value == 2
    for n in (3, 6):
        x = toolkit.randn(n, 4)
        got = _run(proto.SerializeToString(), x)
        for g, e in zip(got, _halves(x)):
            assert_close(toolkit.tensor(g), e, atol=1e-6, rtol=1e-5)


# -- errors name the model's line --------------------------------------------------------------------------------
def test_unsupported_op_in_toolkits_own_module_names_its_forward_and_module_path():
    """A model of toolkit's modules alone: the line is the module's ``forward``, not the ``export`` call."""
    model = nn.Sequential(nn.Conv2d(8, 8, 1), nn.Sequential(nn.ReLU(), nn.PixelShuffle(2)))
    with pytest.raises(toolkit.onnx.UnsupportedOperatorError) as info:
        toolkit.onnx.export(model, (toolkit.randn(1, 8, 2, 2),), None)
    message = str(info.value)
    assert "aten::pixel_shuffle" in message
    assert "test_export.py" not in message
    line = int(message.split("pixelshuffle.py:")[1].split()[0])
    import toolkit.nn.modules.pixelshuffle as where
    with open(where.__file__) as f:
        assert "pixel_shuffle(" in f.read().splitlines()[line - 1]
    assert "module '1.1': PixelShuffle" in message


def test_unsupported_op_in_a_users_module_names_the_users_line():
    class Inner(nn.Module):
        def forward(self, x):
            return toolkit.logcumsumexp(x, 0)  # the line the error names

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 3), Inner())

        def forward(self, x):
            return self.body(x)

    with pytest.raises(toolkit.onnx.UnsupportedOperatorError) as info:
        toolkit.onnx.export(Outer(), (toolkit.randn(2, 3),), None)
    line = int(str(info.value).split("test_export.py:")[1].split()[0])
    with open(__file__) as f:
        assert "the line the error names" in f.read().splitlines()[line - 1]
    assert "module 'body.1': Inner" in str(info.value)


# -- lowerings added for common layers: Unflatten, interpolate, pads, flips, sorts ---------------------------------
def _export_and_compare(model, x, others, axes):
    proto = toolkit.onnx.export(model, (x,), None, input_names=["x"], output_names=["y"],
                                dynamic_axes={"x": axes, "y": axes})
    onnx.checker.check_model(proto, full_check=True)
    model.eval()
    for inp in (x, *others):
        assert_close(toolkit.tensor(_run(proto.SerializeToString(), inp)[0]), model(inp), atol=1e-5, rtol=1e-4)
    return proto


def test_unflatten_in_sequential_at_another_batch():
    toolkit.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.Unflatten(1, (3, 4)), nn.ReLU())
    _export_and_compare(model, toolkit.randn(2, 6), [toolkit.randn(5, 6)], {0: "batch"})


@pytest.mark.parametrize("mode, align_corners", [("nearest", None), ("bilinear", False), ("bilinear", True),
                                                  ("bicubic", False)])
def test_interpolate_by_scale_follows_the_input_size(mode, align_corners):
    class Up(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=2, mode=mode, align_corners=align_corners)

    _export_and_compare(Up(), toolkit.randn(1, 2, 3, 4), [toolkit.randn(2, 2, 5, 3)],
                        {0: "n", 2: "h", 3: "w"})


@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_to_a_size(align_corners):
    class Up(nn.Module):
        def forward(self, x):
            return F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=align_corners)

    _export_and_compare(Up(), toolkit.randn(1, 2, 3, 4), [toolkit.randn(3, 2, 3, 4)], {0: "n"})


def test_pads_flips_rolls_and_sorts_at_another_batch():
    class Mixed(nn.Module):
        def forward(self, x):
            y = F.pad(x, (1, 2, 0, 1), mode="reflect") + F.pad(x, (1, 2, 0, 1), mode="replicate")
            y = F.pad(y, (1, 1), value=0.5).flip(-1).roll(1, 2)
            values, _ = y.sort(-1, descending=True)
            top, _ = values.topk(3, -1)
            return top.cumsum(-1).repeat(1, 1, 1, 2) + y.argsort(-1)[..., :6].float()

    _export_and_compare(Mixed(), toolkit.randn(2, 3, 4, 5), [toolkit.randn(4, 3, 4, 5)], {0: "n"})
