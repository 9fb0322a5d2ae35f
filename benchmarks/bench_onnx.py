"""ONNX export: the seed's ``Net`` exported by ``toolkit.onnx.export`` and run in ONNX Runtime (CPU), at batch 1
and 64, against toolkit eager and against the same model exported by ``torch.onnx.export(..., dynamo=False)``.

Why: an exported model is meant to serve faster than the library it came from; and toolkit's file should run as
fast as PyTorch's own export of the same network (the same ONNX ops, no extra Casts or Reshapes). Each file is
written in a process of its own (toolkit's or torch's), then timed in processes that import only onnxruntime.

Target: toolkit's file in ONNX Runtime within 1.2x of PyTorch's.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from .common import table
from .harness import Variant, measure, run_json
from .models import seed_net

HERE = "benchmarks.bench_onnx"
BATCHES = (1, 64)


# -- exports: each in a fresh process with only its own library imported ----------------------------------
def export(lib_name: str, path: str) -> dict:
    """Write the seed's Net (eval mode, batch dynamic) to ``path`` with ``lib_name``'s TorchScript-based exporter."""
    lib = __import__(lib_name)
    __import__(f"{lib_name}.onnx")
    net = seed_net(lib_name).eval()
    kwargs = {"dynamo": False} if lib_name == "torch" else {}
    lib.onnx.export(net, (lib.randn(1, 1, 28, 28),), path, input_names=["x"], output_names=["y"],
                    dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, **kwargs)
    return {"bytes": os.path.getsize(path)}


# -- setups: each runs in a fresh process ------------------------------------------------------------------
def _images(batch: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((batch, 1, 28, 28)).astype(np.float32)


def onnxruntime_run(path: str, batch: int):
    """One ``InferenceSession.run`` of the file on ``batch`` images (CPUExecutionProvider, default threads)."""
    import onnxruntime  # only this library in this process

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {"x": _images(batch)}
    return lambda: session.run(None, feeds)


def toolkit_eager(batch: int):
    """The seed's Net in toolkit, eval mode under ``no_grad``."""
    import toolkit

    net = seed_net("toolkit").eval()
    x = toolkit.from_numpy(_images(batch))

    def run():
        with toolkit.no_grad():
            return net(x)

    return run


# -- tables ------------------------------------------------------------------------------------------------
def main() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        paths = {lib: os.path.join(tmp, f"net_{lib}.onnx") for lib in ("toolkit", "torch")}
        errors = {lib: run_json(f"{HERE}:export", lib, p).get("error") for lib, p in paths.items()}
        rows = []
        for batch in BATCHES:
            number = 200 if batch == 1 else 20
            variants = [Variant("onnxruntime, toolkit's file", f"{HERE}:onnxruntime_run", (paths["toolkit"], batch),
                                number),
                        Variant("onnxruntime, torch's file", f"{HERE}:onnxruntime_run", (paths["torch"], batch), number),
                        Variant("toolkit eager", f"{HERE}:toolkit_eager", (batch,), number)]
            times = measure(variants)
            for label, lib in (("onnxruntime, toolkit's file", "toolkit"), ("onnxruntime, torch's file", "torch")):
                if errors[lib]:
                    times[label].error = f"export failed: {errors[lib]}"
            rows.append((f"seed Net forward, batch {batch}", times, 1.2))
    return table("ONNX Runtime on the exported seed Net", rows, "toolkit's file within 1.2x of torch's file",
                 extra=("toolkit eager",))
