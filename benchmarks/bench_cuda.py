"""CUDA benchmarks, side by side with PyTorch CUDA, each library in processes of its own: a fused elementwise
chain on 100M float32 against the GPU's measured device-to-device copy bandwidth, a 4096x4096 float32 matmul in
GFLOP/s, the seed's Net training step at batch 256, the seed's LSTM cell at batch 64 and hidden 512 (eager, traced
and fused, torch.jit.script), and the time to compile a new CUDA fusion group and to load it from the disk cache.

They need a GPU: without one the section says so and records nothing. Under numba's CUDA simulator
(``TOOLKIT_CUDA_SIMULATOR=1``), or with ``TOOLKIT_BENCH_CUDA_SMALL=1`` on a GPU, every row runs at tiny sizes,
one round: a check that each code path runs, not a measurement (the simulator's threads are Python threads).
Targets: the fused chain at least 70% of the measured copy bandwidth; matmul, the Net step and the LSTM cell
reported against PyTorch's.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

from . import bench_fusion
from .bench_fusion import _check_close, _lstm_inputs, _map, _numpy_lstm_cell, _prepare, _recorded, _version
from .common import cell, fmt, ratio
from .harness import REPO, ROUNDS, Timing, Variant, library, measure, run_json
from .models import seed_net

HERE = "benchmarks.bench_cuda"
SIMULATED = os.environ.get("TOOLKIT_CUDA_SIMULATOR") == "1"
#: tiny sizes and one round: under the simulator always, on a GPU with ``TOOLKIT_BENCH_CUDA_SMALL=1``
SMALL = SIMULATED or os.environ.get("TOOLKIT_BENCH_CUDA_SMALL") == "1"
SIZES = {
    "chain": 100_000_000, "matmul": 4096, "net_batch": 256, "lstm": (64, 512), "compile_chain": 1_000_000,
} if not SMALL else {
    "chain": 4096, "matmul": 8, "net_batch": 1, "lstm": (2, 4), "compile_chain": 1024,
}
#: calls per timed sample, the device synchronized once after them (so a sample is not mostly sync latency)
BURST = {"copy": 10, "memcpy": 10, "chain": 10, "matmul": 3, "net_step": 5, "lstm": 20}
if SMALL:
    BURST = dict.fromkeys(BURST, 1)
#: (rounds, repeat) for measure: the harness's defaults, or one short round at tiny sizes
SAMPLING = (1, 2) if SMALL else (None, None)
#: numba picks the simulator when it is first imported: a process using numba.cuda without toolkit needs this
NUMBA_ENV = {"NUMBA_ENABLE_CUDASIM": "1"} if SIMULATED else {}


# -- probes and setups: each runs in a fresh process with only its own library imported -------------------------
def _bandwidth_gb_s() -> float:
    """The device's peak memory bandwidth from its attributes (memory clock and bus width), in GB/s."""
    from numba import cuda

    dev = cuda.get_current_device()
    return 2 * dev.MEMORY_CLOCK_RATE * 1e3 * dev.GLOBAL_MEMORY_BUS_WIDTH / 8 / 1e9


def probe(lib_name: str) -> dict:
    """Whether ``lib_name`` has a GPU here (for torch also whether it was built with CUDA); for toolkit also the
    device's name, its peak bandwidth and whether it is numba's simulator."""
    lib = library(lib_name)
    if lib_name == "torch":
        return {"gpu": lib.cuda.is_available(), "cuda_build": lib.version.cuda, "version": lib.__version__}
    from toolkit.backends.cuda import runtime

    if not lib.cuda.is_available():
        return {"gpu": False}
    if runtime.simulated():
        return {"gpu": True, "simulated": True, "name": lib.cuda.get_device_name(0), "bandwidth": float("nan")}
    return {"gpu": True, "simulated": False, "name": lib.cuda.get_device_name(0), "bandwidth": _bandwidth_gb_s()}


def _burst(fn, sync, n: int):
    """``n`` calls of ``fn`` and one device synchronization: the callable a timed sample runs."""
    def run():
        for _ in range(n):
            fn()
        sync()

    return run


