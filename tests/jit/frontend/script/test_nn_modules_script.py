"""Every ``toolkit.nn`` module whose PyTorch twin scripts must script with toolkit and give eager's numbers.

Generated from one table of constructors (called with ``toolkit`` or ``torch`` as ``L``) and sample inputs.
For each row: ``torch.jit.script`` of the torch module must succeed (else the row is skipped: PyTorch cannot
script it either), then the toolkit module, loaded with the torch module's state dict, is scripted and run
a few times (profiling run, then optimized plans). Each call's outputs, input gradients, parameter
gradients and buffers (running statistics) are compared with eager toolkit, and outputs and input gradients
with the scripted torch module. Rows that draw random numbers are compared with eager toolkit only (same
seed), as torch's generator differs.

Rows not working yet are marked ``xfail(strict=True)``: when one starts passing, unmark it.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import toolkit
from toolkit.demo import seed_net

from ....conftest import assert_close

pytestmark = [pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:`NLLLoss2d` has been deprecated:FutureWarning")]


def _f(*shape):
    return ("float", shape)


def _long(high, *shape):
    return ("long", shape, high)


def _unit(*shape):
    return ("unit", shape)


def _tup(*specs):
    return ("tuple", specs)


class Row:
    """One module to check: ``grad_inputs`` leading inputs require grad (a loss's target does not)."""

    def __init__(self, name, ctor, inputs, *, train=False, accum=1, random=False, grad_inputs=None, xfail=None):
        self.name, self.ctor, self.inputs, self.train = name, ctor, inputs, train
        self.accum, self.random, self.xfail = accum, random, xfail
        self.grad_inputs = len(inputs) if grad_inputs is None else grad_inputs


def _transformer_encoder(L):
    layer = L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    return L.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def _mask(*shape):
    """A bool mask that never masks the first key (a row with every key masked gives NaN, as in PyTorch)."""
    return ("mask", shape)


def _sign(*shape):
    """Targets of the embedding and ranking losses: -1 or 1."""
    return ("sign", shape)


def _py(value):
    """A plain Python argument (``need_weights=False``), passed as is."""
    return ("py", value)


def _const(*values):
    """A fixed int64 tensor (CTC lengths): the same values on every call."""
    return ("const", values)


def _unpool(kernel, *shape):
    """MaxUnpool indices of a ``kernel``-sized, ``kernel``-strided max pool whose output has ``shape``."""
    return ("unpool", shape, kernel)


def _pad_rows(dims):
    """One row per padding module of ``dims`` dimensions (PyTorch's five padding families)."""
    shape = {1: (2, 3, 4), 2: (2, 3, 4, 4), 3: (2, 2, 3, 3, 3)}[dims]
    families = [("Circular", (1,)), ("Constant", (1, 0.5)), ("Reflection", (1,)), ("Replication", (1,)), ("Zero", (1,))]
    return [Row(f"{kind}Pad{dims}d", lambda L, name=f"{kind}Pad{dims}d", args=args: getattr(L.nn, name)(*args),
                [_f(*shape)]) for kind, args in families]


ROWS = [
    # linear and shape
    Row("Linear", lambda L: L.nn.Linear(4, 5), [_f(3, 4)], accum=4),
    Row("Linear-nobias", lambda L: L.nn.Linear(4, 5, bias=False), [_f(3, 4)], accum=4),
    Row("Bilinear", lambda L: L.nn.Bilinear(3, 4, 5), [_f(2, 3), _f(2, 4)], accum=12),
    Row("Identity", lambda L: L.nn.Identity(), [_f(3, 4)]),
    Row("Flatten", lambda L: L.nn.Flatten(), [_f(2, 3, 4)]),
    Row("Unflatten", lambda L: L.nn.Unflatten(1, (2, 3)), [_f(4, 6)]),
    Row("Sequential", lambda L: L.nn.Sequential(L.nn.Linear(4, 6), L.nn.ReLU(), L.nn.Linear(6, 2)), [_f(3, 4)],
        accum=10),
    # convolution and pooling
    Row("Conv1d", lambda L: L.nn.Conv1d(3, 4, 3), [_f(2, 3, 8)], accum=9),
    Row("Conv2d", lambda L: L.nn.Conv2d(3, 4, 3), [_f(2, 3, 6, 6)], accum=27),
    Row("Conv2d-nobias", lambda L: L.nn.Conv2d(3, 4, 3, bias=False), [_f(2, 3, 6, 6)], accum=27),
    Row("Conv2d-stride-pad", lambda L: L.nn.Conv2d(3, 4, 3, stride=2, padding=1), [_f(2, 3, 7, 7)], accum=27),
    Row("ConvTranspose1d", lambda L: L.nn.ConvTranspose1d(3, 4, 3), [_f(2, 3, 5)], accum=12),
    Row("ConvTranspose2d", lambda L: L.nn.ConvTranspose2d(3, 4, 3), [_f(2, 3, 4, 4)], accum=36),
    Row("MaxPool1d", lambda L: L.nn.MaxPool1d(2), [_f(2, 3, 8)]),
    Row("MaxPool2d", lambda L: L.nn.MaxPool2d(2), [_f(2, 3, 6, 6)]),
    Row("AvgPool2d", lambda L: L.nn.AvgPool2d(2), [_f(2, 3, 6, 6)], accum=4),
    Row("AdaptiveAvgPool2d", lambda L: L.nn.AdaptiveAvgPool2d((2, 2)), [_f(2, 3, 6, 6)], accum=9),
    # normalization
    Row("BatchNorm1d-train", lambda L: L.nn.BatchNorm1d(4), [_f(5, 4)], train=True, accum=5),
    Row("BatchNorm1d-eval", lambda L: L.nn.BatchNorm1d(4), [_f(5, 4)]),
    Row("BatchNorm2d-train", lambda L: L.nn.BatchNorm2d(4), [_f(3, 4, 3, 3)], train=True, accum=27),
    Row("BatchNorm2d-eval", lambda L: L.nn.BatchNorm2d(4), [_f(3, 4, 3, 3)]),
    Row("BatchNorm3d-train", lambda L: L.nn.BatchNorm3d(2), [_f(2, 2, 2, 3, 3)], train=True, accum=36),
    Row("GroupNorm", lambda L: L.nn.GroupNorm(2, 4), [_f(3, 4, 5)], accum=10),
    Row("LayerNorm", lambda L: L.nn.LayerNorm(5), [_f(3, 5)], accum=5),
    Row("Embedding", lambda L: L.nn.Embedding(10, 3), [_long(10, 2, 4)]),
    # dropout
    Row("Dropout-eval", lambda L: L.nn.Dropout(), [_f(3, 4)]),
    Row("Dropout-train", lambda L: L.nn.Dropout(), [_f(3, 4)], train=True, random=True),
    Row("Dropout1d-train", lambda L: L.nn.Dropout1d(), [_f(2, 3, 4)], train=True, random=True),
    Row("Dropout2d-train", lambda L: L.nn.Dropout2d(), [_f(2, 3, 4, 4)], train=True, random=True),
    Row("Dropout3d-train", lambda L: L.nn.Dropout3d(), [_f(2, 3, 2, 2, 2)], train=True, random=True),
    Row("AlphaDropout-train", lambda L: L.nn.AlphaDropout(0.3), [_f(3, 4)], train=True, random=True),
    Row("FeatureAlphaDropout-train", lambda L: L.nn.FeatureAlphaDropout(0.3), [_f(2, 3, 4)], train=True,
        random=True),
    # activations
    *[Row(name, ctor, [_f(3, 4)]) for name, ctor in [
        ("ReLU", lambda L: L.nn.ReLU()),
        ("ReLU6", lambda L: L.nn.ReLU6()),
        ("LeakyReLU", lambda L: L.nn.LeakyReLU(0.1)),
        ("ELU", lambda L: L.nn.ELU()),
        ("CELU", lambda L: L.nn.CELU(0.5)),
        ("SELU", lambda L: L.nn.SELU()),
        ("GELU", lambda L: L.nn.GELU()),
        ("GELU-tanh", lambda L: L.nn.GELU("tanh")),
        ("SiLU", lambda L: L.nn.SiLU()),
        ("Mish", lambda L: L.nn.Mish()),
        ("Sigmoid", lambda L: L.nn.Sigmoid()),
        ("Tanh", lambda L: L.nn.Tanh()),
        ("Hardtanh", lambda L: L.nn.Hardtanh()),
        ("Hardsigmoid", lambda L: L.nn.Hardsigmoid()),
        ("Hardswish", lambda L: L.nn.Hardswish()),
        ("Hardshrink", lambda L: L.nn.Hardshrink()),
        ("Softshrink", lambda L: L.nn.Softshrink()),
        ("Tanhshrink", lambda L: L.nn.Tanhshrink()),
        ("Softsign", lambda L: L.nn.Softsign()),
        ("Softplus", lambda L: L.nn.Softplus()),
        ("LogSigmoid", lambda L: L.nn.LogSigmoid()),
        ("Threshold", lambda L: L.nn.Threshold(0.1, 20.0)),
        ("GLU", lambda L: L.nn.GLU()),
        ("Softmax", lambda L: L.nn.Softmax(dim=1)),
        ("LogSoftmax", lambda L: L.nn.LogSoftmax(dim=1)),
        ("Softmin", lambda L: L.nn.Softmin(dim=1)),
        ("RReLU-eval", lambda L: L.nn.RReLU()),
    ]],
    Row("Softmax2d", lambda L: L.nn.Softmax2d(), [_f(2, 3, 4, 4)]),
    Row("RReLU-train", lambda L: L.nn.RReLU(), [_f(3, 4)], train=True, random=True),
    # losses
    Row("MSELoss", lambda L: L.nn.MSELoss(), [_f(3, 4), _f(3, 4)], accum=12, grad_inputs=1),
    Row("L1Loss", lambda L: L.nn.L1Loss(), [_f(3, 4), _f(3, 4)], accum=12, grad_inputs=1),
    Row("SmoothL1Loss", lambda L: L.nn.SmoothL1Loss(), [_f(3, 4), _f(3, 4)], accum=12, grad_inputs=1),
    Row("HuberLoss", lambda L: L.nn.HuberLoss(), [_f(3, 4), _f(3, 4)], accum=12, grad_inputs=1),
    Row("BCELoss", lambda L: L.nn.BCELoss(), [_unit(3, 4), _unit(3, 4)], accum=12, grad_inputs=1),
    Row("BCEWithLogitsLoss", lambda L: L.nn.BCEWithLogitsLoss(), [_f(3, 4), _unit(3, 4)], accum=12, grad_inputs=1),
    Row("CrossEntropyLoss", lambda L: L.nn.CrossEntropyLoss(), [_f(3, 5), _long(5, 3)], accum=15, grad_inputs=1),
    Row("CrossEntropyLoss-probs", lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1), [_f(3, 5), _unit(3, 5)],
        accum=15, grad_inputs=1),
    Row("NLLLoss", lambda L: L.nn.NLLLoss(), [_f(3, 5), _long(5, 3)], accum=3, grad_inputs=1),
    Row("KLDivLoss", lambda L: L.nn.KLDivLoss(reduction="batchmean"), [_f(3, 4), _unit(3, 4)], accum=12, grad_inputs=1),
    Row("SoftMarginLoss", lambda L: L.nn.SoftMarginLoss(), [_f(3, 4), _f(3, 4)], accum=12, grad_inputs=1),
    Row("CosineEmbeddingLoss", lambda L: L.nn.CosineEmbeddingLoss(margin=0.1), [_f(3, 4), _f(3, 4), _sign(3)],
        accum=12, grad_inputs=2),
    Row("HingeEmbeddingLoss", lambda L: L.nn.HingeEmbeddingLoss(), [_f(3, 4), _sign(3, 4)], accum=12, grad_inputs=1),
    Row("MarginRankingLoss", lambda L: L.nn.MarginRankingLoss(margin=0.2), [_f(5), _f(5), _sign(5)], accum=5,
        grad_inputs=2),
    Row("MultiLabelSoftMarginLoss", lambda L: L.nn.MultiLabelSoftMarginLoss(), [_f(3, 4), _unit(3, 4)], accum=12,
        grad_inputs=1),
    Row("NLLLoss2d", lambda L: L.nn.NLLLoss2d(), [_f(2, 3, 4, 4), _long(3, 2, 4, 4)], accum=32, grad_inputs=1),
    Row("PoissonNLLLoss", lambda L: L.nn.PoissonNLLLoss(), [_f(3, 4), _unit(3, 4)], accum=12, grad_inputs=1),
    Row("TripletMarginLoss", lambda L: L.nn.TripletMarginLoss(margin=0.5), [_f(3, 4), _f(3, 4), _f(3, 4)],
        accum=12),
    # recurrent cells (tuple returns, Optional state)
    Row("RNNCell", lambda L: L.nn.RNNCell(4, 5), [_f(3, 4), _f(3, 5)], accum=9),
    Row("RNNCell-nohx", lambda L: L.nn.RNNCell(4, 5), [_f(3, 4)], accum=9),
    Row("RNNCell-relu-unbatched", lambda L: L.nn.RNNCell(4, 5, nonlinearity="relu"), [_f(4), _f(5)], accum=9),
    Row("LSTMCell", lambda L: L.nn.LSTMCell(4, 5), [_f(3, 4), _tup(_f(3, 5), _f(3, 5))], accum=9),
    Row("LSTMCell-nohx", lambda L: L.nn.LSTMCell(4, 5), [_f(3, 4)], accum=9),
    Row("GRUCell", lambda L: L.nn.GRUCell(4, 5), [_f(3, 4), _f(3, 5)], accum=9),
    Row("GRUCell-nobias", lambda L: L.nn.GRUCell(4, 5, bias=False), [_f(3, 4)], accum=9),
    # multi-layer recurrent modules: PyTorch cannot script these (skipped by the twin check)
    Row("RNN", lambda L: L.nn.RNN(4, 5), [_f(2, 3, 4)], accum=9),
    Row("LSTM", lambda L: L.nn.LSTM(4, 5), [_f(2, 3, 4)], accum=9),
    Row("GRU", lambda L: L.nn.GRU(4, 5), [_f(2, 3, 4)], accum=9),
    # attention
    Row("MultiheadAttention", lambda L: L.nn.MultiheadAttention(8, 2), [_f(3, 2, 8), _f(3, 2, 8), _f(3, 2, 8)],
        accum=24),
    Row("TransformerEncoderLayer", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), [_f(3, 2, 8)],
        accum=64),
    Row("TransformerEncoder", _transformer_encoder, [_f(3, 2, 8)], accum=128),
    Row("TransformerEncoderLayer-masks", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
        [_f(3, 2, 8), _mask(3, 3), _mask(2, 3)], accum=64),
    Row("TransformerEncoder-norm-first-gelu-masks", lambda L: L.nn.TransformerEncoder(
        L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True, batch_first=True),
        2, norm=L.nn.LayerNorm(8), enable_nested_tensor=False), [_f(2, 3, 8), _mask(3, 3), _mask(2, 3)], accum=128),
    Row("TransformerDecoderLayer", lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
        [_f(4, 2, 8), _f(5, 2, 8)], accum=64),
    Row("TransformerDecoderLayer-norm-first-masks", lambda L: L.nn.TransformerDecoderLayer(
        8, 2, 16, dropout=0.0, norm_first=True, batch_first=True),
        [_f(2, 4, 8), _f(2, 5, 8), _mask(4, 4), _mask(4, 5), _mask(2, 4), _mask(2, 5)], accum=64),
    Row("TransformerDecoder", lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
                                                                 2, norm=L.nn.LayerNorm(8)),
        [_f(4, 2, 8), _f(5, 2, 8), _mask(4, 4)], accum=128),
    Row("Transformer", lambda L: L.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0),
        [_f(5, 2, 8), _f(4, 2, 8), _py(None), _mask(4, 4)], accum=128),
    Row("MultiheadAttention-key_padding_mask", lambda L: L.nn.MultiheadAttention(8, 2),
        [_f(3, 2, 8), _f(4, 2, 8), _f(4, 2, 8), _mask(2, 4)], accum=24),
    Row("MultiheadAttention-masks-no-weights", lambda L: L.nn.MultiheadAttention(8, 2),
        [_f(3, 2, 8), _f(4, 2, 8), _f(4, 2, 8), _mask(2, 4), _py(False), _mask(3, 4)], accum=24),
    Row("MultiheadAttention-float-attn_mask", lambda L: L.nn.MultiheadAttention(8, 2),
        [_f(3, 2, 8), _f(3, 2, 8), _f(3, 2, 8), _py(None), _py(True), _f(4, 3, 3)], accum=24, grad_inputs=3),
    Row("MultiheadAttention-batch_first", lambda L: L.nn.MultiheadAttention(8, 2, batch_first=True),
        [_f(2, 3, 8), _f(2, 4, 8), _f(2, 4, 8)], accum=24),
    Row("MultiheadAttention-kdim-vdim", lambda L: L.nn.MultiheadAttention(8, 2, kdim=6, vdim=5),
        [_f(3, 2, 8), _f(4, 2, 6), _f(4, 2, 5)], accum=24),
    Row("MultiheadAttention-bias_kv-zero_attn", lambda L: L.nn.MultiheadAttention(8, 2, add_bias_kv=True,
                                                                                  add_zero_attn=True),
        [_f(3, 2, 8), _f(3, 2, 8), _f(3, 2, 8), _mask(2, 3)], accum=24),
    Row("MultiheadAttention-dropout-train", lambda L: L.nn.MultiheadAttention(8, 2, dropout=0.3),
        [_f(3, 2, 8), _f(3, 2, 8), _f(3, 2, 8)], train=True, random=True, accum=24),
    Row("TransformerEncoderLayer-dropout-train", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2),
        [_f(3, 2, 8)], train=True, random=True, accum=64),
    Row("MultiheadAttention-unbatched", lambda L: L.nn.MultiheadAttention(8, 2), [_f(3, 8), _f(4, 8), _f(4, 8)],
        accum=24),
    # modules added with the wider torch.nn surface
    Row("Conv3d", lambda L: L.nn.Conv3d(2, 3, 2), [_f(2, 2, 3, 3, 3)], accum=16),
    Row("ConvTranspose3d", lambda L: L.nn.ConvTranspose3d(2, 3, 2), [_f(2, 2, 2, 2, 2)], accum=24),
    Row("NonDynamicallyQuantizableLinear", lambda L: L.nn.modules.linear.NonDynamicallyQuantizableLinear(4, 5),
        [_f(3, 4)], accum=4),
    Row("AvgPool1d", lambda L: L.nn.AvgPool1d(2), [_f(2, 3, 8)], accum=2),
    Row("AvgPool3d", lambda L: L.nn.AvgPool3d(2), [_f(2, 2, 4, 4, 4)], accum=8),
    Row("MaxPool3d", lambda L: L.nn.MaxPool3d(2), [_f(2, 2, 4, 4, 4)]),
    Row("AdaptiveAvgPool1d", lambda L: L.nn.AdaptiveAvgPool1d(3), [_f(2, 3, 6)], accum=2),
    Row("AdaptiveAvgPool3d", lambda L: L.nn.AdaptiveAvgPool3d((2, 2, 2)), [_f(2, 2, 4, 4, 4)], accum=8),
    Row("AdaptiveMaxPool1d", lambda L: L.nn.AdaptiveMaxPool1d(3), [_f(2, 3, 6)]),
    Row("AdaptiveMaxPool2d", lambda L: L.nn.AdaptiveMaxPool2d((2, 2)), [_f(2, 3, 6, 6)]),
    Row("AdaptiveMaxPool3d", lambda L: L.nn.AdaptiveMaxPool3d((2, 2, 2)), [_f(2, 2, 4, 4, 4)]),
    Row("FractionalMaxPool2d", lambda L: L.nn.FractionalMaxPool2d(2, output_size=(3, 3)), [_f(2, 3, 6, 6)],
        random=True),
    Row("FractionalMaxPool3d", lambda L: L.nn.FractionalMaxPool3d(2, output_size=(2, 2, 2)), [_f(1, 2, 5, 5, 5)],
        random=True),
    Row("LPPool1d", lambda L: L.nn.LPPool1d(2, 2), [_f(2, 3, 8)], accum=4),
    Row("LPPool2d", lambda L: L.nn.LPPool2d(2, 2), [_f(2, 3, 6, 6)], accum=8),
    Row("LPPool3d", lambda L: L.nn.LPPool3d(2, 2), [_f(2, 2, 4, 4, 4)], accum=16),
    Row("MaxUnpool1d", lambda L: L.nn.MaxUnpool1d(2), [_f(2, 3, 4), _unpool(2, 2, 3, 4)], grad_inputs=1),
    Row("MaxUnpool2d", lambda L: L.nn.MaxUnpool2d(2), [_f(2, 3, 2, 2), _unpool(2, 2, 3, 2, 2)], grad_inputs=1),
    Row("MaxUnpool3d", lambda L: L.nn.MaxUnpool3d(2), [_f(1, 2, 2, 2, 2), _unpool(2, 1, 2, 2, 2, 2)], grad_inputs=1),
    *_pad_rows(1), *_pad_rows(2), *_pad_rows(3),
    Row("ChannelShuffle", lambda L: L.nn.ChannelShuffle(2), [_f(2, 4, 3, 3)]),
    Row("PixelShuffle", lambda L: L.nn.PixelShuffle(2), [_f(2, 8, 3, 3)]),
    Row("PixelUnshuffle", lambda L: L.nn.PixelUnshuffle(2), [_f(2, 2, 4, 4)]),
    Row("Upsample", lambda L: L.nn.Upsample(scale_factor=2, mode="nearest"), [_f(2, 3, 4, 4)], accum=4),
    Row("UpsamplingBilinear2d", lambda L: L.nn.UpsamplingBilinear2d(scale_factor=2), [_f(2, 3, 4, 4)], accum=4),
    Row("UpsamplingNearest2d", lambda L: L.nn.UpsamplingNearest2d(scale_factor=2), [_f(2, 3, 4, 4)], accum=4),
    Row("Fold", lambda L: L.nn.Fold(output_size=(4, 4), kernel_size=2), [_f(2, 12, 9)], accum=4),
    Row("Unfold", lambda L: L.nn.Unfold(kernel_size=2), [_f(2, 3, 4, 4)]),
    Row("CosineSimilarity", lambda L: L.nn.CosineSimilarity(), [_f(3, 4), _f(3, 4)], accum=4),
    Row("PairwiseDistance", lambda L: L.nn.PairwiseDistance(), [_f(3, 4), _f(3, 4)], accum=4),
    Row("InstanceNorm1d", lambda L: L.nn.InstanceNorm1d(3), [_f(2, 3, 5)], accum=5),
    Row("InstanceNorm2d", lambda L: L.nn.InstanceNorm2d(3), [_f(2, 3, 4, 4)], accum=16),
    Row("InstanceNorm3d", lambda L: L.nn.InstanceNorm3d(2), [_f(2, 2, 3, 3, 3)], accum=27),
    Row("SyncBatchNorm-eval", lambda L: L.nn.SyncBatchNorm(4), [_f(5, 4)]),
    Row("LocalResponseNorm", lambda L: L.nn.LocalResponseNorm(3), [_f(2, 4, 3, 3)], accum=3),
    Row("CrossMapLRN2d", lambda L: L.nn.CrossMapLRN2d(3), [_f(2, 4, 3, 3)], accum=3,
        xfail="nn/modules/normalization.py CrossMapLRN2d.forward: autograd Function.apply runs as Python"),
    Row("RMSNorm", lambda L: L.nn.RMSNorm(5), [_f(3, 5)], accum=5),
    Row("PReLU", lambda L: L.nn.PReLU(), [_f(3, 4)], accum=12),
    Row("PReLU-channels", lambda L: L.nn.PReLU(3), [_f(2, 3, 4)], accum=8),
    Row("EmbeddingBag", lambda L: L.nn.EmbeddingBag(10, 3), [_long(10, 2, 4)], accum=4),
    Row("DataParallel", lambda L: L.nn.DataParallel(L.nn.Linear(4, 5)), [_f(3, 4)], accum=4),
    Row("GaussianNLLLoss", lambda L: L.nn.GaussianNLLLoss(), [_f(3, 4), _f(3, 4), _unit(3, 4)], accum=12,
        grad_inputs=1),
    Row("MultiLabelMarginLoss", lambda L: L.nn.MultiLabelMarginLoss(), [_f(3, 4), _long(4, 3, 4)], accum=12,
        grad_inputs=1),
    Row("MultiMarginLoss", lambda L: L.nn.MultiMarginLoss(), [_f(3, 5), _long(5, 3)], accum=15, grad_inputs=1),
    Row("TripletMarginWithDistanceLoss", lambda L: L.nn.TripletMarginWithDistanceLoss(),
        [_f(3, 4), _f(3, 4), _f(3, 4)], accum=12),
    Row("CTCLoss", lambda L: L.nn.CTCLoss(blank=4), [_f(6, 2, 5), _long(4, 2, 3), _const(6, 5), _const(3, 2)],
        accum=30, grad_inputs=1),
    Row("LinearCrossEntropyLoss", lambda L: L.nn.LinearCrossEntropyLoss(4, 5), [_f(3, 4), _long(5, 3)], accum=20,
        grad_inputs=1),
    Row("AdaptiveLogSoftmaxWithLoss", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]),
        [_f(3, 8), _long(10, 3)], accum=8, grad_inputs=1),
    # the seed's Net
    Row("seed-Net-eval", seed_net, [_f(2, 1, 28, 28)], accum=500),
    Row("seed-Net-train", seed_net, [_f(2, 1, 28, 28)], train=True, random=True, accum=500),
]


