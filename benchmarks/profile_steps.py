"""Where toolkit's time goes in the eager-speed benchmarks: per op, and Python's share, as markdown.

    python -m benchmarks.profile_steps                 # every workload, both views
    python -m benchmarks.profile_steps --run NAME      # NAME's loop only, for a sampling profiler (py-spy)
    python -m benchmarks.profile_steps --sampled FILE  # py-spy's raw (collapsed) output, summed by layer

Two views of the same loops (the benchmarks' own setups, toolkit only in this process):

* toolkit's op-level profiler: each op dispatch and backward node is one event; the table lists each op's
  calls and *self* time (its time less its children's), so the shares add up, against the loop's wall time
  measured with the profiler on (the profiler's own cost per event is in that wall time, not in any op).
* cProfile's self time per function, summed by the layer its file belongs to (dispatch, autograd recording,
  the engine, the optimizer, nn modules, the op kernels with the numpy / numba / BLAS code they call). cProfile
  charges C code (numpy, BLAS, compiled numba) to the Python function that called it, so "kernels" holds the
  kernels' Python wrappers and their native work together; its per-call cost inflates Python-heavy layers,
  which is why a sampling profiler's figures are given beside it where py-spy runs.
"""

from __future__ import annotations

import cProfile
import importlib.util
import linecache
import os
import pstats
import re
import sys
import time
from collections import defaultdict

from .bench_core import add_one, tensor_autograd
from .bench_nn import net_step
from .bench_train import lstm_step, mlp_adam_step

#: name -> (title, setup returning the callable, calls per profiled loop)
WORKLOADS = {
    "net": ("seed Net train step, batch 64, SGD", lambda: net_step("toolkit", True), 20),
    "two_layer": ("two-layer net with autograd, 500 steps", lambda: tensor_autograd("toolkit"), 1),
    "mlp_adam": ("MLP 64->256->256->10, Adam, batch 64, one step", lambda: mlp_adam_step("toolkit"), 100),
    "lstm": ("nn.LSTM 256, seq 50, batch 32, train step", lambda: lstm_step("toolkit"), 2),
    "add": ("a + b, 1 element", lambda: add_one("toolkit"), 20000),
}

#: (layer, path fragments of the toolkit files it holds), first match wins; anything else is "other Python"
KERNELS = "op kernels (Python wrappers + numpy/numba/BLAS)"
LAYERS = (
    ("engine (backward pass)", ("toolkit/autograd/engine.py",)),
    ("autograd recording", ("toolkit/autograd/",)),
    (KERNELS, ("toolkit/_core/blas_threads.py",)),  # the BLAS product itself, called through _core
    ("dispatch and Tensor call path", ("toolkit/dispatch/", "toolkit/tensor.py", "toolkit/_tensor_methods.py",
                                       "toolkit/_core/", "toolkit/_switches.py", "toolkit/amp/")),
    ("optimizer loop", ("toolkit/optim/",)),
    ("nn modules and functional", ("toolkit/nn/",)),
    (KERNELS, ("toolkit/ops/", "toolkit/backends/", "numpy/", "numba/", "~")),
    ("benchmark loop and profiler", ("toolkit/profiler/", "benchmarks/", "cProfile", "timeit")),
)


def layer(filename: str) -> str:
    path = filename.replace(os.sep, "/")
    for name, parts in LAYERS:
        if any(p in path for p in parts):
            return name
    return "other Python"


def _loop(name: str):
    _, setup, calls = WORKLOADS[name]
    run = setup()
    run()  # warm-up: numba compilation, caches

    def loop():
        for _ in range(calls):
            run()

    loop()
    return loop, calls


def op_table(name: str, rows: int = 14) -> str:
    """The op-level profiler's per-op self times over one loop of ``name``."""
    import toolkit  # optional: only this view needs the profiler

    loop, calls = _loop(name)
    with toolkit.profiler.profile() as prof:
        start = time.perf_counter()
        loop()
        wall_us = (time.perf_counter() - start) * 1e6
    avg = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    in_ops = sum(e.self_cpu_time_total for e in avg)
    out = ["| op | calls per step | self ms per step | share of step |", "|---|---|---|---|"]
    for e in avg[:rows]:
        out.append(f"| `{e.key}` | {e.count / calls:g} | {e.self_cpu_time_total / calls / 1e3:.3f} | "
                   f"{e.self_cpu_time_total / wall_us:.1%} |")
    rest = sum(e.self_cpu_time_total for e in avg[rows:])
    out.append(f"| {len(avg) - rows if len(avg) > rows else 0} other ops | | {rest / calls / 1e3:.3f} | "
               f"{rest / wall_us:.1%} |")
    out.append(f"| outside any op (module code, optimizer loop, profiler) | | {(wall_us - in_ops) / calls / 1e3:.3f} |"
               f" {(wall_us - in_ops) / wall_us:.1%} |")
    return f"Step with the profiler on: {wall_us / calls / 1e3:.3f} ms.\n\n" + "\n".join(out)


