"""``make bench``: every benchmark, side by side with numpy and PyTorch CPU, each library in its own processes.

Prints markdown tables; ``--write`` also stores them in benchmarks/RESULTS.md
with the machine they came from. ``--suite NAME`` (``core``, ``nn``, ``train``, ``jit``, ``fusion``, ``profiler``,
``script``, ``tensorboard``, ``graph_view``, ``distributed``, ``rpc``, ``cuda``, ``serialization``, ``onnx``, ``quantized``, ``extensions``) runs one suite only and
just prints it. ``--busy N`` runs the benchmarks beside N processes that each keep a core busy (a loaded
machine: a parallel kernel must not lose to its serial form there; read the medians).
``TOOLKIT_BENCH_ROUNDS`` and ``TOOLKIT_BENCH_REPEAT`` set the rounds of fresh processes and the timed
samples in each (3 and 5 by default).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import (  # noqa: E402
    bench_core,
    bench_cuda,
    bench_distributed,
    bench_extensions,
    bench_fusion,
    bench_graph_view,
    bench_jit,
    bench_nn,
    bench_onnx,
    bench_profiler,
    bench_quantized,
    bench_rpc,
    bench_script,
    bench_serialization,
    bench_tensorboard,
    bench_train,
)
from benchmarks.common import machine  # noqa: E402
from benchmarks.harness import REPEAT, ROUNDS  # noqa: E402

SUITES = [bench_core, bench_nn, bench_train, bench_jit, bench_fusion, bench_profiler, bench_script, bench_tensorboard,
          bench_graph_view, bench_distributed, bench_rpc, bench_cuda, bench_serialization, bench_onnx, bench_quantized,
          bench_extensions]


def _suites() -> list:
    if "--suite" not in sys.argv:
        return SUITES
    i = sys.argv.index("--suite")
    names = {s.__name__.rsplit(".", 1)[-1].removeprefix("bench_"): s for s in SUITES}
    name = sys.argv[i + 1] if i + 1 < len(sys.argv) else ""
    if name not in names:
        sys.exit(f"--suite takes one of {', '.join(names)}, got {name!r}")
    if "--write" in sys.argv:
        sys.exit("--write records every suite in RESULTS.md; run it without --suite")
    return [names[name]]


#: Sections of RESULTS.md written by hand (a profile's findings), from this heading to the end: ``--write``
#: keeps them below the new tables instead of dropping them.
KEPT_FROM = "\n## Where the time goes (profile)"


def _kept_sections(path: str) -> str:
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        return ""
    i = old.find(KEPT_FROM)
    return "" if i < 0 else "\n" + old[i:].lstrip("\n")


def _busy_count() -> int:
    if "--busy" not in sys.argv:
        return 0
    i = sys.argv.index("--busy")
    value = sys.argv[i + 1] if i + 1 < len(sys.argv) else ""
    if not value.isdigit():
        sys.exit(f"--busy takes a number of busy processes, got {value!r}")
    if "--write" in sys.argv:
        sys.exit("--write records a quiet machine's figures; run --busy without it")
    return int(value)


@contextlib.contextmanager
def _busy_processes(n: int):
    """``n`` processes spinning on a core each until the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main() -> None:
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__)
        return
    suites = _suites()
    busy = _busy_count()
    parts = [f"Machine: {machine()}  ", f"Date: {datetime.date.today().isoformat()}", ""]
    if busy:
        parts[1] += "  "
        parts.insert(2, f"Load: {busy} busy-loop processes beside the benchmarks")
    with _busy_processes(busy):
        for suite in suites:
            parts.append(suite.main())
    report = "\n".join(parts)
    print(report)
    if "--write" in sys.argv:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
        report += _kept_sections(path)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(
                "# Benchmark results\n\nRecorded by `make bench` (`python benchmarks/run.py --write`). Each library "
                "is timed in a fresh process of its own (toolkit and torch are never imported together: their "
                "thread pools would contend for the cores and make torch look two to three times slower than it "
                f"is), {ROUNDS} rounds with the libraries' processes interleaved, {REPEAT} timed samples per "
                "process after one warm-up call, each call's result discarded before the next. Cells are "
                "`best / median` seconds per call over all samples; ratios compare the best figures. Each table "
                "says which threads each library ran with, as a user gets them by default (torch: its default "
                "intra-op threads; toolkit: numba's and OpenBLAS's defaults).\n\n"
                "The seed's numpy two-layer network uses float64 (`np.random.randn`) and its tensor version float32 "
                "(`torch.FloatTensor`): the first row compares them as the seed writes them, the second with numpy "
                "in float32 too.\n\n" + report)
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
