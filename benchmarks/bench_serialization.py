"""Checkpoint loading: a state dict of 16,000 small tensors (``layer{i}.weight`` of 4 floats) saved once and
loaded back, toolkit (``toolkit.load``) against PyTorch (``torch.load``), each library in processes of its own.

Why this case: the cost per record is what it measures (a 121 KB file of such records once took a minute,
loading being quadratic in the records), not the bytes.

Target: toolkit at most 2x torch.
"""

from __future__ import annotations

import io

import numpy as np

from .common import per_library, table
from .harness import library, measure

N_TENSORS = 16_000
HERE = "benchmarks.bench_serialization"


# -- setups: each runs in a fresh process with only its own library imported ----------------------------
def load_state_dict(lib_name: str, n: int = N_TENSORS):
    """``lib.load`` of an in-memory file holding ``n`` tensors of 4 float32 each (saved by the same library)."""
    lib = library(lib_name)
    rng = np.random.default_rng(0)
    sd = {f"layer{i}.weight": lib.from_numpy(rng.standard_normal(4).astype(np.float32)) for i in range(n)}
    buf = io.BytesIO()
    lib.save(sd, buf)
    data = buf.getvalue()

    def run():
        return lib.load(io.BytesIO(data))

    return run


# -- tables ------------------------------------------------------------------------------------------------
def main() -> str:
    rows = [(f"load, state dict of {N_TENSORS:,} tensors of 4 floats",
             measure(per_library(f"{HERE}:load_state_dict", 1)))]
    return table("Checkpoint loading", rows, "toolkit at most 2x torch")