def _shares(by_layer: dict) -> str:
    total = sum(by_layer.values())
    out = ["| layer | share |", "|---|---|"]
    for name, t in sorted(by_layer.items(), key=lambda kv: -kv[1]):
        out.append(f"| {name} | {t / total:.1%} |")
    return "\n".join(out)


def layer_table(name: str, functions: int = 8) -> str:
    """cProfile's self time over one loop of ``name``, summed by layer, and its ``functions`` costliest
    functions."""
    loop, calls = _loop(name)
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.runcall(loop)
    wall = time.perf_counter() - start
    by_layer: dict = defaultdict(float)
    stats = pstats.Stats(prof).stats
    for (filename, _, _), (_, _, tottime, _, _) in stats.items():
        by_layer[layer(filename)] += tottime
    total = sum(by_layer.values())
    top = ["| function (self time) | layer | calls per step | share |", "|---|---|---|---|"]
    for (filename, line, func), (_, ncalls, tottime, _, _) in sorted(stats.items(), key=lambda kv: -kv[1][2])[:functions]:
        where = func if filename == "~" else f"{filename.split('site-packages/')[-1].split('g6_head/')[-1]}:{line} {func}"
        top.append(f"| `{where}` | {layer(filename)} | {ncalls / calls:g} | {tottime / total:.1%} |")
    return (f"Step under cProfile: {wall / calls * 1e3:.3f} ms.\n\n" + _shares(by_layer) + "\n\n"
            + "\n".join(top))


#: Where the dispatcher calls a kernel directly (a numpy ufunc, a compiled numba function): a sample whose
#: innermost Python frame stands on such a line is time in that kernel's native code, not in dispatch.
KERNEL_CALL = re.compile(r"\bkernel\(\*arrays\)")
FRAME = re.compile(r"\((?P<file>[^()]*):(?P<line>\d+)\)$")


def _frame_layer(frame: str) -> str:
    m = FRAME.search(frame)
    if m and m["file"].startswith("toolkit/"):
        root = os.path.dirname(os.path.dirname(importlib.util.find_spec("toolkit").origin))
        if KERNEL_CALL.search(linecache.getline(os.path.join(root, m["file"]), int(m["line"]))):
            return layer("~")
    return layer(frame)


def sampled_table(path: str) -> str:
    """py-spy's raw output (``frame;frame;... count`` lines, innermost frame last) summed by the layer of each
    sample's innermost toolkit, numpy or numba frame (the code that was running, or that called into C; a
    dispatcher line that calls a kernel counts as the kernel); samples outside the profiled loop (imports,
    setup, warm-up) are left out."""
    by_layer: dict = defaultdict(float)
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            frames = stack.split(";")
            if not any(fr.startswith("_loop.<locals>.loop (") for fr in frames) or any(
                    fr.startswith("_loop (") for fr in frames):
                continue  # outside the profiled loop: imports, setup, warm-up
            ours = [fr for fr in frames if any(k in fr for k in ("toolkit/", "numpy/", "numba/"))]
            by_layer[_frame_layer(ours[-1]) if ours else "benchmark loop and profiler"] += int(count)
    return _shares(by_layer)


def main(argv: list) -> None:
    if argv[:1] == ["--run"]:
        loop, _ = _loop(argv[1])
        end = time.perf_counter() + float(argv[2] if len(argv) > 2 else 10)
        while time.perf_counter() < end:
            loop()
        return
    if argv[:1] == ["--sampled"]:
        print(sampled_table(argv[1]))
        return
    for name in argv or WORKLOADS:
        print(f"#### {WORKLOADS[name][0]}\n\n{op_table(name)}\n\n{layer_table(name)}\n", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