def _chain(x):
    return (x * 2.0 + 1.0).sigmoid() * x - 0.5


def _numpy_chain(x):
    return x / (1.0 + np.exp(-(x * 2.0 + 1.0))) - 0.5


def chain(lib_name: str, n: int):
    """``_chain`` traced (toolkit fuses it into one CUDA kernel; PyTorch's profiling executor fuses it too)."""
    lib = library(lib_name)
    x = lib.rand(n, device="cuda")
    fused = lib.jit.trace(_chain, (x,))
    head = x[:1_000_000]  # the first million elements checked: enough to catch a wrong kernel, cheap at 100M
    _check_close(fused(x)[:1_000_000].cpu(), _numpy_chain(head.cpu().numpy().astype(np.float64)), f"chain, {lib_name}")
    return _burst(lambda: fused(x), lib.cuda.synchronize, BURST["chain"])


def copy(lib_name: str, n: int):
    """``y.copy_(x)`` between two ``n``-element float32 tensors on the device."""
    lib = library(lib_name)
    x = lib.rand(n, device="cuda")
    y = lib.empty(n, device="cuda")
    return _burst(lambda: y.copy_(x), lib.cuda.synchronize, BURST["copy"])


def memcpy(n: int):
    """The driver's device-to-device copy of ``n`` float32 (numba.cuda alone, no tensor library): the yardstick."""
    from numba import cuda

    src = cuda.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    dst = cuda.device_array(n, np.float32)
    return _burst(lambda: dst.copy_to_device(src), cuda.synchronize, BURST["memcpy"])


def matmul(lib_name: str, n: int):
    lib = library(lib_name)
    a = lib.randn(n, n, device="cuda")
    b = lib.randn(n, n, device="cuda")
    if n <= 64:  # float32 sums over 4096 terms drift past the check's tolerance; the small case checks the path
        _check_close((a @ b).cpu(), a.cpu().numpy().astype(np.float64) @ b.cpu().numpy(), f"matmul, {lib_name}")
    return _burst(lambda: a @ b, lib.cuda.synchronize, BURST["matmul"])