# toolkit.nn classes with no row: no forward of their own to script, or (the Lazy modules) not built in toolkit,
# where PyTorch cannot script them either before their first call
_NO_ROW = {"Module", "Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "RNNBase",
           "RNNCellBase", "LazyLinear", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"}


def test_every_nn_module_has_a_row():
    """The table walks toolkit.nn: a module added without a row fails here."""
    import inspect

    covered = {r.ctor(toolkit).__class__.__name__ for r in ROWS}
    classes = {n for n, c in vars(toolkit.nn).items() if inspect.isclass(c) and issubclass(c, toolkit.nn.Module)}
    assert sorted(classes - covered - _NO_ROW) == []


def _params():
    out = []
    for r in ROWS:
        marks = [pytest.mark.xfail(strict=True, reason=r.xfail)] if r.xfail else []
        out.append(pytest.param(r, id=r.name, marks=marks))
    return out


def _make(spec, rng):
    kind = spec[0]
    if kind == "tuple":
        return tuple(_make(s, rng) for s in spec[1])
    if kind == "py":
        return spec[1]
    if kind == "const":
        return np.array(spec[1], dtype=np.int64)
    if kind == "unpool":
        shape, k = spec[1], spec[2]
        grids = np.meshgrid(*[np.arange(n) for n in shape[2:]], indexing="ij")
        coords = [g * k + rng.integers(0, k, size=shape) for g in grids]
        return np.ravel_multi_index(coords, tuple(n * k for n in shape[2:])).astype(np.int64)
    if kind == "mask":
        m = rng.uniform(size=spec[1]) < 0.4
        m[..., 0] = False
        return m
    if kind == "long":
        return rng.integers(0, spec[2], size=spec[1]).astype(np.int64)
    if kind == "unit":
        return rng.uniform(0.05, 0.95, size=spec[1]).astype(np.float32)
    if kind == "sign":
        return rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=spec[1])
    return rng.standard_normal(spec[1]).astype(np.float32)


