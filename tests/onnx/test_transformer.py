"""ONNX export of transformer models (``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder``,
``nn.MultiheadAttention``) and of the ops they record: exported in eval mode, checked with onnx's full check,
run in ONNX Runtime and compared with toolkit's output."""

from __future__ import annotations

import pytest

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from .test_vision import _op_types, export_and_run

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

D, HEADS, FF = 16, 2, 32


def _layer(batch_first: bool, norm_first: bool, activation="relu") -> nn.TransformerEncoderLayer:
    toolkit.manual_seed(0)
    return nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.1, activation=activation, batch_first=batch_first,
                                      norm_first=norm_first).eval()


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
@pytest.mark.parametrize("batch_first", [True, False], ids=["batch_first", "seq_first"])
def test_encoder_layer(batch_first, norm_first):
    layer = _layer(batch_first, norm_first)
    proto = export_and_run(layer, (toolkit.randn(2, 5, D),), [(toolkit.randn(2, 5, D) * 4,)], names=("src",))
    assert {"LayerNormalization", "MatMul", "Softmax", "Relu"} <= _op_types(proto)
    assert "Dropout" not in _op_types(proto)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("opset", [17, 20])
def test_gelu(approximate, opset):
    """Opset 20 has ONNX's Gelu; below it gelu is built from Erf (or Tanh for the tanh approximation)."""
    model = nn.Sequential(nn.Linear(6, 8), nn.GELU(approximate=approximate))
    proto = export_and_run(model, (toolkit.randn(3, 6) * 3,), opset_version=opset)
    expected = "Gelu" if opset >= 20 else ("Tanh" if approximate == "tanh" else "Erf")
    assert expected in _op_types(proto)


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(opset, affine):
    """Opset 17 has LayerNormalization (a scale of ones stands in for no weight); below, it is composed."""
    toolkit.manual_seed(0)
    model = nn.LayerNorm([3, 4], elementwise_affine=affine)
    if affine:
        with toolkit.no_grad():
            model.weight.normal_()
            model.bias.normal_()
    proto = export_and_run(model, (toolkit.randn(5, 3, 4) * 2 + 1,), opset_version=opset)
    assert ("LayerNormalization" in _op_types(proto)) == (opset >= 17)


def test_encoder_two_layers_gelu():
    layer = _layer(True, False, activation="gelu")
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    export_and_run(encoder, (toolkit.randn(3, 4, D),), [(toolkit.randn(3, 4, D),)], names=("src",))


class _Masked(nn.Module):
    """An encoder called with a key padding mask (a bool model input)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, src, padding):
        return self.encoder(src, src_key_padding_mask=padding)


def test_encoder_with_key_padding_mask():
    encoder = nn.TransformerEncoder(_layer(True, True), 2, enable_nested_tensor=False).eval()
    padding = toolkit.zeros(2, 5, dtype=toolkit.bool)
    padding[0, 3:] = True
    other = toolkit.zeros(2, 5, dtype=toolkit.bool)
    other[1, 1:] = True
    proto = export_and_run(_Masked(encoder).eval(), (toolkit.randn(2, 5, D), padding),
                           [(toolkit.randn(2, 5, D), other)], names=("src", "padding"))
    assert "Where" in _op_types(proto)


class _Attention(nn.Module):
    """Multi-head attention returning its output and its averaged weights side by side."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(D, HEADS, batch_first=True)

    def forward(self, x, mask):
        out, weights = self.attn(x, x, x, attn_mask=mask, need_weights=True)
        return toolkit.cat([out, weights], -1)


def test_multihead_attention_with_weights_and_float_mask():
    """``need_weights=True`` takes the bmm path, the float mask the baddbmm one."""
    toolkit.manual_seed(0)
    model = _Attention().eval()
    mask = toolkit.randn(4, 4)
    proto = export_and_run(model, (toolkit.randn(2, 4, D), mask), [(toolkit.randn(2, 4, D), toolkit.randn(4, 4))],
                           names=("x", "mask"))
    assert {"MatMul", "Softmax", "ReduceMean"} <= _op_types(proto)


def test_masked_fill_scalar_and_tensor():
    class Fill(nn.Module):
        def forward(self, x, mask):
            return x.masked_fill(mask, float("-inf")).softmax(-1) + x.masked_fill(mask, x.sum())

    mask = toolkit.rand(3, 4) > 0.5
    mask[:, 0] = False
    export_and_run(Fill(), (toolkit.randn(3, 4), mask), names=("x", "mask"))


def test_scaled_dot_product_attention_with_bool_mask():
    class Sdpa(nn.Module):
        def forward(self, q, k, v, mask):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    q, k, v = (toolkit.randn(2, 2, 3, 4) for _ in range(3))
    mask = toolkit.tensor([[True, False, True], [True, True, False], [False, False, False]])
    export_and_run(Sdpa(), (q, k, v, mask), names=("q", "k", "v", "mask"))


def test_encoder_layer_dynamic_batch_and_sequence():
    layer = _layer(True, False)
    export_and_run(layer, (toolkit.randn(2, 5, D),), [(toolkit.randn(3, 7, D),)], names=("src",),
                   dynamic_axes={"src": {0: "batch", 1: "seq"}, "out": {0: "batch", 1: "seq"}})
