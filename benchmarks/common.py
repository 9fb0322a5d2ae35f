"""Timing helpers for the side-by-side benchmarks (best of several repeats, wall clock)."""

from __future__ import annotations

import os
import platform
import timeit


def best_time(fn, number: int, repeat: int = 5) -> float:
    """Seconds per call: the best of ``repeat`` runs of ``number`` calls."""
    fn()  # warm up (lazy compilation, caches)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def compare(fns: dict, number: int, repeat: int = 5) -> dict:
    """Best seconds per call of each function, with the libraries' runs interleaved.

    Interleaving (a, b, c, a, b, c, ...) keeps a slow phase of a shared
    machine from landing on one library only.
    """
    for fn in fns.values():
        fn()  # warm up (lazy compilation, caches)
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], timeit.timeit(fn, number=number) / number)
    return best


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def fmt(seconds: float) -> str:
    if seconds != seconds:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.3f} s "


def table(title: str, rows: list[tuple[str, dict]], target: str) -> str:
    """Rows of (case, {library: seconds}) as a markdown table with ratios to the reference."""
    libs = list(rows[0][1])
    out = [f"### {title}", "", f"Target: {target}", "", "| case | " + " | ".join(libs) + " | ratio |",
           "|---" * (len(libs) + 2) + "|"]
    for case, times in rows:
        ref = times[libs[1]] if len(libs) > 1 else times[libs[0]]
        ratio = times[libs[0]] / ref
        out.append(f"| {case} | " + " | ".join(fmt(times[k]).strip() for k in libs) + f" | {ratio:.2f}x |")
    return "\n".join(out) + "\n"