def net_step(lib_name: str, batch: int):
    """One training step of the seed's Net at ``batch`` (SGD with momentum) on the GPU."""
    lib = library(lib_name)
    rng = np.random.default_rng(0)
    model = seed_net(lib_name).to("cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32), device="cuda")
    y = lib.tensor(rng.integers(0, 10, batch), device="cuda")

    def step():
        opt.zero_grad()
        lib.nn.functional.nll_loss(model(x), y).backward()
        opt.step()

    return _burst(step, lib.cuda.synchronize, BURST["net_step"])


def lstm_call(lib_name: str, how: str, batch: int, hidden: int, info: str):
    """The seed's LSTM cell (inference, :mod:`.bench_fusion`'s) on cuda, run as ``how`` says (``eager``, ``fused``,
    ``script``), checked against numpy in float64 first."""
    lib = bench_fusion._bind(lib_name)
    arrays = _lstm_inputs(batch, hidden)
    args = _map(lambda a: lib.from_numpy(a).to("cuda"), arrays)
    fn = bench_fusion.lstm_cell if lib_name == "toolkit" else bench_fusion.torch_lstm_cell
    run = _prepare(lib, how, fn, args, info)
    _check_close(_map(lambda t: t.cpu(), run(*args)),
                 _numpy_lstm_cell(*_map(lambda a: a.astype(np.float64), arrays)), f"lstm_cell, {lib_name} {how}")
    return _burst(lambda: run(*args), lib.cuda.synchronize, BURST["lstm"])


# -- compile and load time of a CUDA fusion group, each in a fresh toolkit-only process --------------------------
def _compile_child(case: str, size, fn_src: str, steady_repeat: int) -> None:
    """Run as the whole program of a fresh interpreter (nothing imported before): time importing numba.cuda, its
    start-up (context, first kernel), ``import toolkit``, the profiling call, the call that compiles (or loads) the
    CUDA fusion kernels, and the steady state, each call followed by a device synchronization; print them as JSON
    with the kernels' kinds and the generated files the cache directory holds afterwards."""
    import json
    import os
    import time
    import timeit
    from pathlib import Path

    import numpy as np

    t0 = time.perf_counter()
    from numba import cuda

    t_numba = time.perf_counter() - t0

    def one(a):
        a[0] += 1.0

    t0 = time.perf_counter()
    d = cuda.to_device(np.zeros(1, np.float32))
    cuda.jit(one)[1, 1](d)  # the context and numba.cuda's first compile, paid once per process
    cuda.synchronize()
    t_init = time.perf_counter() - t0
    t0 = time.perf_counter()
    import toolkit as tk

    t_toolkit = time.perf_counter() - t0
    ns = {"toolkit": tk}
    exec(fn_src, ns)
    tk.manual_seed(0)
    if case == "chain":
        fn, args = ns["_chain"], (tk.rand(size, device="cuda"),)
    else:
        batch, hidden = size
        fn = ns["lstm_cell"]
        args = tuple(tk.randn(*s, device="cuda") * 0.1 for s in ((batch, hidden), (batch, hidden), (batch, hidden),
                                                                 (4 * hidden, hidden), (4 * hidden, hidden),
                                                                 (4 * hidden,), (4 * hidden,)))
        args = (args[0], args[1:3], *args[3:])

    def call():
        traced(*args)
        tk.cuda.synchronize()

    traced = tk.jit.trace(fn, args)
    t0 = time.perf_counter()
    call()  # profiling run: the plain graph, recording types
    t_profile = time.perf_counter() - t0
    t0 = time.perf_counter()
    call()  # builds the plan: passes, fuse, generate source, compile or load each kernel, run
    t_first = time.perf_counter() - t0
    steady = min(timeit.repeat(call, number=1, repeat=steady_repeat))
    kernels = [type(k).__name__ for k in traced.graph_for(*args).kernels]
    cached = Path(os.environ["TOOLKIT_CACHE_DIR"], "kernels")
    print(json.dumps({"numba_import": t_numba, "cuda_init": t_init, "toolkit_import": t_toolkit,
                      "profile": t_profile, "first": t_first, "steady": steady, "kernels": kernels,
                      "sources": len(list(cached.glob("*cuda_fused*.py"))),
                      "machine_code": len(list(cached.glob("__pycache__/*cuda_fused*")))}))


def _spawn_compile(case: str, size, cache: str) -> dict:
    """``_compile_child`` in a new interpreter with ``TOOLKIT_CACHE_DIR=cache``; torch is never imported there."""
    env = dict(os.environ, TOOLKIT_CACHE_DIR=cache, **NUMBA_ENV)
    fn_src = inspect.getsource(_chain) + "\n\n" + inspect.getsource(bench_fusion.lstm_cell)
    code = (textwrap.dedent(inspect.getsource(_compile_child))
            + f"\n_compile_child({case!r}, {size!r}, {fn_src!r}, {3 if SMALL else 100})\n")
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=900)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 900 s"}
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _overhead(r: dict) -> float:
    return r["first"] - r["steady"]


def _overhead_cell(r: dict) -> str:
    """The first call's cost over a steady call, with the first call itself (the simulator's noise can exceed it)."""
    return f"{fmt(max(0.0, _overhead(r))).strip()} (first call {fmt(r['first']).strip()})"


def compile_times(cases: dict, repeat: int) -> list:
    """Per case, the best of ``repeat`` fresh cache directories: the first process compiles, the second loads
    (or the pair of results of the first directory whose processes failed)."""
    rows = []
    for title, (case, size) in cases.items():
        pairs = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="toolkit-bench-cuda-cache-") as cache:
                first = _spawn_compile(case, size, cache)
                pairs.append((first, _spawn_compile(case, size, cache) if "error" not in first else first))
            if "error" in pairs[-1][0] or "error" in pairs[-1][1]:
                rows.append((title, *pairs[-1]))
                break
        else:
            rows.append((title, min((c for c, _ in pairs), key=_overhead), min((ld for _, ld in pairs), key=_overhead)))
    return rows


