"""Profiler costs: per-op dispatch overhead with the profiler off and on, and the seed's Net
training step profiled against unprofiled, each beside PyTorch's profiler on the same work.

Targets: profiler off, no measurable change in per-op overhead (the dispatcher's one
``if STATE.observers`` check); profiler on, the Net training step at most 1.25x slower.
"""

from __future__ import annotations

import time

import numpy as np
import torch

import toolkit
import toolkit.profiler
from toolkit.demo import seed_net

from .common import compare, fmt

BATCH = 64


def _op_rows() -> list:
    a, b = toolkit.ones(1), toolkit.ones(1)
    ta, tb = torch.ones(1), torch.ones(1)
    off = compare({"toolkit": lambda: a + b, "torch": lambda: ta + tb}, 20000, 7)
    with toolkit.profiler.profile():
        on_tk = compare({"toolkit": lambda: a + b}, 2000, 5)["toolkit"]
    with torch.profiler.profile():
        on_t = compare({"torch": lambda: ta + tb}, 2000, 5)["torch"]
    return [("add, 1 element, profiler off", off), ("add, 1 element, profiler on", {"toolkit": on_tk, "torch": on_t})]


def _train_step(lib, steps: int):
    lib.manual_seed(0)
    model = seed_net(lib)
    model.train()
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, BATCH))
    F = lib.nn.functional

    def step():
        for _ in range(steps):
            opt.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            opt.step()

    return step


def _net_rows() -> list:
    rows = {}
    for lib, prof in ((toolkit, toolkit.profiler.profile), (torch, torch.profiler.profile)):
        step = _train_step(lib, 1)
        step()
        off = on = float("inf")
        for _ in range(15):  # one step each, interleaved, best of: a shared machine's slow phases hit both
            t = time.perf_counter()
            step()
            off = min(off, time.perf_counter() - t)
            with prof() as p:
                t = time.perf_counter()
                step()
                on = min(on, time.perf_counter() - t)
        rows[lib.__name__] = (off, on, len(p.events()))
    return rows


def main() -> str:
    ops = _op_rows()
    net = _net_rows()
    out = ["### Profiler overhead", "",
           "Target: profiler off, per-op overhead unchanged (the dispatcher pays one `if STATE.observers` check); "
           "profiler on, the seed's Net training step at most 1.25x the unprofiled step.", "",
           "| case | toolkit | torch | ratio |", "|---|---|---|---|"]
    for case, t in ops:
        out.append(f"| {case} | {fmt(t['toolkit']).strip()} | {fmt(t['torch']).strip()} | "
                   f"{t['toolkit'] / t['torch']:.2f}x |")
    out += ["", f"| seed Net training step, batch {BATCH} (SGD, momentum) | unprofiled | profiled | events per step "
            "| slowdown |", "|---|---|---|---|---|"]
    for lib, (off, on, n) in net.items():
        out.append(f"| {lib} | {fmt(off).strip()} | {fmt(on).strip()} | {n} | {on / off:.2f}x |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(main())
