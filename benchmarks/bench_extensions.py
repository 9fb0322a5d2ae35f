"""Custom-op extensions: the LLTM cell of PyTorch's C++-extension tutorial, forward and forward+backward, as
toolkit's numba extension (``extensions/lltm.py``, the op ``extension::lltm_forward``), toolkit's C++ extension
(``extensions/lltm_cpp/lltm.cpp`` built with ``toolkit.utils.cpp_extension.load``, the ops
``extension_cpp::lltm_forward``/``lltm_backward``), PyTorch's C++ extension (the tutorial's ATen ``lltm.cpp``,
``extensions/lltm_cpp/torch_lltm.cpp``, built with ``torch.utils.cpp_extension.load`` and wrapped in the tutorial's
``autograd.Function``) and PyTorch's pure-Python LLTM (the tutorial's baseline).

Why: the point of an extension is to beat the ops it replaces; this shows where each route stands against the
baseline a PyTorch user starts from. Sizes: the tutorial's (batch 16, input 32, state 128) and a larger cell
(batch 64, input 32, state 512), float32. Forward is the module's call with grad enabled (parameters require grad,
as the tutorial's benchmark times it); forward+backward adds ``(new_h.sum() + new_cell.sum()).backward()``,
gradients set to None before each call. toolkit's numba LLTM computes its gates with toolkit ops and only the
elementwise core in numba, with a tanh candidate where the others use ELU (one elementwise op apart).

Both extensions are built before anything is timed, each in a process of its own, into build folders under one
temporary folder (never in the repository); every timed process then loads the cached build without compiling.

Target: none set; ratios compare each best figure with PyTorch's pure-Python LLTM.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import tempfile
import time

import numpy as np

from .common import cell, ratio, threads_note
from .harness import Variant, library, measure, run_json

HERE = "benchmarks.bench_extensions"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLTM_CPP = os.path.join(REPO, "extensions", "lltm_cpp")
INPUT = 32
SIZES = ((16, 128), (64, 512))  # (batch, state)
#: Column label -> the library its process imports.
IMPLS = {"toolkit numba": "toolkit", "toolkit C++": "toolkit", "torch C++": "torch", "torch Python": "torch"}
BASELINE = "torch Python"


def _module(name: str, path: str):
    """``path`` imported as the module ``name`` (the extension examples are scripts, not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _torch_extension(build_dir: str):
    """The tutorial's ATen LLTM built with ``torch.utils.cpp_extension.load`` (cached in ``build_dir``/torch)."""
    from torch.utils.cpp_extension import load

    folder = os.path.join(build_dir, "torch")
    os.makedirs(folder, exist_ok=True)
    return load("torch_lltm_cpp", [os.path.join(LLTM_CPP, "torch_lltm.cpp")], build_directory=folder)


def _torch_cell(impl: str, build_dir: str):
    """The tutorial's ``LLTM`` module: its C++ ``LLTMFunction`` or its pure-Python forward."""
    torch = library("torch")
    ext = _torch_extension(build_dir) if impl == "torch C++" else None

    class LLTMFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weights, bias, old_h, old_cell):
            outputs = ext.forward(input, weights, bias, old_h, old_cell)
            new_h, new_cell = outputs[:2]
            ctx.save_for_backward(*outputs[1:], weights)
            return new_h, new_cell

        @staticmethod
        def backward(ctx, grad_h, grad_cell):
            d_old_h, d_input, d_weights, d_bias, d_old_cell = ext.backward(
                grad_h.contiguous(), grad_cell.contiguous(), *ctx.saved_tensors)
            return d_input, d_weights, d_bias, d_old_h, d_old_cell

    class LLTM(torch.nn.Module):
        def __init__(self, input_features, state_size):
            super().__init__()
            self.state_size = state_size
            self.weights = torch.nn.Parameter(torch.empty(3 * state_size, input_features + state_size))
            self.bias = torch.nn.Parameter(torch.empty(3 * state_size))

        def forward(self, input, state):
            old_h, old_cell = state
            if ext is not None:
                return LLTMFunction.apply(input, self.weights, self.bias, old_h, old_cell)
            X = torch.cat([old_h, input], dim=1)
            gates = torch.addmm(self.bias, X, self.weights.t()).chunk(3, dim=1)
            input_gate, output_gate = torch.sigmoid(gates[0]), torch.sigmoid(gates[1])
            candidate_cell = torch.nn.functional.elu(gates[2])
            new_cell = old_cell + candidate_cell * input_gate
            return torch.tanh(new_cell) * output_gate, new_cell

    return LLTM


