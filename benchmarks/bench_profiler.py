"""Profiler costs: per-op dispatch overhead with the profiler off and on, and the seed's Net
training step profiled against unprofiled, each beside PyTorch's profiler on the same work,
each library in processes of its own.

Targets: profiler off, no measurable change in per-op overhead (the dispatcher's one
``if STATE.observers`` check); profiler on, the Net training step at most 1.25x slower.
"""

from __future__ import annotations

import atexit
import time

import numpy as np

from .common import cell, table
from .harness import REPEAT, ROUNDS, Timing, Variant, library, measure, run_json
from .models import seed_net

BATCH = 64
PAIRS = 3 * REPEAT  # unprofiled and profiled steps alternating in each process (15 by default)
HERE = "benchmarks.bench_profiler"
LIBS = ("toolkit", "torch")


# -- setups and in-process measurements: each runs in a fresh process with only its own library imported -------
def _profiler(lib_name: str):
    return library(f"{lib_name}.profiler")


def add_one(lib_name: str, profiled: bool = False):
    """A 1-element add; with ``profiled``, inside the library's profiler, entered here and left at exit."""
    lib = library(lib_name)
    a, b = lib.ones(1), lib.ones(1)
    if profiled:
        prof = _profiler(lib_name).profile()
        prof.__enter__()
        atexit.register(prof.__exit__, None, None, None)
    return lambda: a + b


def _train_step(lib_name: str):
    """One training step of the seed's Net at batch ``BATCH`` (SGD with momentum) on fixed random data."""
    lib = library(lib_name)
    model = seed_net(lib_name)
    model.train()
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, BATCH))
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        opt.step()

    return step


def net_overhead(lib_name: str, pairs: int) -> dict:
    """``pairs`` unprofiled and profiled training steps alternating in this one process, so that the machine's
    slow phases hit both; seconds of each step (a profiled step is timed inside its own profiler session) and
    the number of events the last profiled step recorded."""
    profile = _profiler(lib_name).profile
    step = _train_step(lib_name)
    step()
    with profile():  # warm up the profiled path too (lazy set-up on its first use)
        step()
    off, on = [], []
    for _ in range(pairs):
        t = time.perf_counter()
        step()
        off.append(time.perf_counter() - t)
        with profile() as p:
            t = time.perf_counter()
            step()
            on.append(time.perf_counter() - t)
    return {"off": off, "on": on, "events": len(p.events())}


# -- tables ------------------------------------------------------------------------------------------------------
def per_op_rows() -> list:
    """add of 1 element, profiler off and on: four variants, each its own process, rounds interleaved."""
    variants = [Variant(f"{lib} {state}", f"{HERE}:add_one", (lib, state == "on"), number)
                for state, number in (("off", 20000), ("on", 2000)) for lib in LIBS]
    t = measure(variants)
    return [(f"add, 1 element, profiler {state}", {lib: t[f"{lib} {state}"] for lib in LIBS}) for state in ("off", "on")]


def net_rows() -> dict:
    """Per library: unprofiled and profiled step times over ``ROUNDS`` processes (libraries interleaved), and
    the events one profiled step records."""
    out = {lib: {"off": Timing([]), "on": Timing([]), "events": 0} for lib in LIBS}
    for _ in range(ROUNDS):
        for lib in LIBS:
            res = run_json(f"{HERE}:net_overhead", lib, PAIRS)
            if "error" in res:
                out[lib]["off"].error = out[lib]["on"].error = res["error"]
                continue
            out[lib]["off"].samples.extend(res["off"])
            out[lib]["on"].samples.extend(res["on"])
            out[lib]["events"] = res["events"]
    return out


def net_table(rows: dict) -> str:
    out = [f"Seed Net training step, batch {BATCH} (SGD, momentum): each library's unprofiled and profiled steps "
           f"alternate inside one process of that library ({PAIRS} pairs per process, {ROUNDS} processes per "
           "library, libraries interleaved), so that both sides of the slowdown see the same process and the same "
           "phase of the machine; the slowdown is the ratio of the best figures.", "",
           "| library | unprofiled (best / median) | profiled (best / median) | events per step | slowdown |",
           "|---|---|---|---|---|"]
    for lib, r in rows.items():
        off, on = r["off"], r["on"]
        slowdown = f"{on.best / off.best:.2f}x" if off.samples and on.samples else "n/a"
        out.append(f"| {lib} | {cell(off)} | {cell(on)} | {r['events']} | {slowdown} |")
    return "\n".join(out) + "\n"


def main() -> str:
    ops = table("Profiler overhead", per_op_rows(),
                "profiler off, per-op overhead unchanged (the dispatcher pays one `if STATE.observers` check); "
                "profiler on, the seed's Net training step at most 1.25x the unprofiled step.")
    note = ("Per-op rows: each cell is its own variant (library, profiler off or on), every one timed in fresh "
            "processes of its own with the rounds interleaved; a profiled process enters the profiler before "
            "timing and records every call (20,000 calls per sample off, 2,000 on).")
    return "\n".join([ops, note, "", net_table(net_rows())])


if __name__ == "__main__":
    print(main())
