"""``python -m toolkit.utils.bottleneck script.py [args...]``: first look at where a script spends its time.

As ``torch.utils.bottleneck``: the script runs once under cProfile and once
under the op profiler; both summaries are printed, and the cProfile stats are
written to a ``.prof`` file that snakeviz opens (``--prof-out PATH`` picks it).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import runpy
import sys

import toolkit
from toolkit.autograd import profiler

from ...profiler.python import snakeviz_command, summary, write_pstats

DESCRIPTION = "bottleneck is a tool that can be used as an initial step for debugging bottlenecks in your program."


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m toolkit.utils.bottleneck", description=DESCRIPTION)
    p.add_argument("scriptfile", type=str, help="Path to the script to be run. Usually run with `python path/to/script`.")
    p.add_argument("args", type=str, nargs=argparse.REMAINDER, help="Command-line arguments to be passed to the script.")
    p.add_argument("--prof-out", default=None, help="where to write the cProfile stats (default: <script>.prof)")
    p.add_argument("--sort", default="tottime", help="cProfile sort key (default: tottime)")
    p.add_argument("--row-limit", type=int, default=15, help="rows per summary (default: 15)")
    return p


def _run(path: str, argv: list[str]) -> None:
    saved = sys.argv[:]
    sys.argv = [path] + argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
    finally:
        sys.argv = saved
        sys.path.pop(0)


def _banner(title: str) -> str:
    return f"{'-' * 80}\n  {title}\n{'-' * 80}"


def main(argv: list[str] | None = None) -> int:
    opts = _parser().parse_args(argv)

    script = opts.scriptfile
    prof_out = opts.prof_out or os.path.splitext(os.path.basename(script))[0] + ".prof"
    print(_banner("Environment Summary"))
    print(f"toolkit {toolkit.__version__}, Python {platform.python_version()} on {platform.platform()}")
    print("Running your script with cProfile")
    cp = cProfile.Profile()
    cp.enable()
    try:
        _run(script, opts.args)
    finally:
        cp.disable()
    write_pstats(cp, prof_out)
    print("Running your script with the toolkit profiler")
    with profiler.profile() as prof:
        _run(script, opts.args)
    print(_banner("cProfile output"))
    print(summary(prof_out, opts.sort, opts.row_limit))
    print(f"cProfile stats written to {prof_out}; view them with: {' '.join(snakeviz_command(prof_out))}\n")
    print(_banner("toolkit profiler output (top-level ops, by total CPU time)"))
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=opts.row_limit))
    return 0
