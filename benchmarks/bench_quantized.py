"""Quantized-inference benchmarks: an int8 Linear layer (1024 -> 1024, batch 64) against the float32 layer it
replaces, and the seed Net statically quantized (fused, calibrated, converted) against the float32 Net, in toolkit
and in PyTorch (its default x86 engine), each library timed in its own processes.

Target: toolkit's static int8 Linear (quint8 in, quint8 out) at least 1.5x faster than toolkit's float32 Linear,
i.e. a time ratio at most 0.67x. The dynamic row (float32 in and out, the input quantized per call) is reported
against the same float32 layer.
"""

from __future__ import annotations

import numpy as np

from .common import table
from .harness import Variant, library, measure
from .models import seed_net

HERE = "benchmarks.bench_quantized"
BATCH, FEATURES = 64, 1024


def linear(lib_name: str, mode: str):
    """``Linear(1024, 1024)`` on a batch of 64: ``mode`` ``"float"`` (nn.Linear under no_grad), ``"int8"`` (the static
    quantized Linear on a quint8 input) or ``"dynamic"`` (the dynamic quantized Linear on a float32 input)."""
    lib = library(lib_name)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((FEATURES, FEATURES)).astype(np.float32) * 0.03
    b = rng.standard_normal(FEATURES).astype(np.float32) * 0.1
    x = lib.from_numpy(rng.standard_normal((BATCH, FEATURES)).astype(np.float32))
    fc = lib.nn.Linear(FEATURES, FEATURES)
    with lib.no_grad():
        fc.weight.copy_(lib.from_numpy(w))
        fc.bias.copy_(lib.from_numpy(b))
    if mode == "float":
        def run():
            with lib.no_grad():
                return fc(x)
        return run
    qw = lib.quantize_per_channel(lib.from_numpy(w), lib.from_numpy(np.abs(w).max(1) / 127.0).double(),
                                  lib.zeros(FEATURES, dtype=lib.int64), 0, lib.qint8)
    nnq = lib.ao.nn.quantized
    if mode == "dynamic":
        import importlib

        qfc = importlib.import_module(f"{lib_name}.ao.nn.quantized.dynamic").Linear(FEATURES, FEATURES)
        qfc.set_weight_bias(qw, fc.bias.detach())
        return lambda: qfc(x)
    qfc = nnq.Linear(FEATURES, FEATURES)
    qfc.set_weight_bias(qw, fc.bias.detach())
    qfc.scale, qfc.zero_point = 0.05, 128
    qx = lib.quantize_per_tensor(x, 0.02, 128, lib.quint8)
    return lambda: qfc(qx)


def quantizable_seed_net(lib_name: str):
    """The seed Net (``models.seed_net``, its weights as seeded) made quantizable as eager-mode quantization asks:
    a QuantStub in front, a DeQuantStub before ``log_softmax``, and each ReLU a module beside the layer it follows,
    so ``fuse_modules`` fuses conv1/conv2/fc1 with it (ReLU moved before the max pool, which commutes with it).
    In eval mode it computes what the seed Net computes."""
    lib = library(lib_name)
    nn, F, Q = lib.nn, lib.nn.functional, lib.ao.quantization
    net = seed_net(lib_name)

    class QuantizableNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = Q.QuantStub(), Q.DeQuantStub()
            self.conv1, self.relu1 = net.conv1, nn.ReLU()
            self.conv2, self.relu2 = net.conv2, nn.ReLU()
            self.fc1, self.relu3 = net.fc1, nn.ReLU()
            self.fc2 = net.fc2

        def forward(self, x):
            x = F.max_pool2d(self.relu1(self.conv1(self.quant(x))), 2)
            x = F.max_pool2d(self.relu2(self.conv2(x)), 2)
            x = self.fc2(self.relu3(self.fc1(x.reshape(-1, 320))))
            return F.log_softmax(self.dequant(x), dim=1)

    return net, QuantizableNet()


def seed_net_inference(lib_name: str, mode: str):
    """Seed Net inference on a batch of 64 MNIST-shaped inputs: ``mode`` ``"float"`` (the seed Net in eval mode
    under no_grad) or ``"int8"`` (fused, prepared with the x86 default qconfig, calibrated on 8 random batches and
    converted: float32 in and out, int8 inside)."""
    lib = library(lib_name)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32))
    net, qnet = quantizable_seed_net(lib_name)
    model = net
    if mode == "int8":
        Q = lib.ao.quantization
        qnet.eval()
        Q.fuse_modules(qnet, [["conv1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"]], inplace=True)
        qnet.qconfig = Q.get_default_qconfig("x86")
        Q.prepare(qnet, inplace=True)
        with lib.no_grad():
            for _ in range(8):
                qnet(lib.from_numpy(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)))
        model = Q.convert(qnet, inplace=True)
    model.eval()

    def run():
        with lib.no_grad():
            return model(x)
    return run


def _variants(mode: str) -> list:
    return [Variant(f"toolkit {mode}", f"{HERE}:linear", ("toolkit", mode), 20),
            Variant("toolkit float32", f"{HERE}:linear", ("toolkit", "float"), 20),
            Variant(f"torch {mode}", f"{HERE}:linear", ("torch", mode), 20),
            Variant("torch float32", f"{HERE}:linear", ("torch", "float"), 20)]


def _net_variants() -> list:
    return [Variant(f"{lib} {label}", f"{HERE}:seed_net_inference", (lib, mode), 10)
            for lib in ("toolkit", "torch") for label, mode in (("int8", "int8"), ("float32", "float"))]


def main() -> str:
    rows = [(f"Linear {FEATURES}x{FEATURES}, batch {BATCH}, int8 static (quint8 in/out)",
             measure(_variants("int8")), 1 / 1.5)]
    dynamic = [(f"Linear {FEATURES}x{FEATURES}, batch {BATCH}, int8 dynamic (float32 in/out)",
                measure(_variants("dynamic")), None)]
    net = [(f"seed Net, batch {BATCH}, int8 static (float32 in/out)", measure(_net_variants()), None)]
    return "\n".join([
        table("Quantized Linear (static)", rows, "int8 at least 1.5x faster than toolkit float32 (ratio <= 0.67x)",
              ref="toolkit float32", extra=("torch int8", "torch float32")),
        table("Quantized Linear (dynamic)", dynamic, "reported against toolkit float32", ref="toolkit float32",
              extra=("torch dynamic", "torch float32")),
        table("Quantized seed Net inference (static)", net, "reported against toolkit float32",
              ref="toolkit float32", extra=("torch int8", "torch float32")),
    ])
