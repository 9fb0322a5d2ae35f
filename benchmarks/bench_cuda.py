"""CUDA benchmarks, side by side with PyTorch CUDA: a fused elementwise chain on 100M float32 against the
GPU's memory bandwidth, a 4096x4096 float32 matmul in GFLOP/s, and the seed's Net training step at batch 256.

They need a GPU: without one (or under numba's simulator) the section says so and records nothing.
Targets: the fused chain at least 70% of the GPU's memory bandwidth; matmul and the Net step reported
against PyTorch's.
"""

from __future__ import annotations

import time

import numpy as np
import torch

import toolkit
from toolkit.backends.cuda import runtime
from toolkit.demo import seed_net

from .common import fmt

CHAIN_ELEMENTS = 100_000_000
MATMUL_N = 4096
NET_BATCH = 256


def _timed(fn, sync, number: int, repeat: int = 5) -> float:
    """Best seconds per call, each timing synchronized with the device."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _chain(x):
    return (x * 2.0 + 1.0).sigmoid() * x - 0.5


def _bandwidth_gb_s() -> float:
    """The device's peak memory bandwidth from its attributes (memory clock and bus width), in GB/s."""
    from numba import cuda

    dev = cuda.get_current_device()
    clock_khz = dev.MEMORY_CLOCK_RATE
    bus_bits = dev.GLOBAL_MEMORY_BUS_WIDTH
    return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9


def _rows() -> list:
    torch_cuda = torch.cuda.is_available()
    sync = toolkit.cuda.synchronize
    tsync = torch.cuda.synchronize if torch_cuda else (lambda: None)
    rows = []

    x = toolkit.rand(CHAIN_ELEMENTS, device="cuda")
    fused = toolkit.jit.trace(_chain, (x,))
    t_tk = _timed(lambda: fused(x), sync, 10)
    moved = 2 * CHAIN_ELEMENTS * 4  # one read and one write of float32
    peak = _bandwidth_gb_s()
    t_t = float("nan")
    if torch_cuda:
        tx = torch.rand(CHAIN_ELEMENTS, device="cuda")
        tf = torch.jit.trace(_chain, (tx,))
        t_t = _timed(lambda: tf(tx), tsync, 10)
    rows.append(f"| fused chain, 100M float32 | {fmt(t_tk).strip()} | {fmt(t_t).strip()} | "
                f"{moved / t_tk / 1e9:.0f} GB/s ({moved / t_tk / 1e9 / peak:.0%} of {peak:.0f} GB/s) |")

    a = toolkit.randn(MATMUL_N, MATMUL_N, device="cuda")
    b = toolkit.randn(MATMUL_N, MATMUL_N, device="cuda")
    t_tk = _timed(lambda: a @ b, sync, 3)
    flops = 2 * MATMUL_N ** 3
    t_t = float("nan")
    if torch_cuda:
        ta, tb = torch.randn(MATMUL_N, MATMUL_N, device="cuda"), torch.randn(MATMUL_N, MATMUL_N, device="cuda")
        t_t = _timed(lambda: ta @ tb, tsync, 3)
    rows.append(f"| matmul 4096 float32 | {fmt(t_tk).strip()} | {fmt(t_t).strip()} | "
                f"{flops / t_tk / 1e9:.0f} GFLOP/s against {flops / t_t / 1e9:.0f} |")

    rows.append(_net_row(torch_cuda, sync, tsync))
    return rows


def _net_row(torch_cuda: bool, sync, tsync) -> str:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((NET_BATCH, 1, 28, 28)).astype(np.float32)
    y_np = rng.integers(0, 10, NET_BATCH)

    def step_fn(lib, dev):
        lib.manual_seed(0)
        model = seed_net(lib).to(dev)
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = lib.tensor(x_np, device=dev), lib.tensor(y_np, device=dev)

        def step():
            opt.zero_grad()
            lib.nn.functional.nll_loss(model(x), y).backward()
            opt.step()
        return step

    t_tk = _timed(step_fn(toolkit, "cuda"), sync, 5)
    t_t = _timed(step_fn(torch, "cuda"), tsync, 5) if torch_cuda else float("nan")
    return f"| seed Net training step, batch 256 | {fmt(t_tk).strip()} | {fmt(t_t).strip()} | {t_tk / t_t:.2f}x |"


def main() -> str:
    head = ["### CUDA", "",
            "Target: a fused elementwise chain at least 70% of the GPU's memory bandwidth; matmul and the seed's "
            "Net training step against PyTorch CUDA.", ""]
    if not toolkit.cuda.is_available() or runtime.simulated():
        return "\n".join(head + ["No GPU on this machine: the CUDA benchmarks did not run. The CUDA kernels are "
                                 "tested under numba's CUDA simulator (tests/cuda), on small shapes.", ""])
    name = toolkit.cuda.get_device_name(0)
    lines = head + [f"Device: {name}; PyTorch CUDA {'available' if torch.cuda.is_available() else 'not installed'}.",
                    "", "| case | toolkit | torch | figure |", "|---|---|---|---|", *_rows(), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