def _to(lib, a, grad: bool):
    if isinstance(a, tuple):
        return tuple(_to(lib, x, grad) for x in a)
    if not isinstance(a, np.ndarray):
        return a
    t = lib.tensor(a.copy()) if lib is toolkit else torch.from_numpy(a.copy())
    if grad and a.dtype == np.float32:
        t.requires_grad_(True)
    return t


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in _leaves(e)]
    return [x]


def _run(lib, fn, arrays, cotangents, seed=0, grad_inputs=None):
    """(outputs, input gradients) of one call, the outputs' gradient taken against fixed cotangents."""
    n = len(arrays) if grad_inputs is None else grad_inputs
    inputs = [_to(lib, a, i < n) for i, a in enumerate(arrays)]
    lib.manual_seed(seed)
    out = fn(*inputs)
    outs = [o for o in _leaves(out) if o is not None]
    if cotangents is None:
        rng = np.random.default_rng(1)
        cotangents = [rng.standard_normal(tuple(o.shape)).astype(np.float32) for o in outs]
    loss = None
    for o, g in zip(outs, cotangents):
        if o.dtype.is_floating_point and o.requires_grad:
            term = (o * _to(lib, g, False)).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    grads = [x.grad for x in _leaves(inputs) if isinstance(x, lib.Tensor) and x.requires_grad]
    return [o.detach() for o in outs], grads, cotangents