# -- tables ------------------------------------------------------------------------------------------------------
def _per_call(t: Timing, n: int) -> Timing:
    return Timing([s / n for s in t.samples], t.threads, t.error)


def _measure(variants: list, burst: int) -> dict:
    """Seconds per call of each variant, in processes of its own, rounds interleaved."""
    rounds, repeat = SAMPLING
    return {k: _per_call(v, burst) for k, v in measure(variants, rounds, repeat).items()}


def _times(case: str, libs: tuple, *args) -> dict:
    """Seconds per call of ``case`` for each library, one variant each."""
    return _measure([Variant(lib, f"{HERE}:{case}", (lib, *args)) for lib in libs], BURST[case])


def _gb_s(nbytes: int, t: Timing) -> float:
    return nbytes / t.best / 1e9 if t.samples else float("nan")


def _rate(x: float) -> str:
    return "n/a" if x != x else f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _share(x: float, of: float) -> str:
    return f"{x / of:.0%}" if x == x and of == of and of > 0 else "n/a"


def _bandwidth_rows(libs: tuple, peak_gb_s: float, none: Timing) -> list:
    n = SIZES["chain"]
    moved = 2 * n * 4  # one read and one write of float32: the copy's traffic and the chain's alike
    mem = _measure([Variant("numba", f"{HERE}:memcpy", (n,), env=NUMBA_ENV)], BURST["memcpy"])["numba"]
    copies = _times("copy", libs, n)
    chains = _times("chain", libs, n)
    measured = [g for g in (_gb_s(moved, t) for t in (mem, *copies.values())) if g == g]
    yard = max(measured, default=float("nan"))  # the GPU's copy bandwidth: the fastest copy measured
    peak = f" = {_share(_gb_s(moved, mem), peak_gb_s)} of the {peak_gb_s:.0f} GB/s peak from clocks" \
        if peak_gb_s == peak_gb_s else ""
    tk_copy, tt_copy = copies["toolkit"], copies.get("torch", none)
    tk, tt = chains["toolkit"], chains.get("torch", none)
    chain_gb = _gb_s(moved, tk)
    meets = "n/a" if chain_gb != chain_gb or yard != yard or SIMULATED else "yes" if chain_gb >= 0.7 * yard else "no"
    of_peak = f"; {_share(chain_gb, peak_gb_s)} of peak from clocks" if peak_gb_s == peak_gb_s else ""
    return [
        f"| device-to-device copy, {n:,} float32, the driver's memcpy (numba.cuda alone) | {cell(mem)} | - | "
        f"{_rate(_gb_s(moved, mem))} GB/s{peak} |",
        f"| `y.copy_(x)`, {n:,} float32 | {cell(tk_copy)} | {cell(tt_copy)} | toolkit {_rate(_gb_s(moved, tk_copy))} "
        f"GB/s, torch {_rate(_gb_s(moved, tt_copy))} GB/s; measured copy bandwidth {_rate(yard)} GB/s |",
        f"| fused chain `(x * 2 + 1).sigmoid() * x - 0.5`, {n:,} float32 | {cell(tk)} | {cell(tt)} | toolkit "
        f"{_rate(chain_gb)} GB/s = {_share(chain_gb, yard)} of measured copy bandwidth (>= 70%: {meets}){of_peak}; "
        f"torch {_rate(_gb_s(moved, tt))} GB/s |",
    ]


