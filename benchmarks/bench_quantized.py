"""Quantized-inference benchmarks: an int8 Linear layer (1024 -> 1024, batch 64) against the float32 layer it
replaces, in toolkit and in PyTorch (its default x86 engine), each library timed in its own processes.

Target: toolkit's static int8 Linear (quint8 in, quint8 out) at least 1.5x faster than toolkit's float32 Linear,
i.e. a time ratio at most 0.67x. The dynamic row (float32 in and out, the input quantized per call) is reported
against the same float32 layer.
"""

from __future__ import annotations

import numpy as np

from .common import table
from .harness import Variant, library, measure

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


def _variants(mode: str) -> list:
    return [Variant(f"toolkit {mode}", f"{HERE}:linear", ("toolkit", mode), 20),
            Variant("toolkit float32", f"{HERE}:linear", ("toolkit", "float"), 20),
            Variant(f"torch {mode}", f"{HERE}:linear", ("torch", mode), 20),
            Variant("torch float32", f"{HERE}:linear", ("torch", "float"), 20)]


def main() -> str:
    rows = [(f"Linear {FEATURES}x{FEATURES}, batch {BATCH}, int8 static (quint8 in/out)",
             measure(_variants("int8")), 1 / 1.5)]
    dynamic = [(f"Linear {FEATURES}x{FEATURES}, batch {BATCH}, int8 dynamic (float32 in/out)",
                measure(_variants("dynamic")), None)]
    return "\n".join([
        table("Quantized Linear (static)", rows, "int8 at least 1.5x faster than toolkit float32 (ratio <= 0.67x)",
              ref="toolkit float32", extra=("torch int8", "torch float32")),
        table("Quantized Linear (dynamic)", dynamic, "reported against toolkit float32", ref="toolkit float32",
              extra=("torch dynamic", "torch float32")),
    ])
