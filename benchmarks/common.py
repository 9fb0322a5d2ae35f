"""Formatting for the side-by-side benchmarks: tables of best and median seconds per call, ratios of the best,
and the machine they ran on. The timing itself is in :mod:`benchmarks.harness`."""

from __future__ import annotations

import os
import platform

from .harness import Timing, Variant


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


def per_library(setup: str, number: int, libs: tuple = ("toolkit", "torch"), *args) -> list[Variant]:
    """The same setup function for each library, one variant each (labelled by the library's name)."""
    return [Variant(lib, setup, (lib, *args), number) for lib in libs]


def cell(t: Timing) -> str:
    """``best / median`` of one variant, or why it has no figure."""
    if not t.samples:
        return f"n/a ({t.error.replace('|', '/')})" if t.error else "n/a"
    return f"{fmt(t.best).strip()} / {fmt(t.median).strip()}"


def ratio(a: Timing, b: Timing) -> str:
    """The ratio of the best figures, ``a`` over ``b``."""
    if not a.samples or not b.samples:
        return "n/a"
    return f"{a.best / b.best:.2f}x"


def threads_note(rows: list) -> str:
    """One line naming the thread settings each library ran with in its own process."""
    seen: dict = {}
    for _, times in rows:
        for label, t in times.items():
            if t.threads:
                seen.setdefault(label, t.threads)
    return "Threads: " + "; ".join(f"{k}: {v}" for k, v in seen.items()) if seen else ""


def table(title: str, rows: list[tuple[str, dict]], target: str, ref: str | None = None,
          extra: tuple = ()) -> str:
    """Rows of (case, {label: Timing}) as markdown: best / median per column, then the first column's
    ratio of best figures to ``ref`` (by default the second column) and to each label in ``extra``."""
    labels = list(dict.fromkeys(k for _, times in rows for k in times))
    rows = [(case, {k: times.get(k, Timing([])) for k in labels}) for case, times in rows]
    refs = [ref or (labels[1] if len(labels) > 1 else labels[0]), *extra]
    out = [f"### {title}", "", f"Target: {target}", "",
           "| case | " + " | ".join(f"{k} (best / median)" for k in labels) + " | "
           + " | ".join(f"ratio to {r}" for r in refs) + " |",
           "|---" * (len(labels) + len(refs) + 1) + "|"]
    for case, times in rows:
        mine = times[labels[0]]
        out.append(f"| {case} | " + " | ".join(cell(times[k]) for k in labels) + " | "
                   + " | ".join(ratio(mine, times[r]) for r in refs) + " |")
    note = threads_note(rows)
    return "\n".join(out) + ("\n\n" + note if note else "") + "\n"