def _rows(libs: tuple, peak_gb_s: float, none: Timing) -> list:
    rows = _bandwidth_rows(libs, peak_gb_s, none)
    n = SIZES["matmul"]
    t = _times("matmul", libs, n)
    tk, tt = t["toolkit"], t.get("torch", none)
    gflops = {k: _rate(2 * n ** 3 / v.best / 1e9) for k, v in (("toolkit", tk), ("torch", tt))}
    rows.append(f"| matmul {n}x{n} float32 | {cell(tk)} | {cell(tt)} | toolkit {gflops['toolkit']} GFLOP/s, torch "
                f"{gflops['torch']} GFLOP/s; time ratio {ratio(tk, tt)} |")

    batch = SIZES["net_batch"]
    if SIMULATED:
        rows.append(f"| seed Net training step, batch {batch} | not run: under the simulator its convolutions' "
                    "im2col matmuls alone take minutes per step (tests/cuda skips this Net there too) | - | - |")
        return rows
    t = _times("net_step", libs, batch)
    tk, tt = t["toolkit"], t.get("torch", none)
    rows.append(f"| seed Net training step, batch {batch} | {cell(tk)} | {cell(tt)} | time ratio {ratio(tk, tt)} |")
    return rows


LSTM_COLUMNS = (("toolkit traced (fused)", "toolkit", "fused"), ("toolkit eager", "toolkit", "eager"),
                ("torch eager", "torch", "eager"), ("torch.jit.script", "torch", "script"))


def _lstm_table(torch_gpu: bool, none: Timing) -> list:
    batch, hidden = SIZES["lstm"]
    columns = [c for c in LSTM_COLUMNS if torch_gpu or c[1] == "toolkit"]
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-cuda-") as tmp:
        info = os.path.join(tmp, "info.jsonl")
        t = _measure([Variant(label, f"{HERE}:lstm_call", (lib, how, batch, hidden, info))
                      for label, lib, how in columns], BURST["lstm"])
        groups = sorted(set(_recorded(info).get("groups", []))) or ["?"]
    t = {label: t.get(label, none) for label, _, _ in LSTM_COLUMNS}
    fused = t["toolkit traced (fused)"]
    return ["| case | " + " | ".join(label for label, _, _ in LSTM_COLUMNS)
            + " | fused / torch.jit.script | fused / toolkit eager |", "|---" * 7 + "|",
            f"| LSTM cell, batch {batch}, hidden {hidden} ({'/'.join(map(str, groups))} fusion groups) | "
            + " | ".join(cell(v) for v in t.values())
            + f" | {ratio(fused, t['torch.jit.script'])} | {ratio(fused, t['toolkit eager'])} |"]


