"""ONNX export of vision models and of the ops they are built from: each model is exported at one batch size,
checked with onnx's full check and run in ONNX Runtime at the exported batch size and, through
``dynamic_axes``, at others, matching toolkit's eval output."""

from __future__ import annotations

import io

import numpy as np
import pytest

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F
import toolkit.onnx
from toolkit.vision import models

from ..conftest import assert_close

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def export_and_run(model, args: tuple, runs=(), *, names=("x",), dynamic_axes=None, opset_version=None,
                   atol=1e-5, rtol=1e-4):
    """Export ``model`` on ``args``, check the file, and compare ONNX Runtime with toolkit on ``args`` and on
    each tuple of inputs in ``runs``; return the ModelProto."""
    buf = io.BytesIO()
    toolkit.onnx.export(model, args, buf, input_names=list(names), output_names=["out"],
                        dynamic_axes=dynamic_axes, opset_version=opset_version)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for inputs in (args, *runs):
        (got,) = session.run(None, {n: x.numpy() for n, x in zip(names, inputs)})
        with toolkit.no_grad():
            expected = model(*inputs)
        assert_close(toolkit.tensor(got), expected, atol=atol, rtol=rtol)
    return proto


def _op_types(proto) -> set:
    return {n.op_type for n in proto.graph.node}


def _with_batch_statistics(model: nn.Module) -> nn.Module:
    """Random running statistics and affine parameters, so batch norm is not an identity in eval mode."""
    g = np.random.default_rng(0)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            with toolkit.no_grad():
                m.running_mean.copy_(toolkit.tensor(g.normal(0, 0.1, c).astype(np.float32)))
                m.running_var.copy_(toolkit.tensor(g.uniform(0.5, 1.5, c).astype(np.float32)))
                m.weight.copy_(toolkit.tensor(g.uniform(0.5, 1.5, c).astype(np.float32)))
                m.bias.copy_(toolkit.tensor(g.normal(0, 0.1, c).astype(np.float32)))
    return model.eval()


_BATCH = {"x": {0: "batch"}, "out": {0: "batch"}}


def test_resnet18_dynamic_batch():
    toolkit.manual_seed(0)
    model = _with_batch_statistics(models.resnet18(num_classes=10))
    proto = export_and_run(model, (toolkit.randn(2, 3, 64, 64),),
                           [(toolkit.randn(1, 3, 64, 64),), (toolkit.randn(3, 3, 64, 64),)], dynamic_axes=_BATCH)
    assert {"Conv", "BatchNormalization", "Relu", "MaxPool", "Add", "GlobalAveragePool"} <= _op_types(proto)
    params = {name for name, _ in model.named_parameters()}
    assert params <= {t.name for t in proto.graph.initializer}


@pytest.mark.parametrize("name", ["mobilenet_v2", "squeezenet1_1"])
def test_small_vision_models_dynamic_batch(name):
    toolkit.manual_seed(0)
    model = _with_batch_statistics(getattr(models, name)(num_classes=10))
    export_and_run(model, (toolkit.randn(2, 3, 64, 64),), [(toolkit.randn(3, 3, 64, 64),)], dynamic_axes=_BATCH)


def test_batch_norm_without_running_statistics():
    """``track_running_stats=False`` normalizes with the batch's statistics, in eval mode too."""
    toolkit.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, track_running_stats=False), nn.ReLU()).eval()
    export_and_run(model, (toolkit.randn(2, 3, 8, 8),), [(toolkit.randn(5, 3, 8, 8),)], dynamic_axes=_BATCH)


def test_batch_norm_1d_without_affine():
    toolkit.manual_seed(0)
    model = _with_batch_statistics(nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6, affine=False)))
    with toolkit.no_grad():
        model[1].running_var.fill_(2.0)
    export_and_run(model, (toolkit.randn(4, 5),), [(toolkit.randn(7, 5),)], dynamic_axes=_BATCH)


class _Pool(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": (2, 3), "stride": (2, 1), "padding": (1, 0), "ceil_mode": True},
    {"kernel_size": 2, "divisor_override": 3},
])
def test_avg_pool2d(kwargs):
    model = _Pool(lambda x: F.avg_pool2d(x, **kwargs))
    export_and_run(model, (toolkit.randn(2, 3, 9, 8),), [(toolkit.randn(1, 3, 9, 8),)], dynamic_axes=_BATCH)


def test_avg_pool2d_unbatched():
    export_and_run(_Pool(lambda x: F.avg_pool2d(x, 2, ceil_mode=True)), (toolkit.randn(3, 7, 5),))


def test_adaptive_avg_pool2d_global_takes_any_spatial_size():
    model = _Pool(lambda x: F.adaptive_avg_pool2d(x, 1))
    proto = export_and_run(model, (toolkit.randn(2, 3, 6, 4),), [(toolkit.randn(1, 3, 9, 5),)],
                           dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "out": {0: "n"}})
    assert "GlobalAveragePool" in _op_types(proto)


@pytest.mark.parametrize("shape, size", [((2, 3, 6, 8), (3, 2)), ((3, 4, 4), 2), ((1, 2, 5, 5), (5, 1))])
def test_adaptive_avg_pool2d_divisible(shape, size):
    export_and_run(_Pool(lambda x: F.adaptive_avg_pool2d(x, size)), (toolkit.randn(*shape),))


def test_adaptive_avg_pool2d_not_divisible_names_the_op():
    model = _Pool(lambda x: F.adaptive_avg_pool2d(x, (3, 2)))
    with pytest.raises(toolkit.onnx.UnsupportedOperatorError, match=r"aten::adaptive_avg_pool2d.*must divide"):
        toolkit.onnx.export(model, (toolkit.randn(1, 2, 5, 7),), io.BytesIO())


def test_activations_of_vision_models():
    toolkit.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Hardtanh(-0.5, 0.7), nn.Linear(8, 8), nn.ReLU6(), nn.Linear(8, 8),
                          nn.SiLU(), nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 8), nn.ELU(0.7),
                          nn.Linear(8, 8), nn.ReLU6(inplace=True), nn.Hardtanh(inplace=True))
    x = toolkit.randn(4, 6) * 3
    proto = export_and_run(model, (x,), [(toolkit.randn(9, 6) * 3,)], dynamic_axes=_BATCH)
    assert {"Clip", "Sigmoid", "LeakyRelu", "Elu"} <= _op_types(proto)
