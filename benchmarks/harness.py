"""Per-process timing: each library is timed in a fresh interpreter of its own, rounds interleaved.

Why: toolkit (numba's and OpenBLAS's threads) and PyTorch (its OpenMP pool) imported into one
process fight over the cores, and PyTorch then looks two to three times slower than it is. So
a benchmark is written as *variants*: one setup function per library (or per way of running
the work) that imports only what it needs and returns the callable to time. The harness runs
each variant in a new ``python -m benchmarks.worker`` process, round after round in turn
(toolkit, torch, toolkit, torch, ...), so that a busy phase of a shared machine does not land
on one library only, and reports the best and the median seconds per call over every round.

A setup function lives at module level in a ``benchmarks`` module that imports neither toolkit
nor torch at the top, and reaches its library through :func:`library`::

    def add_one(lib_name):
        lib = library(lib_name)
        a, b = lib.ones(1), lib.ones(1)
        return lambda: a + b

    times = measure([Variant("toolkit", "benchmarks.bench_core:add_one", ("toolkit",), number=20000),
                     Variant("torch", "benchmarks.bench_core:add_one", ("torch",), number=20000)])

The worker calls the returned function and throws each result away before the next call, so
no timed call pays for keeping earlier outputs alive.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Rounds (fresh processes per variant) and timed repeats inside each; ``--quick`` lowers both.
ROUNDS = int(os.environ.get("TOOLKIT_BENCH_ROUNDS", "3"))
REPEAT = int(os.environ.get("TOOLKIT_BENCH_REPEAT", "5"))


@dataclass(frozen=True)
class Variant:
    """One column of a benchmark row: ``setup`` (``"module:function"``) called with ``args`` in a fresh
    process returns the callable to time; each timed sample is ``number`` calls."""

    label: str
    setup: str
    args: tuple = ()
    number: int = 1
    env: dict = field(default_factory=dict)


@dataclass
class Timing:
    """Seconds per call of one variant over all rounds, and the thread settings its process ran with."""

    samples: list
    threads: str = ""
    error: str = ""

    @property
    def best(self) -> float:
        return min(self.samples) if self.samples else float("nan")

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")


def library(name: str):
    """The library a setup function was asked for (``toolkit``, ``torch`` or ``numpy``), imported now, in the
    worker process, so that no other library is ever loaded beside it."""
    return importlib.import_module(name)


def _spawn(mode: str, spec: dict, env: dict | None = None, timeout: float = 1800) -> dict:
    """``python -m benchmarks.worker MODE SPEC`` in a fresh process: its last line of output as a dict, or
    ``{"error": the last line of its stderr}`` when it failed or ran past ``timeout`` seconds."""
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    try:
        r = subprocess.run([sys.executable, "-m", "benchmarks.worker", mode, json.dumps(spec)], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        return {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]}
    return json.loads(lines[-1])


def _run_one(v: Variant, repeat: int) -> dict:
    return _spawn("time", {"setup": v.setup, "args": list(v.args), "number": v.number, "repeat": repeat}, v.env)


def run_json(target: str, *args, timeout: float = 1800) -> dict:
    """Call ``target`` (``"module:function"``) with ``args`` in a fresh process and return the JSON-able dict it
    returns, or ``{"error": ...}``.

    For measurements that are not "seconds per call of one callable" (a profiler's on and off steps interleaved
    in one process, a training loop's per-step log, a device probe). As for timed variants, the process loads
    only the library that function imports, and a function that imports both toolkit and torch gets an error.
    """
    return _spawn("call", {"setup": target, "args": list(args)}, timeout=timeout)


def measure(variants: list[Variant], rounds: int | None = None, repeat: int | None = None) -> dict[str, Timing]:
    """Time every variant in its own fresh process, ``rounds`` times, interleaved; seconds per call."""
    rounds = ROUNDS if rounds is None else rounds
    repeat = REPEAT if repeat is None else repeat
    out = {v.label: Timing([]) for v in variants}
    for _ in range(rounds):
        for v in variants:
            res = _run_one(v, repeat)
            t = out[v.label]
            if "error" in res:
                t.error = res["error"]
                continue
            t.samples.extend(res["samples"])
            t.threads = res["threads"]
    return out


def thread_settings() -> str:
    """The threads this process's libraries use, as the worker reports them next to its figures."""
    parts = []
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        parts.append(f"torch {torch.get_num_threads()} intra-op threads")
    if "toolkit" in sys.modules:
        importlib.import_module("numba")  # toolkit's own dependency: its thread count is what toolkit runs with
    if "numba" in sys.modules:
        parts.append(f"numba {sys.modules['numba'].get_num_threads()} threads")
    try:
        from threadpoolctl import threadpool_info  # optional: scikit-learn brings it
    except ImportError:
        return ", ".join(parts)
    for pool in threadpool_info():
        kernels = pool.get("architecture")  # OpenBLAS's kernel set: OPENBLAS_CORETYPE in the environment picks it
        parts.append(f"{pool.get('internal_api', pool.get('user_api'))} {pool.get('num_threads')} threads"
                     + (f" ({kernels} kernels)" if kernels else ""))
    return ", ".join(dict.fromkeys(parts))
