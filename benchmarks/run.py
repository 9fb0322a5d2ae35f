"""``make bench``: every benchmark, side by side with numpy and PyTorch CPU, in one run.

Prints markdown tables; ``--write`` also stores them in benchmarks/RESULTS.md
with the machine they came from.
"""

from __future__ import annotations

import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import bench_core, bench_jit, bench_nn  # noqa: E402
from benchmarks.common import machine  # noqa: E402

SUITES = [bench_core, bench_nn, bench_jit]


def main() -> None:
    parts = [f"Machine: {machine()}  ", f"Date: {datetime.date.today().isoformat()}", ""]
    for suite in SUITES:
        parts.append(suite.main())
    report = "\n".join(parts)
    print(report)
    if "--write" in sys.argv:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(
                "# Benchmark results\n\nRecorded by `make bench` (`python benchmarks/run.py --write`). Each figure is "
                "the best of several runs, with the libraries' runs interleaved; on a shared 2-core machine repeated "
                "runs of this script moved single figures by up to a third, so compare ratios from one run.\n\n"
                "The seed's numpy two-layer network uses float64 (`np.random.randn`) and its tensor version float32 "
                "(`torch.FloatTensor`): the first row compares them as the seed writes them, the second with numpy "
                "in float32 too.\n\n" + report)
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