def _toolkit_cell(impl: str, build_dir: str):
    """toolkit's two extension LLTMs, both called as ``cell(x, (h, c))``."""
    os.environ["TOOLKIT_EXTENSIONS_DIR"] = os.path.join(build_dir, "toolkit")
    if impl == "toolkit C++":
        mod = _module("bench_lltm_cpp", os.path.join(LLTM_CPP, "lltm.py"))
        mod.build()  # compile (first process) or load the cached build before anything is timed
        return mod.LLTM
    numba_lltm = _module("bench_lltm_numba", os.path.join(REPO, "extensions", "lltm.py")).LLTM

    class LLTM(numba_lltm):
        def forward(self, x, state):
            return super().forward(x, *state)

    return LLTM


def lltm_step(impl: str, batch: int, state: int, backward: bool, build_dir: str):
    """One LLTM step of column ``impl`` at ``batch`` x ``state`` (input 32, float32): the forward, or the forward and
    the backward of ``new_h.sum() + new_cell.sum()``. The parameters and inputs are the same numbers in every
    library (a seeded numpy generator, uniform in +-1/sqrt(state) for the parameters as the tutorial's init)."""
    lib = library(IMPLS[impl])
    make = _torch_cell if IMPLS[impl] == "torch" else _toolkit_cell
    model = make(impl, build_dir)(INPUT, state)
    rng = np.random.default_rng(0)
    bound = 1.0 / math.sqrt(state)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
    x, h, c = (lib.from_numpy(rng.standard_normal(shape).astype(np.float32))
               for shape in ((batch, INPUT), (batch, state), (batch, state)))
    if not backward:
        return lambda: model(x, (h, c))

    def run():
        model.zero_grad(set_to_none=True)
        new_h, new_cell = model(x, (h, c))
        (new_h.sum() + new_cell.sum()).backward()
    return run


def build(impl: str, build_dir: str) -> dict:
    """Build (or load) ``impl``'s extension into ``build_dir`` and run one step: seconds it took."""
    start = time.perf_counter()
    lltm_step(impl, *SIZES[0], True, build_dir)()
    return {"seconds": time.perf_counter() - start}


def _number(batch: int, state: int, backward: bool) -> int:
    """Calls per timed sample: enough for a sample of some tens of milliseconds on the slowest column."""
    return (20 if batch * state <= 4096 else 3) * (1 if backward else 2)


def _row(batch: int, state: int, backward: bool, build_dir: str) -> tuple[str, dict]:
    what = "forward+backward" if backward else "forward"
    variants = [Variant(label, f"{HERE}:lltm_step", (label, batch, state, backward, build_dir),
                        _number(batch, state, backward)) for label in IMPLS]
    return f"{what}, batch {batch}, input {INPUT}, state {state}", measure(variants)


def _table(rows: list[tuple[str, dict]], builds: dict) -> str:
    labels = list(IMPLS)
    out = ["### LLTM extensions (the C++-extension tutorial's cell)", "",
           f"Target: none set; each column's ratio of best figures to {BASELINE} (below 1.00x: faster)", "",
           "| case | " + " | ".join(f"{k} (best / median)" for k in labels) + " | "
           + " | ".join(f"{k} / {BASELINE}" for k in labels if k != BASELINE) + " |",
           "|---" * (2 * len(labels)) + "|"]
    for case, times in rows:
        out.append(f"| {case} | " + " | ".join(cell(times[k]) for k in labels) + " | "
                   + " | ".join(ratio(times[k], times[BASELINE]) for k in labels if k != BASELINE) + " |")
    built = "; ".join(f"{k}: {v['seconds']:.1f} s" if "seconds" in v else f"{k}: failed ({v.get('error', '')})"
                      for k, v in builds.items())
    note = threads_note(rows)
    return "\n".join(out) + f"\n\nBuild (or cache load) and first step, before timing: {built}" \
        + ("\n" + note if note else "") + "\n"


def main() -> str:
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-extensions-") as build_dir:
        builds = {impl: run_json(f"{HERE}:build", impl, build_dir) for impl in ("toolkit C++", "torch C++")}
        rows = [_row(batch, state, backward, build_dir) for batch, state in SIZES for backward in (False, True)]
    return _table(rows, builds)
