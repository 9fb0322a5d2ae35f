"""Post-training static quantization of the seed's ``Net`` on the Digits data: trained in float, fused, calibrated
with the x86 qconfig, converted to int8; its test accuracy stays within one percentage point of the float
model's. The Net is the seed's (benchmarks/models.py), with a QuantStub before it and a DeQuantStub before its
log_softmax (dropout is the identity in eval mode and is left out of the int8 path)."""

import numpy as np
import pytest

import toolkit
from toolkit import nn
from toolkit.ao import quantization as tq
from toolkit.nn import functional as F
from toolkit.vision.datasets import Digits

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")


class QuantizableNet(nn.Module):
    """The seed's Net: conv(1->10, 5), conv(10->20, 5) with Dropout2d, max_pool2d and relu, fc(320->50), fc(50->10),
    log_softmax; with quant/dequant stubs and named ReLUs so conv-relu and linear-relu can be fused."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.relu_fc1 = nn.ReLU()
        self.fc2 = nn.Linear(50, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        conv2 = self.conv2(x)
        if self.training:
            conv2 = self.conv2_drop(conv2)
        x = F.relu(F.max_pool2d(conv2, 2))
        x = x.reshape(-1, 320)
        x = self.relu_fc1(self.fc1(x))
        if self.training:
            x = F.dropout(x, training=True)
        return F.log_softmax(self.dequant(self.fc2(x)), dim=1)


def _tensors(train: bool):
    ds = Digits(train=train, size=28)
    x = (ds.data.numpy().astype(np.float32) / 255.0 - 0.1307) / 0.3081
    return toolkit.tensor(x[:, None]), ds.targets


def _accuracy(model, x, y) -> float:
    with toolkit.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def test_static_int8_net_keeps_float_accuracy_on_digits():
    pytest.importorskip("toolkit.ao.nn.quantized")
    toolkit.manual_seed(0)
    model = QuantizableNet()
    x_train, y_train = _tensors(True)
    x_test, y_test = _tensors(False)
    # A gentle rate for a few more epochs: at 0.05 the float accuracy swung by three points with the rounding
    # of the matrix products (one BLAS thread or two), here it settles
    opt = toolkit.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    gen = np.random.default_rng(0)
    for _ in range(5):
        order = gen.permutation(len(y_train))
        for start in range(0, len(order), 64):
            idx = toolkit.tensor(order[start:start + 64])
            loss = F.nll_loss(model(x_train[idx]), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    float_acc = _accuracy(model, x_test, y_test)
    assert float_acc > 0.9
    model.qconfig = tq.get_default_qconfig("x86")
    fused = tq.fuse_modules(model, [["fc1", "relu_fc1"]])
    prepared = tq.prepare(fused)
    for start in range(0, 512, 128):  # calibration on training images
        prepared(x_train[start:start + 128])
    quantized = tq.convert(prepared)
    assert type(quantized.conv1).__name__ == "Conv2d" and "quantized" in type(quantized.conv1).__module__
    int8_acc = _accuracy(quantized, x_test, y_test)
    # Quantizing loses at most a point; it may gain one (three of the 297 test images moved either way as the
    # rounding of training's products changed with the BLAS threads), which is no loss of accuracy.
    assert int8_acc >= float_acc - 0.01, (float_acc, int8_acc)