def _compile_table() -> list:
    batch, hidden = SIZES["lstm"]
    n = SIZES["compile_chain"]
    repeat = 1 if SMALL else max(1, 5 * ROUNDS // 3)
    cases = {f"fused chain, {n:,} float32": ("chain", n),
             f"LSTM cell, batch {batch}, hidden {hidden}": ("lstm", (batch, hidden))}
    out = [f"Compile and load are the call that builds the plan (passes, fusion, CUDA source generation, numba.cuda "
           "compile or cache load, run) minus the best steady-state call, each followed by a device synchronization, "
           "in a fresh process with an empty `TOOLKIT_CACHE_DIR` (compile) and then a second process on the same "
           "directory (load); torch is not imported there. Before it each process imports numba.cuda and starts it "
           "(context and a first one-line kernel), listed on their own. The last column counts the "
           "generated CUDA kernel sources and the machine-code files numba cached beside them after the second "
           f"process. Best of {repeat} fresh directories.", "",
           "| case | compile (1st process) | load (2nd process) | steady call | import numba.cuda "
           "| numba.cuda start-up | "
           "kernels | cached: sources / machine code |", "|---" * 8 + "|"]
    uncached = False
    for title, c, ld in compile_times(cases, repeat):
        if "error" in c or "error" in ld:
            why = (c.get("error") or ld.get("error")).replace("|", "/")
            out.append(f"| {title} | n/a ({why}) | n/a | n/a | n/a | n/a | - | - |")
            continue
        uncached |= ld["sources"] > 0 and ld["machine_code"] == 0
        kinds = ", ".join(f"{k} x{c['kernels'].count(k)}" for k in sorted(set(c["kernels"]))) or "none"
        out.append(f"| {title} | {_overhead_cell(c)} | {_overhead_cell(ld)} | "
                   f"{fmt(min(c['steady'], ld['steady'])).strip()} | "
                   f"{fmt(min(c['numba_import'], ld['numba_import'])).strip()} | "
                   f"{fmt(min(c['cuda_init'], ld['cuda_init'])).strip()} | {kinds} | "
                   f"{ld['sources']} / {ld['machine_code']} |")
    if uncached and not SIMULATED:
        out += ["", "numba cached no machine code beside the generated CUDA kernel sources: the second process "
                    "compiles them again from the cached source, so its load time is a compile time."]
    return out


def _torch_note(torch: dict) -> str:
    if "error" in torch:
        return f"PyTorch CUDA not available (its probe failed: {torch['error']})"
    if torch.get("gpu"):
        return f"PyTorch {torch['version']} with CUDA {torch['cuda_build']}"
    if SIMULATED:
        return "PyTorch has no CUDA simulator, so its columns are n/a"
    if not torch.get("cuda_build"):
        return f"PyTorch CUDA not installed (torch {torch['version']} is a CPU-only build), so its columns are n/a"
    return (f"PyTorch {torch['version']} is built with CUDA {torch['cuda_build']} but sees no GPU, so its columns "
            "are n/a")


def main() -> str:
    head = ["### CUDA", "",
            "Target: a fused elementwise chain at least 70% of the GPU's measured copy bandwidth; matmul, the seed's "
            "Net training step and the seed's LSTM cell against PyTorch CUDA; a new CUDA fusion group's compile "
            "and disk-cache load times reported.", ""]
    tk = run_json(f"{HERE}:probe", "toolkit")
    if "error" in tk:
        return "\n".join(head + [f"Not run: toolkit's CUDA probe failed ({tk['error']}).", ""])
    if not tk["gpu"]:
        return "\n".join(head + ["No GPU on this machine: the CUDA benchmarks did not run. The CUDA kernels are "
                                 "tested under numba's CUDA simulator (tests/cuda), on small shapes; "
                                 "`TOOLKIT_CUDA_SIMULATOR=1` runs this section there at tiny sizes.", ""])
    torch = run_json(f"{HERE}:probe", "torch")
    torch_gpu = bool(torch.get("gpu")) and not SIMULATED
    libs = ("toolkit", "torch") if torch_gpu else ("toolkit",)
    none = Timing([], error="PyTorch CUDA not available")
    if tk["simulated"]:
        device = ("numba's CUDA simulator (CUDA kernels as Python threads): every row runs at tiny sizes, one round, "
                  "to check that its code runs and its results are right; the times, GB/s and GFLOP/s are not a "
                  "measurement of anything, and there is no peak bandwidth to read from the clocks")
    else:
        device = tk["name"] + (" (`TOOLKIT_BENCH_CUDA_SMALL=1`: tiny sizes, one round, not a measurement)"
                               if SMALL else "")
    lines = head + [
        f"Device: {device}. {_torch_note(torch)}. Versions: numba {_version('numba')}, numpy {np.__version__}. Each "
        "library in fresh processes of its own, rounds interleaved; a timed sample is a burst of calls ("
        + ", ".join(f"{k} {v}" for k, v in BURST.items()) + ") and one device synchronization, given per call as "
        "best / median; GB/s, GFLOP/s and time ratios (toolkit over torch) from the best figures. The measured "
        "copy bandwidth, the chain's yardstick, is the fastest of the driver's device-to-device memcpy, toolkit's "
        "`copy_` and PyTorch's `copy_` of the same bytes (one read and one write per element, as the chain).", "",
        "| case | toolkit | torch | figure |", "|---|---|---|---|", *_rows(libs, tk["bandwidth"], none), "",
        "#### CUDA: seed's LSTM cell, inference", "", *_lstm_table(torch_gpu, none), "",
        "#### CUDA: first-call compile time of a fusion group and disk-cache load", "", *_compile_table(), "",
    ]
    if tk["simulated"]:
        lines += ["Under the simulator numba.cuda compiles nothing (a kernel is its Python function): compile and load "
                  "there are source generation and import only, and no machine code is cached.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