def _state(m):
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


def _param_grads(m):
    return {k: p.grad for k, p in m.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("row", _params())
def test_module_scripts_like_eager_and_torch(row):
    tm = row.ctor(torch)
    tm.train(row.train)
    try:
        ts = torch.jit.script(tm)
        ts.train(row.train)
        _run(torch, ts, [_make(s, np.random.default_rng(0)) for s in row.inputs], None, grad_inputs=row.grad_inputs)
    except Exception as e:  # noqa: BLE001  (PyTorch's own frontend refuses it: nothing to match)
        pytest.skip(f"torch.jit.script cannot script or run torch.nn {type(tm).__name__}: {type(e).__name__}")
    km = row.ctor(toolkit)
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    for m in (tm, ts, km):
        m.train(row.train)
    eager = copy.deepcopy(km)
    scripted = toolkit.jit.script(km)
    scripted.train(row.train)

    rng = np.random.default_rng(0)
    for step in range(3):
        arrays = [_make(s, rng) for s in row.inputs]
        e_out, e_grads, cot = _run(toolkit, eager, arrays, None, seed=step, grad_inputs=row.grad_inputs)
        s_out, s_grads, _ = _run(toolkit, scripted, arrays, cot, seed=step, grad_inputs=row.grad_inputs)
        msg = f"{row.name} call {step}"
        assert_close(s_out, e_out, accum=row.accum, msg=f"{msg}: output vs eager")
        assert len(s_grads) == len(e_grads), f"{msg}: input gradients"
        assert_close(s_grads, e_grads, accum=row.accum, msg=f"{msg}: input gradients vs eager")
        eg, sg = _param_grads(eager), _param_grads(km)
        assert sorted(eg) == sorted(sg), f"{msg}: parameters with gradients"
        for k in eg:
            assert_close(sg[k], eg[k], accum=row.accum * 4, msg=f"{msg}: gradient of {k} vs eager")
        for m in (eager, km):
            m.zero_grad()
        es, ss = _state(eager), _state(km)
        for k in es:
            assert_close(ss[k], es[k], accum=row.accum, msg=f"{msg}: state {k} vs eager")
        if row.random:
            continue
        t_out, t_grads, _ = _run(torch, ts, arrays, cot, seed=step, grad_inputs=row.grad_inputs)
        assert_close(s_out, t_out, accum=row.accum, msg=f"{msg}: output vs torch.jit.script")
        assert_close(s_grads, t_grads, accum=row.accum, msg=f"{msg}: input gradients vs torch.jit.script")
    # compiled all the way: no part of it runs as a Python fallback (which cannot be saved and loaded elsewhere)
    fallbacks = sorted({n["name"] for n in scripted.graph.all_nodes() if n.kind == "prim::PythonOp"})
    assert not fallbacks, f"{row.name}: parts run as Python fallback calls: {fallbacks}"


_LOAD_AND_RUN = """
import sys
import numpy as np
import toolkit
m = toolkit.jit.load(sys.argv[1])
m.eval()
args = [toolkit.tensor(np.load(p)) for p in sys.argv[3:]]
out = m(*args)
out = out if isinstance(out, tuple) else (out,)
np.savez(sys.argv[2], *[o.detach().numpy() for o in out])
"""


@pytest.mark.parametrize("name", [
    "seed-Net-eval", "Conv2d-nobias", "Sequential", "MaxPool2d", "BatchNorm2d-eval", "GRUCell", "LSTMCell-nohx",
])
def test_scripted_module_saves_and_runs_in_a_fresh_process(name, tmp_path):
    """The seeds' workflow: script, save, load elsewhere (a new interpreter), same numbers."""
    import subprocess
    import sys

    row = next(r for r in ROWS if r.name == name)
    toolkit.manual_seed(0)
    m = row.ctor(toolkit)
    m.eval()
    toolkit.jit.save(toolkit.jit.script(m), str(tmp_path / "m.pt"))
    rng = np.random.default_rng(0)
    arrays = [_make(s, rng) for s in row.inputs]
    leaves = [a for x in arrays for a in (x if isinstance(x, tuple) else (x,))]
    paths = []
    for i, a in enumerate(leaves):
        paths.append(str(tmp_path / f"in{i}.npy"))
        np.save(paths[-1], a)
    subprocess.run([sys.executable, "-c", _LOAD_AND_RUN, str(tmp_path / "m.pt"), str(tmp_path / "out.npz"), *paths],
                   check=True, timeout=300)
    got = np.load(tmp_path / "out.npz")
    expected = m(*[toolkit.tensor(a) for a in arrays])
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got.files) == len(expected)
    for k, e in zip(got.files, expected):
        assert_close(toolkit.tensor(got[k]), e.detach(), accum=row.accum)
