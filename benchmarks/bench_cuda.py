"""CUDA benchmarks, side by side with PyTorch CUDA: a fused elementwise chain on 100M float32 against the
GPU's memory bandwidth, a 4096x4096 float32 matmul in GFLOP/s, and the seed's Net training step at batch 256,
each library in processes of its own.

They need a GPU: without one (or under numba's simulator) the section says so and records nothing.
Targets: the fused chain at least 70% of the GPU's memory bandwidth; matmul and the Net step reported
against PyTorch's.
"""

from __future__ import annotations

import numpy as np

from .common import cell, ratio
from .harness import Timing, Variant, library, measure, run_json
from .models import seed_net

CHAIN_ELEMENTS = 100_000_000
MATMUL_N = 4096
NET_BATCH = 256
HERE = "benchmarks.bench_cuda"
#: calls per timed sample, the device synchronized once after them (so a sample is not mostly sync latency)
BURST = {"chain": 10, "matmul": 3, "net_step": 5}


# -- probes and setups: each runs in a fresh process with only its own library imported -------------------------
def _bandwidth_gb_s() -> float:
    """The device's peak memory bandwidth from its attributes (memory clock and bus width), in GB/s."""
    from numba import cuda

    dev = cuda.get_current_device()
    return 2 * dev.MEMORY_CLOCK_RATE * 1e3 * dev.GLOBAL_MEMORY_BUS_WIDTH / 8 / 1e9


def probe(lib_name: str) -> dict:
    """Whether ``lib_name`` has a real GPU here; for toolkit also the device's name and peak bandwidth."""
    lib = library(lib_name)
    if lib_name == "torch":
        return {"gpu": lib.cuda.is_available()}
    from toolkit.backends.cuda import runtime

    if not lib.cuda.is_available() or runtime.simulated():
        return {"gpu": False}
    return {"gpu": True, "name": lib.cuda.get_device_name(0), "bandwidth": _bandwidth_gb_s()}


def _burst(fn, sync, n: int):
    """``n`` calls of ``fn`` and one device synchronization: the callable a timed sample runs."""
    def run():
        for _ in range(n):
            fn()
        sync()

    return run


def _chain(x):
    return (x * 2.0 + 1.0).sigmoid() * x - 0.5


def chain(lib_name: str):
    lib = library(lib_name)
    x = lib.rand(CHAIN_ELEMENTS, device="cuda")
    fused = lib.jit.trace(_chain, (x,))
    return _burst(lambda: fused(x), lib.cuda.synchronize, BURST["chain"])


def matmul(lib_name: str):
    lib = library(lib_name)
    a = lib.randn(MATMUL_N, MATMUL_N, device="cuda")
    b = lib.randn(MATMUL_N, MATMUL_N, device="cuda")
    return _burst(lambda: a @ b, lib.cuda.synchronize, BURST["matmul"])


def net_step(lib_name: str):
    """One training step of the seed's Net at batch ``NET_BATCH`` (SGD with momentum) on the GPU."""
    lib = library(lib_name)
    rng = np.random.default_rng(0)
    model = seed_net(lib_name).to("cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.tensor(rng.standard_normal((NET_BATCH, 1, 28, 28)).astype(np.float32), device="cuda")
    y = lib.tensor(rng.integers(0, 10, NET_BATCH), device="cuda")

    def step():
        opt.zero_grad()
        lib.nn.functional.nll_loss(model(x), y).backward()
        opt.step()

    return _burst(step, lib.cuda.synchronize, BURST["net_step"])


# -- tables ------------------------------------------------------------------------------------------------------
def _per_call(t: Timing, n: int) -> Timing:
    return Timing([s / n for s in t.samples], t.threads, t.error)


def _times(case: str, libs: tuple) -> dict:
    """Seconds per call of ``case`` for each library, one variant each in processes of its own."""
    t = measure([Variant(lib, f"{HERE}:{case}", (lib,)) for lib in libs])
    return {lib: _per_call(t[lib], BURST[case]) for lib in libs}


def _rows(libs: tuple, peak_gb_s: float) -> list:
    none = Timing([], error="PyTorch CUDA not available")
    rows = []
    t = _times("chain", libs)
    tk, tt = t["toolkit"], t.get("torch", none)
    moved = 2 * CHAIN_ELEMENTS * 4  # one read and one write of float32
    gb_s = moved / tk.best / 1e9
    figure = f"{gb_s:.0f} GB/s ({gb_s / peak_gb_s:.0%} of {peak_gb_s:.0f} GB/s)" if tk.samples else "n/a"
    rows.append(f"| fused chain, 100M float32 | {cell(tk)} | {cell(tt)} | {figure} |")

    t = _times("matmul", libs)
    tk, tt = t["toolkit"], t.get("torch", none)
    flops = 2 * MATMUL_N ** 3
    gflops = {k: f"{flops / v.best / 1e9:.0f}" if v.samples else "n/a" for k, v in (("toolkit", tk), ("torch", tt))}
    rows.append(f"| matmul 4096 float32 | {cell(tk)} | {cell(tt)} | "
                f"{gflops['toolkit']} GFLOP/s against {gflops['torch']} |")

    t = _times("net_step", libs)
    tk, tt = t["toolkit"], t.get("torch", none)
    rows.append(f"| seed Net training step, batch {NET_BATCH} | {cell(tk)} | {cell(tt)} | {ratio(tk, tt)} |")
    return rows


def main() -> str:
    head = ["### CUDA", "",
            "Target: a fused elementwise chain at least 70% of the GPU's memory bandwidth; matmul and the seed's "
            "Net training step against PyTorch CUDA.", ""]
    tk = run_json(f"{HERE}:probe", "toolkit")
    if "error" in tk:
        return "\n".join(head + [f"Not run: toolkit's CUDA probe failed ({tk['error']}).", ""])
    if not tk["gpu"]:
        return "\n".join(head + ["No GPU on this machine: the CUDA benchmarks did not run. The CUDA kernels are "
                                 "tested under numba's CUDA simulator (tests/cuda), on small shapes.", ""])
    torch_gpu = run_json(f"{HERE}:probe", "torch").get("gpu", False)
    libs = ("toolkit", "torch") if torch_gpu else ("toolkit",)
    lines = head + [f"Device: {tk['name']}; PyTorch CUDA {'available' if torch_gpu else 'not installed'}. Each "
                    "library in fresh processes of its own, rounds interleaved; a timed sample is "
                    f"{BURST['chain']} chains, {BURST['matmul']} matmuls or {BURST['net_step']} steps and one device "
                    "synchronization, given per call as best / median; GB/s, GFLOP/s and the ratio from the best "
                    "figures.", "", "| case | toolkit | torch | figure |", "|---|---|---|---|",
                    *_rows(libs, tk["bandwidth"]), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
